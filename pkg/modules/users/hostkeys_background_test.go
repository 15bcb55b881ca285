package users

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/cloudroot/cloudroot/pkg/modules"
	"github.com/cloudroot/cloudroot/pkg/modules/internal/famtest"
	"github.com/cloudroot/cloudroot/pkg/modules/internal/modtest"
	"github.com/cloudroot/cloudroot/pkg/target"
)

func TestSplitHostKeyTypes(t *testing.T) {
	tests := []struct {
		types      []string
		now, later []string
	}{
		{[]string{"rsa", "ecdsa", "ed25519"}, []string{"ecdsa", "ed25519"}, []string{"rsa"}},
		{[]string{"rsa", "ed25519"}, []string{"ed25519"}, []string{"rsa"}},
		{[]string{"ecdsa", "rsa"}, []string{"ecdsa"}, []string{"rsa"}},
		{[]string{"rsa"}, []string{"rsa"}, nil}, // sshd needs a key to start with
		{[]string{"ed25519"}, []string{"ed25519"}, nil},
		{nil, nil, nil},
	}
	for _, tt := range tests {
		now, later := SplitHostKeyTypes(tt.types)
		if !slices.Equal(now, tt.now) || !slices.Equal(later, tt.later) {
			t.Errorf("SplitHostKeyTypes(%v) = %v, %v; want %v, %v", tt.types, now, later, tt.now, tt.later)
		}
	}
}

