package modtest

// Fixtures pkg/modules' tests share with the families': a target with
// SSH host keys, and a user home for the confinement tests.

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloudroot/cloudroot/pkg/internal/pyval"
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

// Recorder is a target.Runner that records the commands run in a target
// (argv and environment) and, for scripts, their content at the time they
// ran: the runner of pkg/modules' testContext and famtest.NewContext.
type Recorder struct {
	Calls   [][]string
	Scripts []string
	Envs    [][]string
	// Fail makes a command fail with the error given for its last
	// argument.
	Fail map[string]error
	// Answers are the stdout of commands, by their space-joined argv.
	Answers map[string]string
}

// Run implements target.Runner.
func (r *Recorder) Run(ctx context.Context, root string, cmd target.Cmd) error {
	r.Calls = append(r.Calls, cmd.Argv)
	r.Envs = append(r.Envs, cmd.Env)
	for _, a := range cmd.Argv {
		if b, err := os.ReadFile(filepath.Join(root, a)); err == nil {
			r.Scripts = append(r.Scripts, string(b))
		}
	}
	if a, ok := r.Answers[strings.Join(cmd.Argv, " ")]; ok && cmd.Stdout != nil {
		io.WriteString(cmd.Stdout, a)
	}
	if r.Fail != nil {
		if err, ok := r.Fail[cmd.Argv[len(cmd.Argv)-1]]; ok {
			return err
		}
	}
	return nil
}

// TempRoot is a target on a fresh temp directory holding files (paths
// relative to the root), its commands run by run.
func TempRoot(t *testing.T, files map[string]string, run target.Runner) *target.Root {
	t.Helper()
	dir := t.TempDir()
	for p, s := range files {
		hp := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(hp), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(hp, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	root, err := target.New(dir, target.WithRunner(run))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// Typed is cfg decoded into a module's typed configuration, as
// modules.Typed decodes it (problems dropped).
func Typed[T any](cfg map[string]any) T {
	var out T
	_ = (&pyval.Decoder{}).Decode(cfg, &out)
	return out
}
