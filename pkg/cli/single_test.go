package cli

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cloudroot/cloudroot/pkg/state"
)

// writeState puts a hand-off state with cfg into root.
func writeState(t *testing.T, root string, cfg map[string]any) {
	t.Helper()
	s := &state.State{InstanceID: "iid-test", Config: cfg}
	s.Datasource.Description = "DataSourceNoCloud [seed=/dev/vdb]"
	b, err := state.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(root, state.StateFile)
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(root, "etc"), 0o755)
	os.WriteFile(filepath.Join(root, "etc/passwd"), []byte("root:x:0:0:root:/root:/bin/sh\n"), 0o644)
	os.WriteFile(filepath.Join(root, "etc/group"), []byte("root:x:0:\n"), 0o644)
}

func TestSingle(t *testing.T) {
	root := t.TempDir()
	writeState(t, root, map[string]any{"write_files": []any{map[string]any{"path": "/etc/hello", "content": "hi\n"}}})
	run := func(args ...string) (int, string) {
		env, _, errb := newTestEnv(root)
		return Run(context.Background(), env, append([]string{"single"}, args...)), errb.String()
	}
	sem := filepath.Join(root, "var/lib/cloud/instances/iid-test/sem/config_write_files")

	if rc, errs := run("--name", "write-files"); rc != 0 {
		t.Fatalf("single write-files: exit %d: %s", rc, errs)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "etc/hello")); string(b) != "hi\n" {
		t.Errorf("/etc/hello = %q", b)
	}
	if _, err := os.Stat(sem); err != nil {
		t.Errorf("per-instance semaphore: %v", err)
	}
	// Already ran: not again, and that is success.
	os.Remove(filepath.Join(root, "etc/hello"))
	if rc, _ := run("--name", "write_files"); rc != 0 {
		t.Errorf("second run: exit %d", rc)
	}
	if _, err := os.Stat(filepath.Join(root, "etc/hello")); err == nil {
		t.Error("ran again despite its semaphore")
	}
	// --frequency always: runs, no semaphore needed.
	if rc, _ := run("-n", "cc_write_files", "--frequency", "always"); rc != 0 {
		t.Errorf("--frequency always: exit %d", rc)
	}
	if _, err := os.Stat(filepath.Join(root, "etc/hello")); err != nil {
		t.Error("--frequency always did not run the module")
	}
	// --file config on top of the hand-off.
	extra := filepath.Join(t.TempDir(), "extra.yaml")
	os.WriteFile(extra, []byte("write_files: [{path: /etc/other, content: x}]\n"), 0o644)
	if rc, errs := run("--name", "write_files", "--frequency", "always", "--file", extra); rc != 0 {
		t.Errorf("--file: exit %d: %s", rc, errs)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "etc/other")); string(b) != "x" {
		t.Errorf("--file config not used: /etc/other = %q", b)
	}
	// Unknown module: after the fetch, warnings go where 26.x's output
	// redirection sends them (stdout and cloud-init-output.log).
	env, outb, errb := newTestEnv(root)
	rc := Run(context.Background(), env, []string{"single", "--name", "nosuch"})
	if outs := outb.String(); rc != 1 || !strings.Contains(outs, "Did not run nosuch, does it exist?") || !strings.Contains(outs, "Could not find module named cc_nosuch") {
		t.Errorf("unknown module: exit %d, stdout %q", rc, outs)
	}
	// No hand-off state and no datasource: the list has no None.
	empty := t.TempDir()
	os.MkdirAll(filepath.Join(empty, "etc/cloud"), 0o755)
	os.WriteFile(filepath.Join(empty, "etc/cloud/cloud.cfg"), []byte("datasource_list: [NoCloud]\n"), 0o644)
	env, _, errb = newTestEnv(empty)
	if rc := Run(context.Background(), env, []string{"single", "--name", "write_files"}); rc != 1 || !strings.Contains(errb.String(), "Failed to fetch your datasource") {
		t.Errorf("no state: exit %d, stderr %q", rc, errb)
	}
}

