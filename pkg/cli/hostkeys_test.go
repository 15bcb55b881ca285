package cli

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// backgroundMarker is users.HostKeysBackgroundMarker as the unit's
// ConditionPathExists names it.
const backgroundMarker = "/run/cloud-init/cloudroot/hostkeys-background"

// TestHostkeysBackground: `cloudroot hostkeys --background` (what
// cloudroot-hostkeys-background.service runs) makes the slow keys the
// initramfs left in the marker and removes it; the
// plain command leaves that marker to the unit.
func TestHostkeysBackground(t *testing.T) {
	root := t.TempDir()
	for p, s := range map[string]string{
		"etc/hostname":   "debtest\n",
		backgroundMarker: `{"types":["rsa"],"quiet":true,"reason":"test"}` + "\n",
	} {
		hp := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(hp), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(hp, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env, out, errb := newTestEnv(root)
	env.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	if rc := Run(context.Background(), env, []string{"hostkeys"}); rc != 0 {
		t.Fatalf("hostkeys: rc %d: %s", rc, errb)
	}
	if _, err := os.Stat(filepath.Join(root, "etc/ssh/ssh_host_rsa_key")); err == nil {
		t.Fatal("plain hostkeys made the background keys")
	}
	out.Reset()
	if rc := Run(context.Background(), env, []string{"hostkeys", "--background"}); rc != 0 {
		t.Fatalf("hostkeys --background: rc %d: %s", rc, errb)
	}
	fi, err := os.Stat(filepath.Join(root, "etc/ssh/ssh_host_rsa_key"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("rsa key: %v %v", fi, err)
	}
	pub, err := os.ReadFile(filepath.Join(root, "etc/ssh/ssh_host_rsa_key.pub"))
	if err != nil || !strings.HasPrefix(string(pub), "ssh-rsa ") || !strings.HasSuffix(string(pub), " root@debtest\n") {
		t.Fatalf("rsa .pub %q: %v", pub, err)
	}
	if _, err := os.Stat(filepath.Join(root, backgroundMarker)); err == nil {
		t.Error("marker left behind")
	}
}
