package cli

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloudroot/cloudroot/pkg/modules"
)

func TestHostkeys(t *testing.T) {
	root := t.TempDir()
	for p, s := range map[string]string{
		"etc/hostname":                     "web1\n",
		"etc/passwd":                       "root:x:0:0:root:/root:/bin/sh\n",
		"etc/group":                        "root:x:0:\n",
		modules.HostKeysDeferredMarker[1:]: `{"types":["ed25519","ecdsa"],"reason":"test"}`,
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
	if rc := runHostkeys(context.Background(), env, nil); rc != 0 {
		t.Fatalf("rc %d: %s", rc, errb)
	}
	for _, kind := range []string{"ed25519", "ecdsa"} {
		p := filepath.Join(root, "etc/ssh/ssh_host_"+kind+"_key")
		fi, err := os.Stat(p)
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v %v", p, fi, err)
		}
		pub, err := os.ReadFile(p + ".pub")
		if err != nil || !strings.HasSuffix(string(pub), " root@web1\n") {
			t.Errorf("%s.pub = %q %v", p, pub, err)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "etc/ssh/ssh_host_rsa_key")); err == nil {
		t.Error("rsa generated although not deferred")
	}
	if !strings.Contains(out.String(), "The key fingerprint is:") {
		t.Errorf("no keygen output on stdout: %q", out)
	}
	log, _ := os.ReadFile(filepath.Join(root, "var/log/cloud-init-output.log"))
	if !strings.Contains(string(log), "Generating public/private ed25519 key pair.") {
		t.Errorf("cloud-init-output.log = %q", log)
	}
	if _, err := os.Stat(filepath.Join(root, modules.HostKeysDeferredMarker)); err == nil {
		t.Error("marker left behind")
	}
	// A second run has nothing to do.
	out.Reset()
	if rc := runHostkeys(context.Background(), env, nil); rc != 0 || !strings.Contains(out.String(), "no deferred") {
		t.Errorf("second run: rc %d out %q", rc, out)
	}
}