// TestSingleNoDatasource is main_single without a datasource, as 26.2
// prints it (testdata/inroot-nostate has upstream's own records): the
// fetch failure on stderr, in print_exc's frame; without --force exit 1
// there; with --force the welcome, the module name resolved, then
// cloudify's RuntimeError and exit 1, no module run.
func TestSingleNoDatasource(t *testing.T) {
	const frame = "Failed to fetch your datasource, likely bad things to come!\n" +
		"------------------------------------------------------------\n" +
		"cloudinit.sources.DataSourceNotFoundException: Did not find any data source, searched classes: (%s)\n" +
		"------------------------------------------------------------\n"
	for _, tc := range []struct {
		name, list, classes string
		args                []string
		stdout              []string // lines, without the log lines' time
	}{
		{name: "empty list", list: "[]", args: []string{"single", "--name", "write_files"}},
		{name: "no seed", list: "[NoCloud]", classes: "DataSourceNoCloud", args: []string{"single", "--name", "write_files"}},
		{name: "force", list: "[]", args: []string{"--force", "single", "--name", "write_files", "--frequency", "always"},
			stdout: []string{"Cloud-init v. 26.2-cloudroot running 'single' at ", "RuntimeError: Datasource is not initialized."}},
		{name: "force unknown module", list: "[]", args: []string{"--force", "single", "--name", "nosuch"},
			stdout: []string{"Cloud-init v. 26.2-cloudroot running 'single' at ",
				"modules.py[WARNING]: Could not find module named cc_nosuch (searched ['cc_nosuch', 'cloudinit.config.cc_nosuch'])",
				"RuntimeError: Datasource is not initialized."}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			os.MkdirAll(filepath.Join(root, "etc/cloud"), 0o755)
			os.WriteFile(filepath.Join(root, "etc/cloud/cloud.cfg"), []byte("datasource_list: "+tc.list+"\nwrite_files: [{path: /etc/hello, content: hi}]\n"), 0o644)
			env, outb, errb := newTestEnv(root)
			if rc := Run(context.Background(), env, tc.args); rc != 1 {
				t.Errorf("exit %d, want 1", rc)
			}
			errs := errb.String()
			_, msg, _ := strings.Cut(errs, "]: ")
			if want := "Failed to fetch your datasource, likely bad things to come!\n" + fmt.Sprintf(frame, tc.classes); msg != want {
				t.Errorf("stderr %q, want a WARNING line then\n%s", errs, want)
			}
			lines := strings.Split(strings.TrimSuffix(outb.String(), "\n"), "\n")
			if outb.Len() == 0 {
				lines = nil
			}
			if len(lines) != len(tc.stdout) {
				t.Fatalf("stdout %q, want lines %q", outb, tc.stdout)
			}
			for i, l := range lines {
				if !strings.Contains(l, tc.stdout[i]) {
					t.Errorf("stdout line %d %q, want %q in it", i, l, tc.stdout[i])
				}
			}
			for _, p := range []string{"etc/hello", state.StateFile, "var/lib/cloud/instance"} {
				if _, err := os.Lstat(filepath.Join(root, p)); err == nil {
					t.Errorf("%s written", p)
				}
			}
		})
	}
}

func TestInitLocal(t *testing.T) {
	root := t.TempDir()
	writeState(t, root, map[string]any{})
	env, out, _ := newTestEnv(root)
	if rc := Run(context.Background(), env, []string{"init", "--local"}); rc != 0 {
		t.Fatalf("exit %d", rc)
	}
	if !strings.Contains(out.String(), "ran in the initramfs") || !strings.Contains(out.String(), "iid-test") {
		t.Errorf("stdout %q", out)
	}
	// No hand-off state: the local stage runs in the root (inroot_test.go).
	env, out, _ = newTestEnv(t.TempDir())
	if rc := Run(context.Background(), env, []string{"init", "-l"}); rc != 0 || !strings.Contains(out.String(), "running the init-local stage in the root") {
		t.Errorf("no state: exit %d, stdout %q", rc, out)
	}
}

