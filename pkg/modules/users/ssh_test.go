package users

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/crypto/ssh"

	"github.com/cloudroot/cloudroot/pkg/modules"
	"github.com/cloudroot/cloudroot/pkg/modules/internal/famtest"
	"github.com/cloudroot/cloudroot/pkg/modules/internal/modtest"
	"github.com/cloudroot/cloudroot/pkg/target"
)

const (
	testK1Priv = `-----BEGIN OPENSSH PRIVATE KEY-----
b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtz
c2gtZWQyNTUxOQAAACCKiOPddAnxlf1S2y08ul1yymcJvx2UEhvzdIgBtA9vXAAA
AIhPy+wVT8vsFQAAAAtzc2gtZWQyNTUxOQAAACCKiOPddAnxlf1S2y08ul1yymcJ
vx2UEhvzdIgBtA9vXAAAAEABAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEB
AYqI4910CfGV/VLbLTy6XXLKZwm/HZQSG/N0iAG0D29cAAAABHRlc3QB
-----END OPENSSH PRIVATE KEY-----
`
	testK1Pub = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIIqI4910CfGV/VLbLTy6XXLKZwm/HZQSG/N0iAG0D29c"
	testK2    = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIIE5dw6ofRdfVqNUZsNMfszLjYqRtO43ol32D1uPybOU"
	testK3    = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIO1JKMYo0cLG6ukDOJBZlWEpWSc6XGP5NjbBRhSshzfR"
)

func TestParseAuthKeyLine(t *testing.T) {
	override := "no-pty"
	empty := ""
	tests := []struct {
		name, line string
		options    *string
		want       string
		valid      bool
	}{
		{"plain", testK2 + " me@host", nil, testK2 + " me@host", true},
		{"no comment", testK2, nil, testK2, true},
		{"comment with spaces", testK2 + "  my  key ", nil, testK2 + " my  key", true},
		{"options kept", `from="10.0.0.1",command="echo hi there" ` + testK2 + " c", nil, `from="10.0.0.1",command="echo hi there" ` + testK2 + " c", true},
		{"escaped quote in options", `command="echo \"a b\"" ` + testK2, nil, `command="echo \"a b\"" ` + testK2, true},
		{"options replaced", "no-agent-forwarding " + testK2 + " c", &override, "no-pty " + testK2 + " c", true},
		{"options added", testK2 + " c", &override, "no-pty " + testK2 + " c", true},
		{"options removed by empty", "no-pty " + testK2, &empty, testK2, true},
		{"comment line", "# hello", nil, "# hello", false},
		{"blank", "   ", nil, "   ", false},
		{"unknown type", "ssh-foo AAAA c", nil, "ssh-foo AAAA c", false},
		{"one field", "ssh-rsa", nil, "ssh-rsa", false},
		{"cert type", "ssh-ed25519-cert-v01@openssh.com AAAA c", nil, "ssh-ed25519-cert-v01@openssh.com AAAA c", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := parseAuthKeyLine(tt.line, tt.options)
			if k.valid() != tt.valid || k.String() != tt.want {
				t.Errorf("parse(%q) = %q valid=%v; want %q valid=%v", tt.line, k.String(), k.valid(), tt.want, tt.valid)
			}
		})
	}
}

func TestUpdateAuthorizedKeys(t *testing.T) {
	old := []authKeyLine{
		parseAuthKeyLine("# comment", nil),
		parseAuthKeyLine("no-pty "+testK2+" old", nil),
		parseAuthKeyLine("garbage line", nil),
	}
	keys := []authKeyLine{
		parseAuthKeyLine(testK3+" new", nil),
		parseAuthKeyLine(testK2+" replaced", nil),
		parseAuthKeyLine(testK3+" duplicate material", nil),
		parseAuthKeyLine("not a key", nil),
	}
	got := updateAuthorizedKeys(old, keys)
	want := "# comment\n" + testK2 + " replaced\ngarbage line\n" + testK3 + " new\n"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if got := updateAuthorizedKeys(nil, nil); got != "" {
		t.Errorf("empty = %q", got)
	}
}

