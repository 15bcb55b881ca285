package modtest

// Fixtures pkg/modules' tests share with the families': a target with
// SSH host keys, and a user home for the confinement tests.

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cloudroot/cloudroot/pkg/target"
)

// HostKeyRoot are the files (paths relative to the root) of a Debian
// target with the host public keys of pkg/modules/testdata/ssh_console
// (what keys_to_console prints and phone_home posts) and an RSA private
// key that is never to be printed.
func HostKeyRoot() map[string]string {
	files := map[string]string{
		"etc/os-release": "ID=debian\nVERSION_ID=12\n",
		"etc/passwd":     "root:x:0:0:root:/root:/bin/sh\ndebian:x:1000:1000::/home/debian:/bin/bash\n",
	}
	for _, kt := range []string{"rsa", "ecdsa", "ed25519"} {
		b, _ := os.ReadFile(filepath.Join(Shared(), "ssh_console", "ssh_host_"+kt+"_key.pub"))
		files["etc/ssh/ssh_host_"+kt+"_key.pub"] = string(b)
	}
	files["etc/ssh/ssh_host_rsa_key"] = "private, never printed"
	return files
}

// Shadow is the /etc/shadow (mode 0640) of the confinement tests' target.
const Shadow = "root:$6$secret:19000::::::\nalice:!:19000::::::\n"

// UserHome makes /home/alice under root a directory alice controls: hers
// when the test runs as root, world-writable otherwise (pkg/target trusts
// neither).
func UserHome(t *testing.T, root string) string {
	t.Helper()
	hp := filepath.Join(root, "home", "alice")
	if err := os.MkdirAll(hp, 0o755); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		if err := os.Chown(hp, 1000, 1000); err != nil {
			t.Fatal(err)
		}
	} else if err := os.Chmod(hp, 0o777); err != nil {
		t.Fatal(err)
	}
	return hp
}

// ShadowUnchanged fails the test when /etc/shadow under root is no longer
// Shadow, mode 0640, owned by root.
func ShadowUnchanged(t *testing.T, root string) {
	t.Helper()
	hp := filepath.Join(root, "etc", "shadow")
	b, err := os.ReadFile(hp)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != Shadow {
		t.Errorf("/etc/shadow rewritten: %q", b)
	}
	fi, err := os.Lstat(hp)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode() != 0o640 {
		t.Errorf("/etc/shadow mode %v", fi.Mode())
	}
	if uid, gid := target.FileOwner(fi); os.Geteuid() == 0 && (uid != 0 || gid != 0) {
		t.Errorf("/etc/shadow chowned to %d:%d", uid, gid)
	}
}
