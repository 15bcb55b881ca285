package modules

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"unicode"

	"github.com/cloudroot/cloudroot/pkg/target"
)

// TestSetPasswordsSecrets checks what the golden files mask: the hashes
// verify against the passwords, the random password printed on the console
// is the one set and has every character class, and no password reaches
// the log, the command output or a warning.
func TestSetPasswordsSecrets(t *testing.T) {
	r := accountsRoot(t, "")
	for _, u := range []string{"user1", "user2"} {
		appendFile(t, r.Dir()+"/etc/passwd", u+":x:1001:1001::/home/"+u+":/bin/sh\n")
		appendFile(t, r.Dir()+"/etc/shadow", u+":!:19800:0:99999:7:::\n")
	}
	cfg := Config{"chpasswd": map[string]any{"expire": false, "users": []any{
		map[string]any{"name": "user1", "password": "s3cret-text", "type": "text"},
		map[string]any{"name": "user2", "type": "RANDOM"},
	}}}
	c, warnings := accountsContext(t, r, cfg, nil)
	var logs, console, out bytes.Buffer
	c.Log = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	c.Console, c.Out = &console, &out
	if err := SetPasswords.Run(t.Context(), c); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(console.String()), "\n")
	if len(lines) != 3 || lines[0] != "Set the following 'random' passwords" || !strings.HasPrefix(lines[2], "user2:") {
		t.Fatalf("console = %q", console.String())
	}
	random := strings.TrimPrefix(lines[2], "user2:")
	classes := map[string]bool{}
	for _, ch := range random {
		switch {
		case unicode.IsDigit(ch):
			classes["digit"] = true
		case unicode.IsLower(ch):
			classes["lower"] = true
		case unicode.IsUpper(ch):
			classes["upper"] = true
		default:
			classes["punct"] = true
		}
	}
	if len(random) != 20 || len(classes) != 4 {
		t.Errorf("random password %q: length %d, classes %v", random, len(random), classes)
	}
	for user, pw := range map[string]string{"user1": "s3cret-text", "user2": random} {
		sh, err := r.LookupShadow(user)
		if err != nil {
			t.Fatal(err)
		}
		got, err := target.SHA512Crypt(pw, sh.Hash)
		if err != nil || got != sh.Hash {
			t.Errorf("%s: hash %q does not verify (%v)", user, sh.Hash, err)
		}
		if sh.LastChange == 0 {
			t.Errorf("%s expired although expire is false", user)
		}
		for what, s := range map[string]string{"log": logs.String(), "output": out.String(), "warnings": strings.Join(*warnings, "\n")} {
			if strings.Contains(s, pw) {
				t.Errorf("%s's password in the %s", user, what)
			}
		}
	}
}

func TestRandomPasswordLength(t *testing.T) {
	for range 50 {
		p, err := randomPassword(20)
		if err != nil || len(p) != 20 {
			t.Fatalf("randomPassword = %q, %v", p, err)
		}
	}
}

// TestSetPasswordsAlwaysRotates is the OpenStack admin_pass case: with
// `[set-passwords, always]` in cloud_init_modules, a new password in the
// (re-rendered) config applies on the next boot of the same instance.
func TestSetPasswordsAlwaysRotates(t *testing.T) {
	r := accountsRoot(t, "")
	appendFile(t, r.Dir()+"/etc/passwd", "admin:x:1001:1001::/home/admin:/bin/sh\n")
	appendFile(t, r.Dir()+"/etc/shadow", "admin:!:19800:0:99999:7:::\n")
	for _, pw := range []string{"first-pass", "second-pass"} {
		cfg := Config{
			"cloud_init_modules": []any{[]any{"set-passwords", "always"}},
			"chpasswd":           map[string]any{"expire": false, "users": []any{map[string]any{"name": "admin", "password": pw, "type": "text"}}},
		}
		c, _ := accountsContext(t, r, cfg, nil)
		rep := RunStage(t.Context(), c, StageInit)
		if len(rep.Errors) > 0 || len(rep.Ran) != 1 {
			t.Fatalf("%s: ran %v, errors %v", pw, rep.Ran, rep.Errors)
		}
		sh, err := r.LookupShadow("admin")
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := target.SHA512Crypt(pw, sh.Hash); got != sh.Hash {
			t.Errorf("after the boot with %s the hash does not verify", pw)
		}
	}
}
