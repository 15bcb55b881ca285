package users

import (
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cloudroot/cloudroot/pkg/modules/internal/famtest"
	"github.com/cloudroot/cloudroot/pkg/modules/internal/modtest"
)

// TestAuthkeyTableUpstream compares the table with cloud-init's own
// output (testdata/ssh_console/want-authkey.txt, made by
// scripts/goldens/authkey-fingerprints.py through upstream-cloudinit.sh).
func TestAuthkeyTableUpstream(t *testing.T) {
	b, err := os.ReadFile("testdata/ssh_console/authorized_keys")
	if err != nil {
		t.Fatal(err)
	}
	var entries []authKeyLine
	for _, l := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		entries = append(entries, parseAuthKeyLine(l, nil))
	}
	var got strings.Builder
	for _, h := range []string{"sha256", "md5", "sha512", "whirlpool-ish"} {
		got.WriteString("=== " + h + "\n")
		got.WriteString(authkeyTable("alice", "/home/alice/.ssh/authorized_keys", entries, h, "ci-info: "))
	}
	got.WriteString("=== none\n")
	got.WriteString(authkeyTable("bob", "/home/bob/.ssh/authorized_keys", nil, "sha256", "ci-info: "))
	want, err := os.ReadFile("testdata/ssh_console/want-authkey.txt")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(string(want), got.String()); d != "" {
		t.Errorf("-upstream +cloudroot:\n%s", d)
	}
}

func TestAuthkeyFingerprintsModule(t *testing.T) {
	keys, _ := os.ReadFile("testdata/ssh_console/authorized_keys")
	files := map[string]string{
		"etc/os-release":                  "ID=debian\nVERSION_ID=12\n",
		"etc/passwd":                      "root:x:0:0:root:/root:/bin/sh\nalice:x:1000:1000::/home/alice:/bin/sh\nbob:x:1001:1001::/home/bob:/bin/sh\nsvc:x:999:999::/nonexistent:/bin/false\n",
		"etc/group":                       "root:x:0:\n",
		"home/alice/.ssh/authorized_keys": string(keys),
		"home/bob/.profile":               "",
	}
	cfg := "users:\n- name: alice\n- name: bob\n- {name: svc, system: true}\nauthkey_hash: md5\n"
	c, _, out := famtest.NewContext(t, famtest.YAML(t, cfg), files, nil)
	if err := SSHAuthkeyFingerprints.Run(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	// As check_create_path: bob, who has no keys, gets an empty file.
	for p, want := range map[string]fs.FileMode{"/home/bob/.ssh": fs.ModeDir | 0o700, "/home/bob/.ssh/authorized_keys": 0o600} {
		if fi, err := c.Root.Lstat(p); err != nil || fi.Mode() != want {
			t.Errorf("%s: %v, err %v; want mode %v", p, fi, err, want)
		}
	}
	if b, err := c.Root.ReadFile("/home/alice/.ssh/authorized_keys"); err != nil || string(b) != string(keys) {
		t.Errorf("alice's keys changed: %q, %v", b, err)
	}
	if c.Root.Exists("/nonexistent") {
		t.Error("the system user's home was created")
	}
	want, _ := os.ReadFile("testdata/ssh_console/want-authkey.txt")
	md5Part := strings.Split(strings.Split(string(want), "=== md5\n")[1], "=== sha512")[0]
	if d := cmp.Diff(md5Part+"ci-info: no authorized SSH keys fingerprints found for user bob.\n", out.String()); d != "" {
		t.Errorf("-want +got:\n%s", d)
	}
	c, _, out = famtest.NewContext(t, famtest.YAML(t, cfg+"no_ssh_fingerprints: true\n"), files, nil)
	if err := SSHAuthkeyFingerprints.Run(context.Background(), c); err != nil || out.Len() != 0 {
		t.Errorf("disabled: err %v, output %q", err, out)
	}
}

func TestKeysToConsole(t *testing.T) {
	files := modtest.HostKeyRoot()
	pub := func(kt string) string { return files["etc/ssh/ssh_host_"+kt+"_key.pub"] }
	stamp := time.Date(2026, 11, 22, 8, 36, 48, 0, time.UTC).Local().Format("Jan _2 15:04:05")
	sl := func(s string) string { return "<14>" + stamp + " cloud-init: " + s + "\n" }
	hashes := strings.Repeat("#", 61)
	fp := map[string]string{
		"rsa":     "3072 SHA256:jGRwfuCHW+jWcaoyDVFbfF6tdrRD1VsPUdZrZoJojRM root@golden-rsa (RSA)",
		"ecdsa":   "256 SHA256:f3doJqytY73DwV1Lhl9Y8yas34SRBJCS2SLfilEyfP8 root@golden-ecdsa (ECDSA)",
		"ed25519": "256 SHA256:VZYNCkQMsCIuemyojxUUU9FSt4I+7u0HhR2YtMuXTXA root@golden-ed25519 (ED25519)",
	}
	for _, tc := range []struct{ name, cfg, want string }{
		{"all", "{}", sl(hashes) + sl("-----BEGIN SSH HOST KEY FINGERPRINTS-----") +
			sl(fp["ecdsa"]) + sl(fp["ed25519"]) + sl(fp["rsa"]) +
			sl("-----END SSH HOST KEY FINGERPRINTS-----") + sl(hashes) +
			"-----BEGIN SSH HOST KEY KEYS-----\n" + pub("ecdsa") + pub("ed25519") + pub("rsa") + "-----END SSH HOST KEY KEYS-----\n"},
		{"blacklists", "ssh_fp_console_blacklist: [ssh-rsa, ecdsa-sha2-nistp256]\nssh_key_console_blacklist: [ssh-ed25519, ssh-rsa, ecdsa-sha2-nistp256]\n",
			sl(hashes) + sl("-----BEGIN SSH HOST KEY FINGERPRINTS-----") + sl(fp["ed25519"]) +
				sl("-----END SSH HOST KEY FINGERPRINTS-----") + sl(hashes)},
		{"disabled", "ssh: {emit_keys_to_console: false}\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, rr, out := famtest.NewContext(t, famtest.YAML(t, tc.cfg), files, nil)
			if err := KeysToConsole.Run(context.Background(), c); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, out.String()); d != "" {
				t.Errorf("-want +got:\n%s", d)
			}
			if len(rr.Calls) != 0 {
				t.Errorf("ran %q", rr.Calls)
			}
		})
	}
}