func TestPublicKeys(t *testing.T) {
	tests := []struct {
		name string
		meta any
		want []string
	}{
		{"absent", nil, nil},
		{"string lines", "k1\n\nk2\n", []string{"k1", "k2"}},
		{"list", []any{"k1", "k2"}, []string{"k1", "k2"}},
		{"dict of strings", map[string]any{"b": "k2", "a": "k1"}, []string{"k1", "k2"}},
		{"dict of lists", map[string]any{"a": []any{"k1", ""}, "b": []any{"k2"}}, []string{"k1", "k2"}},
		{"dict of openssh-key", map[string]any{"0": map[string]any{"openssh-key": "k1"}}, []string{"k1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &modules.Context{Meta: map[string]any{"public-keys": tt.meta}}
			if diff := cmp.Diff(tt.want, publicKeys(c)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestGenerateHostKeyTypes(t *testing.T) {
	for kind, check := range map[string]func(any) bool{
		"rsa":     func(k any) bool { r, ok := k.(*rsa.PrivateKey); return ok && r.N.BitLen() == 3072 },
		"ecdsa":   func(k any) bool { e, ok := k.(*ecdsa.PrivateKey); return ok && e.Curve.Params().BitSize == 256 },
		"ed25519": func(k any) bool { _, ok := k.(ed25519.PrivateKey); return ok },
	} {
		k, err := generateHostKey(kind)
		if err != nil || !check(k) {
			t.Errorf("%s: %T %v", kind, k, err)
		}
	}
	if _, err := generateHostKey("dsa"); err == nil {
		t.Error("dsa: no error")
	}
}

func TestSSHHostKeys(t *testing.T) {
	useCachedHostKeys(t)
	r := modtest.AccountsRoot(t, "")
	if _, _, err := r.AddGroup("ssh_keys", target.GroupOpts{System: true}); err != nil {
		t.Fatal(err)
	}
	g, _ := r.LookupGroup("ssh_keys")
	c, warnings := famtest.Accounts(t, r, modules.Config{"users": []any{}, "ssh_genkeytypes": []any{"rsa", "ed25519", "dsa"}, "disable_root": false}, nil)
	err := SSH.Run(context.Background(), c)
	if err == nil || !strings.Contains(err.Error(), "generate dsa host key") {
		t.Errorf("err = %v, want the dsa failure", err)
	}
	for _, kind := range []string{"rsa", "ed25519"} {
		p := "/etc/ssh/ssh_host_" + kind + "_key"
		b, err := r.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		signer, err := ssh.ParsePrivateKey(b)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		pub, _ := r.ReadFile(p + ".pub")
		pk, comment, _, _, err := ssh.ParseAuthorizedKey(pub)
		if err != nil || comment != "root@debian" || string(pk.Marshal()) != string(signer.PublicKey().Marshal()) {
			t.Errorf("%s.pub = %q (%v)", p, pub, err)
		}
		fi, _ := r.Stat(p)
		if fi.Mode().Perm() != 0o640 {
			t.Errorf("%s mode = %v, want 0640 (ssh_keys group)", p, fi.Mode())
		}
		if os.Geteuid() == 0 {
			if uid, gid := target.FileOwner(fi); uid != 0 || gid != g.GID {
				t.Errorf("%s owner = %d:%d", p, uid, gid)
			}
		}
		if fi, _ := r.Stat(p + ".pub"); fi.Mode().Perm() != 0o644 {
			t.Errorf("%s.pub mode = %v", p, fi.Mode())
		}
	}
	if len(*warnings) != 0 {
		t.Errorf("warnings: %v", *warnings)
	}
	// ssh_deletekeys: false keeps existing keys; existing keys are not regenerated.
	before, _ := r.ReadFile("/etc/ssh/ssh_host_ed25519_key")
	c.Config = modules.Config{"users": []any{}, "ssh_deletekeys": false, "ssh_genkeytypes": []any{"ed25519"}}
	if err := SSH.Run(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	if after, _ := r.ReadFile("/etc/ssh/ssh_host_ed25519_key"); string(after) != string(before) {
		t.Error("existing key regenerated")
	}
}

func TestSSHKeysDerivePublic(t *testing.T) {
	r := modtest.AccountsRoot(t, "")
	c, _ := famtest.Accounts(t, r, modules.Config{"users": []any{}, "ssh_keys": map[string]any{"ed25519_private": testK1Priv}}, nil)
	if err := SSH.Run(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	pub, _ := r.ReadFile("/etc/ssh/ssh_host_ed25519_key.pub")
	if strings.TrimSpace(string(pub)) != testK1Pub {
		t.Errorf("derived public key = %q", pub)
	}
	if r.Exists("/etc/ssh/ssh_host_rsa_key") {
		t.Error("keys generated although ssh_keys was given")
	}
	c.Config = modules.Config{"users": []any{}, "ssh_keys": map[string]any{"rsa_private": "not a key"}}
	if err := SSH.Run(context.Background(), c); err == nil {
		t.Error("bad private key: no error")
	}
}

func TestSSHAuthorizedKeysMerge(t *testing.T) {
	r := modtest.AccountsRoot(t, "")
	if _, _, err := r.AddUser(target.UserSpec{Name: "debian", Home: "/home/debian"}); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(r.Dir(), "home/debian/.ssh"), 0o700)
	os.WriteFile(filepath.Join(r.Dir(), "home/debian/.ssh/authorized_keys"), []byte(testK3+" existing\n"), 0o640)
	os.Chmod(filepath.Join(r.Dir(), "home/debian/.ssh/authorized_keys"), 0o640)
	c, _ := famtest.Accounts(t, r, modules.Config{
		"ssh_genkeytypes":       []any{},
		"ssh_authorized_keys":   []any{testK2 + " cfg", testK3 + " again"},
		"allow_public_ssh_keys": false,
		"disable_root_opts":     `no-pty,command="echo $USER not $DISABLE_USER"`,
	}, map[string]any{"public-keys": "ssh-rsa AAAAignored meta"})
	if err := SSH.Run(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	b, _ := r.ReadFile("/home/debian/.ssh/authorized_keys")
	if diff := cmp.Diff(testK3+" again\n"+testK2+" cfg\n", string(b)); diff != "" {
		t.Errorf("authorized_keys (-want +got):\n%s", diff)
	}
	if fi, _ := r.Stat("/home/debian/.ssh/authorized_keys"); fi.Mode().Perm() != 0o640 {
		t.Errorf("existing mode not kept: %v", fi.Mode())
	}
	b, _ = r.ReadFile("/root/.ssh/authorized_keys")
	want := `no-pty,command="echo debian not root" ` + testK2 + " cfg\n" + `no-pty,command="echo debian not root" ` + testK3 + " again\n"
	if diff := cmp.Diff(want, string(b)); diff != "" {
		t.Errorf("root authorized_keys (-want +got):\n%s", diff)
	}
	// The default user must exist in the target.
	os.WriteFile(filepath.Join(r.Dir(), "etc/passwd"), []byte("root:x:0:0::/root:/bin/sh\n"), 0o644)
	if err := SSH.Run(context.Background(), c); err == nil || !strings.Contains(err.Error(), "default user") {
		t.Errorf("missing default user: err = %v", err)
	}
}

func TestAuthorizedKeysFileFromSSHDConfig(t *testing.T) {
	r := modtest.AccountsRoot(t, "")
	c, _ := famtest.Accounts(t, r, nil, nil)
	u := target.User{Name: "bob", Home: "/home/bob"}
	for cfg, want := range map[string]string{
		"":                             "/home/bob/.ssh/authorized_keys",
		"AuthorizedKeysFile .ssh/keys": "/home/bob/.ssh/keys",
		"AuthorizedKeysFile /etc/ssh/%u %h/.ssh/k2": "/home/bob/.ssh/k2",
		"AuthorizedKeysFile /etc/ssh/keys/%u":       "/home/bob/.ssh/authorized_keys",
		"authorizedkeysfile\t%%h/../x":              "/home/bob/x",
	} {
		os.WriteFile(filepath.Join(r.Dir(), "etc/ssh/sshd_config"), []byte(cfg+"\n"), 0o644)
		if got := authorizedKeysPath(c, u); got != want {
			t.Errorf("%q: %s, want %s", cfg, got, want)
		}
	}
}
