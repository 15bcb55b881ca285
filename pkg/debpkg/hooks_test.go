package debpkg

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// runHook runs an embedded kernel hook with sh, a fake builder that logs its
// arguments (and fails when fail is set), and env.
func runHook(t *testing.T, name string, args []string, env []string, fail bool) (log string, out string, err error) {
	t.Helper()
	dir := t.TempDir()
	hook, ferr := files.ReadFile("files/" + name)
	if ferr != nil {
		t.Fatal(ferr)
	}
	logPath := filepath.Join(dir, "builder.log")
	rc := "0"
	if fail {
		rc = "1"
	}
	builder := filepath.Join(dir, "builder")
	if err := os.WriteFile(builder, []byte("#!/bin/sh\necho \"$@\" >>"+logPath+"\necho builder failed >&2\nexit "+rc+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	hookPath := filepath.Join(dir, "hook")
	if err := os.WriteFile(hookPath, hook, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", append([]string{hookPath}, args...)...)
	cmd.Env = append([]string{"PATH=/usr/bin:/bin", "CLOUDROOT_MKINITRAMFS=" + builder}, env...)
	b, err := cmd.CombinedOutput()
	l, _ := os.ReadFile(logPath)
	return string(l), string(b), err
}

func TestKernelPostinstHook(t *testing.T) {
	const build = "-installed -kernel-version 6.1.0-9-amd64 -o /boot/initrd.img-6.1.0-9-amd64\n"
	for _, tc := range []struct {
		name    string
		args    []string
		env     []string
		fail    bool
		wantLog string
		wantErr string // in the output, with a non-zero exit
	}{
		{name: "builds", args: []string{"6.1.0-9-amd64", "/boot/vmlinuz-6.1.0-9-amd64"}, wantLog: build},
		{name: "version only", args: []string{"6.1.0-9-amd64"}, wantLog: build},
		{name: "kernel image elsewhere", args: []string{"6.1.0-9-amd64", "/efi/vmlinuz-6.1.0-9-amd64"}, wantLog: "-installed -kernel-version 6.1.0-9-amd64 -o /efi/initrd.img-6.1.0-9-amd64\n"},
		{name: "configure", args: []string{"6.1.0-9-amd64"}, env: []string{"DEB_MAINT_PARAMS='configure' '6.1.0'"}, wantLog: build},
		{name: "not on other maintainer steps", args: []string{"6.1.0-9-amd64"}, env: []string{"DEB_MAINT_PARAMS='abort-upgrade'"}},
		{name: "INITRD=No", args: []string{"6.1.0-9-amd64"}, env: []string{"INITRD=No"}},
		{name: "a failed build fails the hook", args: []string{"6.1.0-9-amd64"}, fail: true, wantLog: build, wantErr: "no cloudroot initramfs for kernel 6.1.0-9-amd64"},
		{name: "no version", wantErr: "called without a kernel version"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log, out, err := runHook(t, "kernel-postinst", tc.args, tc.env, tc.fail)
			if log != tc.wantLog {
				t.Errorf("builder calls %q, want %q", log, tc.wantLog)
			}
			if tc.wantErr == "" && err != nil {
				t.Errorf("hook failed: %v\n%s", err, out)
			}
			if tc.wantErr != "" && (err == nil || !strings.Contains(out, tc.wantErr)) {
				t.Errorf("hook: err %v, output %q, want failure with %q", err, out, tc.wantErr)
			}
		})
	}
}

func TestKernelPostinstHookNoBuilder(t *testing.T) {
	hook, _ := files.ReadFile("files/kernel-postinst")
	cmd := exec.Command("sh", "-c", string(hook), "hook", "6.1.0-9-amd64")
	cmd.Env = []string{"PATH=/usr/bin:/bin", "CLOUDROOT_MKINITRAMFS=/nonexistent"}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("with cloudroot removed the hook is a no-op, got %v: %s", err, out)
	}
}

func TestKernelPostrmHook(t *testing.T) {
	hook, _ := files.ReadFile("files/kernel-postrm")
	for _, tc := range []struct {
		name   string
		params string
		gone   bool
	}{
		{name: "remove", params: "'remove'", gone: true},
		{name: "no maintainer params", gone: true},
		{name: "purge keeps (remove did it)", params: "'purge'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			boot := t.TempDir()
			initrd := filepath.Join(boot, "initrd.img-6.1.0-9-amd64")
			if err := os.WriteFile(initrd, []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command("sh", "-c", string(hook), "hook", "6.1.0-9-amd64", filepath.Join(boot, "vmlinuz-6.1.0-9-amd64"))
			cmd.Env = []string{"PATH=/usr/bin:/bin", "DEB_MAINT_PARAMS=" + tc.params}
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			_, err := os.Stat(initrd)
			if gone := os.IsNotExist(err); gone != tc.gone {
				t.Errorf("initrd gone %v, want %v", gone, tc.gone)
			}
		})
	}
}
