package users

import (
	"bytes"
	"context"
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

	"github.com/cloudroot/cloudroot/pkg/modules"
	"github.com/cloudroot/cloudroot/pkg/modules/internal/famtest"
	"github.com/cloudroot/cloudroot/pkg/modules/internal/modtest"
	"github.com/cloudroot/cloudroot/pkg/target"
)

// TestSetPasswordsSecrets checks what the golden files mask: the hashes
// verify against the passwords, the random password printed on the console
// is the one set and has every character class, and no password reaches
// the log, the command output or a warning.
func TestSetPasswordsSecrets(t *testing.T) {
	r := modtest.AccountsRoot(t, "")
	for _, u := range []string{"user1", "user2"} {
		modtest.AppendFile(t, r.Dir()+"/etc/passwd", u+":x:1001:1001::/home/"+u+":/bin/sh\n")
		modtest.AppendFile(t, r.Dir()+"/etc/shadow", u+":!:19800:0:99999:7:::\n")
	}
	cfg := modules.Config{"chpasswd": map[string]any{"expire": false, "users": []any{
		map[string]any{"name": "user1", "password": "s3cret-text", "type": "text"},
		map[string]any{"name": "user2", "type": "RANDOM"},
	}}}
	c, warnings := famtest.Accounts(t, r, cfg, nil)
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
	r := modtest.AccountsRoot(t, "")
	modtest.AppendFile(t, r.Dir()+"/etc/passwd", "admin:x:1001:1001::/home/admin:/bin/sh\n")
	modtest.AppendFile(t, r.Dir()+"/etc/shadow", "admin:!:19800:0:99999:7:::\n")
	for _, pw := range []string{"first-pass", "second-pass"} {
		cfg := modules.Config{
			"cloud_init_modules": []any{[]any{"set-passwords", "always"}},
			"chpasswd":           map[string]any{"expire": false, "users": []any{map[string]any{"name": "admin", "password": pw, "type": "text"}}},
		}
		c, _ := famtest.Accounts(t, r, cfg, nil)
		c.Modules = Modules()
		rep := modules.RunStage(t.Context(), c, modules.StageInit)
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
			g := famtest.Setup(t, filepath.Join("testdata/modgolden/set_passwords", name))
			runErr := SetPasswords.Run(t.Context(), g.C)
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
				sh, err := g.C.Root.LookupShadow(user)
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
					if sh, err := g.C.Root.LookupShadow(u); err == nil && sh.LastChange == 0 {
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
				if got := famtest.ReadFile(t, g.C, "/etc/ssh/"+rel); trimLines(got) != trimLines(content) {
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
			if g.C.Booted {
				for _, s := range want.Services {
					cmd, err := g.C.Facts().Services().Command(s[0], s[1], s[2:]...)
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

func TestSSHPwauth(t *testing.T) {
	tests := []struct {
		name      string
		sshd      string // "" = no sshd_config
		value     any
		wantFile  string
		wantValue string // content of wantFile, "" = unchanged
	}{
		{"dropin", "Include /etc/ssh/sshd_config.d/*.conf\nUsePAM yes\n", false, SSHDCloudInitConf, "PasswordAuthentication no\n"},
		{"update line", "UsePAM yes\npasswordauthentication no\n", true, SSHDConfig, "UsePAM yes\npasswordauthentication yes\n"},
		{"equals form", "PasswordAuthentication=yes\n", "false", SSHDConfig, "PasswordAuthentication no\n"},
		{"append before Match", "UsePAM yes\nMatch User x\n\tX11Forwarding no\n", "yes", SSHDConfig, "UsePAM yes\nPasswordAuthentication yes\nMatch User x\n\tX11Forwarding no\n"},
		{"append at end", "UsePAM yes", true, SSHDConfig, "UsePAM yes\nPasswordAuthentication yes\n"},
		{"unchanged", "UsePAM yes\n", "unchanged", SSHDConfig, "UsePAM yes\n"},
		{"already set", "PasswordAuthentication yes\n", true, SSHDConfig, "PasswordAuthentication yes\n"},
		{"trailing text rewritten", "PasswordAuthentication yes # c\n", true, SSHDConfig, "PasswordAuthentication yes\n"},
		{"no sshd_config", "", true, SSHDConfig, ""},
		{"only sshd_config.d", "-", true, SSHDCloudInitConf, "PasswordAuthentication yes\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := modtest.AccountsRoot(t, "")
			os.Remove(filepath.Join(r.Dir(), "etc/ssh/sshd_config"))
			if tt.sshd == "-" {
				os.MkdirAll(filepath.Join(r.Dir(), SSHDConfigDir), 0o755)
			} else if tt.sshd != "" {
				os.WriteFile(filepath.Join(r.Dir(), "etc/ssh/sshd_config"), []byte(tt.sshd), 0o600)
			}
			c, _ := famtest.Accounts(t, r, modules.Config{"ssh_pwauth": tt.value}, nil)
			pc, _ := decodeSetPasswords(c, decoded[setPasswordsKeys](t, c))
			if err := applyPwAuth(t.Context(), c, pc.PwAuth); err != nil {
				t.Fatal(err)
			}
			b, err := r.ReadFile(tt.wantFile)
			if tt.wantValue == "" {
				if tt.sshd == "" && err == nil {
					t.Errorf("%s created", tt.wantFile)
				}
				return
			}
			if diff := cmp.Diff(tt.wantValue, string(b)); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tt.wantFile, diff)
			}
			if tt.wantFile == SSHDConfig {
				if fi, _ := r.Stat(SSHDConfig); fi.Mode().Perm() != 0o600 {
					t.Errorf("sshd_config mode changed to %v", fi.Mode())
				}
			}
		})
	}
}

// decoded is c's config as modules.Typed hands it to a module.
func decoded[T any](t *testing.T, c *modules.Context) T {
	t.Helper()
	var out T
	if err := modules.Typed(func(_ context.Context, _ *modules.Context, cfg T) error { out = cfg; return nil })(t.Context(), c); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestChpasswdUsersDecode: chpasswd.users entries as the decoder reads
// them: type defaults to hash, password to RANDOM; an entry that is not
// a mapping or has no name is an error; an unknown type (null included)
// is warned about and skipped.
func TestChpasswdUsersDecode(t *testing.T) {
	r := modtest.AccountsRoot(t, "")
	cfg := modules.Config{"chpasswd": map[string]any{"users": []any{
		map[string]any{"name": "a"},
		map[string]any{"name": "b", "type": "text", "password": 5},
		"c",
		map[string]any{"password": "x"},
		map[string]any{"name": "d", "type": nil},
		nil,
	}}}
	c, warnings := famtest.Accounts(t, r, cfg, nil)
	pc, err := decodeSetPasswords(c, decoded[setPasswordsKeys](t, c))
	want := []pwEntry{{User: "a", Password: pwRandom, Type: pwHash}, {User: "b", Password: "5", Type: pwText}}
	if diff := cmp.Diff(want, pc.Entries); diff != "" {
		t.Errorf("entries (-want +got):\n%s", diff)
	}
	wantErr := "chpasswd.users.2: an entry needs a name\nchpasswd.users.3: an entry needs a name\nchpasswd.users.5: an entry needs a name"
	if err == nil || err.Error() != wantErr {
		t.Errorf("err = %v", err)
	}
	if !slices.Equal(*warnings, []string{`chpasswd.users.4: unknown type "" for d; password not changed`}) {
		t.Errorf("warnings = %q", *warnings)
	}
}