// TestAllStagesProtocol plays the four stage units of 26.x: each connects
// to its socket, sends "start" and runs the answer.
func TestAllStagesProtocol(t *testing.T) {
	root := t.TempDir()
	writeState(t, root, map[string]any{"cloud_config_modules": []any{}, "cloud_final_modules": []any{}})
	env, _, errb := newTestEnv(root)
	done := make(chan int)
	go func() { done <- Run(context.Background(), env, []string{"--all-stages"}) }()
	for _, st := range syncStages {
		p := filepath.Join(root, ShareDir, st+".sock")
		var c net.Conn
		var err error
		for range 500 {
			if c, err = net.Dial("unix", p); err == nil {
				break
			}
			waitABit()
		}
		if err != nil {
			t.Fatalf("%s: %v", st, err)
		}
		c.Write([]byte("start"))
		b := make([]byte, 200)
		n, _ := readAll(c, b)
		c.Close()
		want := "echo 'Completed socket interaction for boot stage " + st + "'; exit 0;"
		if string(b[:n]) != want {
			t.Errorf("%s answered %q, want %q (stderr %s)", st, b[:n], want, errb)
		}
	}
	if rc := <-done; rc != 0 {
		t.Errorf("--all-stages exit %d: %s", rc, errb)
	}
}

func readAll(c net.Conn, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := c.Read(b[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

func waitABit() { <-time.After(10 * time.Millisecond) }

// TestModuleListNamesDegrade: names in a module list that cloud-init would
// not run are its lines in cloud-init.log, once each at its level, and its
// recoverable errors in status.json, so `status --long` says degraded
// (cloud-init 26.x: modules.py's WARNING for an unknown name, lifecycle's
// DEPRECATED for ubuntu_advantage, an INFO line only for a removed module).
func TestModuleListNamesDegrade(t *testing.T) {
	root := t.TempDir()
	writeState(t, root, map[string]any{"cloud_config_modules": []any{"no_such_module", "ubuntu_advantage", "migrator", "cc_runcmd"}, "runcmd": []any{}})
	env, _, errb := newTestEnv(root)
	if rc := Run(context.Background(), env, []string{"modules", "--mode", "config"}); rc != 0 {
		t.Fatalf("modules --mode config: exit %d: %s", rc, errb)
	}
	logb, err := os.ReadFile(filepath.Join(root, "var/log/cloud-init.log"))
	if err != nil {
		t.Fatal(err)
	}
	notFound := "Could not find module named cc_no_such_module (searched ['cc_no_such_module', 'cloudinit.config.cc_no_such_module'])"
	renamed := "Module has been renamed from cc_ubuntu_advantage to cc_ubuntu_pro. Update any references in /etc/cloud/cloud.cfg is deprecated in 24.1 and scheduled to be removed in 29.1."
	for _, l := range []string{
		"modules.py[WARNING]: " + notFound,
		"lifecycle.py[DEPRECATED]: " + renamed,
		"modules.py[INFO]: Module `migrator` has been removed from cloud-init. It may be removed from `/etc/cloud/cloud.cfg`.",
		"modules.py[INFO]: Skipping modules 'ubuntu_advantage' because no applicable config is provided.",
	} {
		if n := strings.Count(string(logb), " - "+l); n != 1 {
			t.Errorf("%d lines %q in cloud-init.log, want 1:\n%s", n, l, logb)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "var/lib/cloud/instances/iid-test/sem/config_cc_runcmd")); err != nil {
		t.Errorf("cc_runcmd's semaphore is named after the listed name: %v", err)
	}
	env, out, _ := newTestEnv(root)
	Run(context.Background(), env, []string{"status", "--long"})
	for _, want := range []string{"extended_status: degraded ", "WARNING:\n\t- " + notFound + "\n", "DEPRECATED:\n\t- " + renamed + "\n"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("status --long lacks %q:\n%s", want, out)
		}
	}
}

// TestSingleWithoutKey: `single` runs a module whose activation keys are
// absent (run_single checks neither keys nor distro) and takes its
// semaphore; the module itself does nothing without its config.
func TestSingleWithoutKey(t *testing.T) {
	root := t.TempDir()
	writeState(t, root, map[string]any{})
	env, _, errb := newTestEnv(root)
	if rc := Run(context.Background(), env, []string{"single", "--name", "timezone"}); rc != 0 {
		t.Fatalf("single timezone: exit %d: %s", rc, errb)
	}
	if _, err := os.Stat(filepath.Join(root, "var/lib/cloud/instances/iid-test/sem/config_timezone")); err != nil {
		t.Errorf("semaphore: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(root, "etc/localtime")); err == nil {
		t.Error("timezone changed /etc/localtime without a timezone key")
	}
	logb, _ := os.ReadFile(filepath.Join(root, "var/log/cloud-init.log"))
	if !strings.Contains(string(logb), "finish: single/config-timezone: SUCCESS") {
		t.Errorf("no config-timezone event:\n%s", logb)
	}
}
