package modules

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

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

// upstreamPasswords is one case of testdata/set-passwords-upstream.json
// (scripts/goldens/set-passwords.py: upstream's cc_set_passwords.handle on
// the same golden cases, with recorders for its distro calls).
type upstreamPasswords struct {
	Passwords [][3]string       `json:"passwords"` // user, text|hash|random, value
	Expired   []string          `json:"expired"`
	Services  [][]string        `json:"services"`
	SSHDFiles map[string]string `json:"sshd_files"`
	Failed    bool              `json:"failed"`
}

// TestSetPasswordsUpstream runs set_passwords on every golden case and
// requires upstream's decisions: which users get which password (a text
// one verifies against the hash written, a hash is written as given, a
// random one is the one printed on the console), who is expired in which
// order, the sshd configuration files, sshd's restart on a booted system
// (in the initramfs cloudroot restarts nothing), and failure.
func TestSetPasswordsUpstream(t *testing.T) {
	b, err := os.ReadFile("testdata/set-passwords-upstream.json")
	if err != nil {
		t.Fatal(err)
	}
	var up map[string]upstreamPasswords
	if err := json.Unmarshal(b, &up); err != nil {
		t.Fatal(err)
	}
	for name, want := range up {
		t.Run(name, func(t *testing.T) {
			g := goldenSetup(t, filepath.Join("testdata/modgolden/set_passwords", name))
			runErr := SetPasswords.Run(t.Context(), g.c)
			if (runErr != nil) != want.Failed && !slices.ContainsFunc(want.Passwords, func(p [3]string) bool { return p[0] == "nosuchuser" }) {
				t.Errorf("error %v, upstream failed=%v", runErr, want.Failed)
			}
			random := map[string]string{}
			for _, l := range strings.Split(g.Console.String(), "\n") {
				if u, p, ok := strings.Cut(l, ":"); ok && len(p) == 20 {
					random[u] = p
				}
			}
			for _, p := range want.Passwords {
				user, kind, val := p[0], p[1], p[2]
				sh, err := g.c.Root.LookupShadow(user)
				if err != nil {
					continue // upstream's chpasswd fails for a missing user too
				}
				switch kind {
				case "hash":
					if sh.Hash != val {
						t.Errorf("%s: hash %q, want %q", user, sh.Hash, val)
					}
				case "text", "random":
					if kind == "random" {
						val = random[user]
					}
					if got, _ := target.SHA512Crypt(val, sh.Hash); val == "" || got != sh.Hash {
						t.Errorf("%s: %s password does not verify against %q", user, kind, sh.Hash)
					}
				}
			}
			var expired []string
			for _, l := range g.Runner.Log {
				if u, ok := strings.CutPrefix(l, "passwd --expire "); ok {
					expired = append(expired, u)
				}
			}
			if len(expired) == 0 { // busybox: the shadow entries themselves
				for _, u := range want.Expired {
					if sh, err := g.c.Root.LookupShadow(u); err == nil && sh.LastChange == 0 {
						expired = append(expired, u)
					}
				}
			}
			if diff := cmp.Diff(want.Expired, expired, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("expired (-upstream +cloudroot):\n%s", diff)
			}
			for rel, content := range want.SSHDFiles {
				if why, ok := knownSSHDDifferences[name]; ok {
					t.Logf("/etc/ssh/%s: not compared: %s", rel, why)
					continue
				}
				// cloud-init rewrites every line without its indentation;
				// cloudroot keeps the lines it does not change as they were.
				if got := readFile(t, g.c, "/etc/ssh/"+rel); trimLines(got) != trimLines(content) {
					t.Errorf("/etc/ssh/%s (-upstream +cloudroot):\n%s", rel, cmp.Diff(content, got))
				}
			}
			var restarts []string
			for _, l := range g.Runner.Log {
				if strings.Contains(l, "restart") {
					restarts = append(restarts, l)
				}
			}
			var wantRestarts []string
			if g.c.Booted {
				for _, s := range want.Services {
					cmd, err := g.c.Facts().Services().Command(s[0], s[1], s[2:]...)
					if err != nil {
						t.Fatal(err)
					}
					wantRestarts = append(wantRestarts, strings.Join(cmd.Argv, " "))
				}
			}
			if diff := cmp.Diff(wantRestarts, restarts, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("restarts (-upstream +cloudroot):\n%s", diff)
			}
		})
	}
}

// knownSSHDDifferences are the cases where cloudroot deliberately writes
// sshd_config differently (docs/compatibility.md).
var knownSSHDDifferences = map[string]string{
	"match-append-ubuntu": "cloudroot inserts the new line before the first Match block; cloud-init appends it inside that block",
}

func trimLines(s string) string {
	var out []string
	for l := range strings.SplitSeq(s, "\n") {
		out = append(out, strings.TrimSpace(l))
	}
	return strings.Join(out, "\n")
}