// TestSSHBackgroundHostKeys: with a taker for the slow types (the
// initramfs, when the target enables cloudroot-hostkeys-background), the
// ssh module writes the fast keys and hands RSA over; nothing is handed
// over when no fast type is asked for, for given keys, for an RSA key that
// exists, or without a taker (the booted root, as cloud-init).
func TestSSHBackgroundHostKeys(t *testing.T) {
	useCachedHostKeys(t)
	tests := []struct {
		name      string
		cfg       modules.Config
		noTaker   bool
		takerErr  error
		existing  []string // key types already on the target
		wantKeys  []string // key types on the target afterwards
		wantLater []string // handed to the booted root
	}{
		{name: "defaults: RSA later", wantKeys: []string{"ecdsa", "ed25519"}, wantLater: []string{"rsa"}},
		{name: "rsa and ed25519", cfg: modules.Config{"ssh_genkeytypes": []any{"rsa", "ed25519"}}, wantKeys: []string{"ed25519"}, wantLater: []string{"rsa"}},
		{name: "rsa only: made now", cfg: modules.Config{"ssh_genkeytypes": []any{"rsa"}}, wantKeys: []string{"rsa"}},
		{name: "no rsa asked", cfg: modules.Config{"ssh_genkeytypes": []any{"ed25519"}}, wantKeys: []string{"ed25519"}},
		{name: "rsa exists (no ssh_deletekeys)", cfg: modules.Config{"ssh_deletekeys": false}, existing: []string{"rsa"}, wantKeys: []string{"ecdsa", "ed25519", "rsa"}},
		{name: "given keys: nothing later", cfg: modules.Config{"ssh_keys": map[string]any{"ed25519_private": testK1Priv}}, wantKeys: []string{"ed25519"}},
		{name: "no taker: all now (in-root, cloud-init)", noTaker: true, wantKeys: []string{"ecdsa", "ed25519", "rsa"}},
		{name: "taker fails: all now", takerErr: errors.New("read-only /run"), wantKeys: []string{"ecdsa", "ed25519", "rsa"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := modules.Config{"users": []any{}, "disable_root": false}
			for k, v := range tt.cfg {
				cfg[k] = v
			}
			r := modtest.AccountsRoot(t, "")
			c, _ := famtest.Accounts(t, r, cfg, nil)
			var out bytes.Buffer
			c.Out = &out
			for _, k := range tt.existing {
				if err := r.WriteFile("/etc/ssh/ssh_host_"+k+"_key", []byte("old\n"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			var later *modules.HostKeyDeferral
			if !tt.noTaker {
				c.BackgroundHostKeys = func(d modules.HostKeyDeferral) error {
					if tt.takerErr != nil {
						return tt.takerErr
					}
					later = &d
					return nil
				}
			}
			if err := SSH.Run(context.Background(), c); err != nil {
				t.Fatal(err)
			}
			var got []string
			keys, _ := r.Glob("/etc/ssh/ssh_host_*_key")
			for _, k := range keys {
				got = append(got, strings.TrimSuffix(strings.TrimPrefix(k, "/etc/ssh/ssh_host_"), "_key"))
			}
			if !slices.Equal(got, tt.wantKeys) {
				t.Errorf("keys %v, want %v", got, tt.wantKeys)
			}
			switch {
			case later == nil && tt.wantLater != nil:
				t.Errorf("nothing handed over, want %v", tt.wantLater)
			case later != nil && !slices.Equal(later.Types, tt.wantLater):
				t.Errorf("handed over %+v, want %v", *later, tt.wantLater)
			}
			if later != nil && strings.Contains(out.String(), "RSA 3072") {
				t.Errorf("the initramfs printed an RSA report:\n%s", out.String())
			}
		})
	}
}

// keygenRunner stands for the target's ssh-keygen: it writes key at the
// -f path it is given and records the command.
type keygenRunner struct {
	key   []byte
	calls [][]string
	fail  bool
}

func (k *keygenRunner) Run(_ context.Context, root string, cmd target.Cmd) error {
	k.calls = append(k.calls, cmd.Argv)
	if cmd.Argv[0] != "ssh-keygen" {
		return nil
	}
	if k.fail {
		io.WriteString(cmd.Stderr, "ssh-keygen: boom\n")
		return &target.ExitError{Code: 1}
	}
	f := cmd.Argv[slices.Index(cmd.Argv, "-f")+1]
	if fi, err := os.Stat(filepath.Join(root, filepath.Dir(f))); err != nil || fi.Mode().Perm() != 0o700 {
		return errors.New("scratch directory missing or not 0700")
	}
	return os.WriteFile(filepath.Join(root, f), k.key, 0o600)
}

// backgroundRoot is a target with a hostname, sshd units and, when keygen,
// an ssh-keygen on its PATH, commands going to run.
func backgroundRoot(t *testing.T, run target.Runner, keygen bool) *modules.Context {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"etc/hostname":                   "debtest\n",
		"etc/group":                      "root:x:0:\n",
		"lib/systemd/system/ssh.service": "[Service]\n",
		"run/systemd/system/.keep":       "",
	}
	if keygen {
		files["usr/bin/ssh-keygen"] = "#!/bin/sh\n"
	}
	for p, s := range files {
		hp := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(hp), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(hp, []byte(s), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	r, err := target.New(dir, target.WithRunner(run))
	if err != nil {
		t.Fatal(err)
	}
	return &modules.Context{Root: r, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Out: &bytes.Buffer{}, Booted: true}
}

// TestGenerateBackgroundHostKeys: the booted root's generation makes RSA
// in Go (never the target's ssh-keygen, which is slower) and writes it as
// the ssh module would (0600, .pub 0644 with the comment, the ssh-keygen
// style report); a second run leaves the key alone.
func TestGenerateBackgroundHostKeys(t *testing.T) {
	useCachedHostKeys(t)
	kr := &keygenRunner{fail: true}
	c := backgroundRoot(t, kr, true)
	if err := GenerateBackgroundHostKeys(context.Background(), c, modules.HostKeyDeferral{Types: []string{"rsa"}}); err != nil {
		t.Fatal(err)
	}
	if len(kr.calls) != 0 {
		t.Errorf("ran %q, want no command", kr.calls)
	}
	const p = "/etc/ssh/ssh_host_rsa_key"
	if m := famtest.Mode(t, c, p).Perm(); m != 0o600 {
		t.Errorf("%s mode %v, want 0600", p, m)
	}
	if m := famtest.Mode(t, c, p+".pub").Perm(); m != 0o644 {
		t.Errorf("%s.pub mode %v, want 0644", p, m)
	}
	pub, comment, _, _, err := ssh.ParseAuthorizedKey([]byte(famtest.ReadFile(t, c, p+".pub")))
	if err != nil || comment != "root@debtest" || pub.Type() != ssh.KeyAlgoRSA {
		t.Fatalf("%s.pub: type %v, comment %q, %v", p, pub, comment, err)
	}
	signer, err := ssh.ParsePrivateKey([]byte(famtest.ReadFile(t, c, p)))
	if err != nil || !bytes.Equal(signer.PublicKey().Marshal(), pub.Marshal()) {
		t.Fatalf("private and public keys differ (%v)", err)
	}
	if out := c.Out.(*bytes.Buffer).String(); !strings.Contains(out, "Your identification has been saved in "+p+"\n") || !strings.Contains(out, ssh.FingerprintSHA256(pub)+" root@debtest\n") {
		t.Errorf("output lacks the report:\n%s", out)
	}
	before := famtest.ReadFile(t, c, p)
	if err := GenerateBackgroundHostKeys(context.Background(), c, modules.HostKeyDeferral{Types: []string{"rsa"}}); err != nil || famtest.ReadFile(t, c, p) != before || len(kr.calls) != 0 {
		t.Errorf("re-run: err %v, regenerated or ran %q", err, kr.calls)
	}
}

// TestReloadSSHD: sshd's unit is reloaded (try-: not started when it is
// not running) on the booted system under systemd only.
func TestReloadSSHD(t *testing.T) {
	tests := []struct {
		name    string
		booted  bool
		noUnits bool
		want    string
	}{
		{name: "booted", booted: true, want: "systemctl try-reload-or-restart ssh.service"},
		{name: "initramfs or chroot", booted: false},
		{name: "no sshd unit", booted: true, noUnits: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kr := &keygenRunner{}
			c := backgroundRoot(t, kr, false)
			c.Booted = tt.booted
			if tt.noUnits {
				if err := c.Root.Remove("/lib/systemd/system/ssh.service"); err != nil {
					t.Fatal(err)
				}
			}
			if err := ReloadSSHD(context.Background(), c); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, a := range kr.calls {
				got = append(got, strings.Join(a, " "))
			}
			if strings.Join(got, "\n") != tt.want {
				t.Errorf("ran %q, want %q", got, tt.want)
			}
		})
	}
}

func TestBackgroundHostKeysEnabled(t *testing.T) {
	c := backgroundRoot(t, &keygenRunner{}, false)
	if BackgroundHostKeysEnabled(c.Root) {
		t.Fatal("enabled without the unit's link")
	}
	if err := c.Root.Symlink("/usr/lib/systemd/system/"+BackgroundHostKeysUnit, "/etc/systemd/system/multi-user.target.wants/"+BackgroundHostKeysUnit); err != nil {
		t.Fatal(err)
	}
	if !BackgroundHostKeysEnabled(c.Root) {
		t.Error("not enabled with the unit's link")
	}
}