// TestKeygenListMatchesSSHKeygen checks the fingerprint line against the
// real ssh-keygen when the machine has one.
func TestKeygenListMatchesSSHKeygen(t *testing.T) {
	if _, err := exec.LookPath("ssh-keygen"); err != nil {
		t.Skip("no ssh-keygen")
	}
	files, _ := filepath.Glob("testdata/ssh_console/ssh_host_*_key.pub")
	for _, f := range files {
		want, err := exec.Command("ssh-keygen", "-l", "-f", f).Output()
		if err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(f)
		if got := keygenList(string(b)); got != strings.TrimSpace(string(want)) {
			t.Errorf("%s: got %q, ssh-keygen says %q", f, got, want)
		}
	}
}

// TestKeysToConsoleUpstream compares the console text with what upstream's
// helper printed for the same keys and blacklists
// (testdata/ssh_console/upstream-keys-to-console.txt, made by
// scripts/goldens/keys-to-console.sh).
func TestKeysToConsoleUpstream(t *testing.T) {
	b, err := os.ReadFile("testdata/ssh_console/upstream-keys-to-console.txt")
	if err != nil {
		t.Fatal(err)
	}
	stamp := time.Date(2026, 11, 22, 8, 36, 48, 0, time.UTC).Local().Format("Jan _2 15:04:05")
	want := map[string]string{}
	var order []string
	name := ""
	for _, l := range strings.SplitAfter(string(b), "\n") {
		if n, ok := strings.CutPrefix(l, "=== "); ok {
			name = strings.TrimSpace(n)
			order = append(order, name)
			continue
		}
		want[name] += strings.Replace(l, "Nov 22 08:36:48", stamp, 1)
	}
	cfgs := map[string]string{
		"all":               "{}",
		"blacklists":        "ssh_fp_console_blacklist: [ssh-rsa, ecdsa-sha2-nistp256]\nssh_key_console_blacklist: [ssh-ed25519, ssh-rsa, ecdsa-sha2-nistp256]\n",
		"keys-only-ed25519": "ssh_fp_console_blacklist: [ssh-rsa, ecdsa-sha2-nistp256, ssh-ed25519]\nssh_key_console_blacklist: [ssh-rsa, ecdsa-sha2-nistp256]\n",
	}
	if len(order) != len(cfgs) {
		t.Fatalf("cases %q", order)
	}
	for _, n := range order {
		c, _, out := famtest.NewContext(t, famtest.YAML(t, cfgs[n]), modtest.HostKeyRoot(), nil)
		if err := KeysToConsole.Run(context.Background(), c); err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(want[n], out.String()); d != "" {
			t.Errorf("%s (-upstream +cloudroot):\n%s", n, d)
		}
	}
}
