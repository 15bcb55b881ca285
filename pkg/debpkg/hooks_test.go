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

// fakeBuilder writes a builder that logs its arguments to the returned log
// and, unless it fails, writes the -o file when it is under dir (never
// anywhere else on the host).
func fakeBuilder(t *testing.T, dir string, fail bool) (builder, log string) {
	t.Helper()
	log = filepath.Join(dir, "builder.log")
	rc := "0"
	if fail {
		rc = "1"
	}
	builder = filepath.Join(dir, "builder")
	script := "#!/bin/sh\necho \"$@\" >>" + log + "\n[ " + rc + " = 0 ] || { echo builder failed >&2; exit 1; }\n" +
		"while [ $# -gt 0 ]; do [ \"$1\" = -o ] && case \"$2\" in " + dir + "/*) echo built >\"$2\" ;; esac; shift; done\n"
	if err := os.WriteFile(builder, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return builder, log
}

func TestUpdateInitramfs(t *testing.T) {
	if _, err := exec.LookPath("getopt"); err != nil {
		t.Skip("no getopt (util-linux)")
	}
	const old, cur, bare = "6.1.0-9-amd64", "6.1.0-10-amd64", "6.1.0-11-amd64"
	built := func(boot string, vs ...string) string {
		var b strings.Builder
		for _, v := range vs {
			b.WriteString("-installed -kernel-version " + v + " -o " + boot + "/initrd.img-" + v + "\n")
		}
		return b.String()
	}
	for _, tc := range []struct {
		name     string
		args     []string
		env      []string
		fail     bool
		wantLog  func(boot string) string
		wantGone []string // initrds deleted
		wantOut  string
		wantRC   int
		noBoot   bool // no -b: the arguments exactly as given
	}{
		// bare has no initrd: -u leaves it alone, as initramfs-tools does.
		{name: "update the newest with an initrd", args: []string{"-u"}, wantLog: func(b string) string { return built(b, cur) }},
		{name: "update all", args: []string{"-u", "-k", "all"}, wantLog: func(b string) string { return built(b, cur, old) }},
		{name: "combined flags", args: []string{"-uk", "all"}, wantLog: func(b string) string { return built(b, cur, old) }},
		{name: "update one", args: []string{"-u", "-k", old}, wantLog: func(b string) string { return built(b, old) }},
		{name: "create all", args: []string{"-c", "-k", "all"}, wantLog: func(b string) string { return built(b, bare, cur, old) }},
		{name: "create one", args: []string{"-c", "-k", bare, "-v"}, wantLog: func(b string) string { return built(b, bare) }, wantOut: "Generating"},
		{name: "delete", args: []string{"-d", "-k", old}, wantGone: []string{old}, wantOut: "Deleting"},
		{name: "delete all", args: []string{"-d", "-k", "all", "-t"}, wantGone: []string{old, cur}},
		{name: "create needs a version", args: []string{"-c"}, wantRC: 2, wantOut: "requires a version"},
		{name: "a mode is required", args: []string{"-k", "all"}, wantRC: 2, wantOut: "at least one of -c, -u, or -d"},
		{name: "a failed build fails", args: []string{"-u", "-k", "all"}, fail: true, wantRC: 1,
			wantLog: func(b string) string { return built(b, cur) }, wantOut: "failed for"},
		// From another package's maintainer script: the dpkg trigger.
		{name: "deferred to the trigger", args: []string{"-u"}, env: []string{"DPKG_MAINTSCRIPT_PACKAGE=firmware-misc-nonfree"},
			noBoot: true, wantOut: "deferring update (trigger activated)"},
		{name: "not deferred with other options", args: []string{"-u", "-k", old}, env: []string{"DPKG_MAINTSCRIPT_PACKAGE=firmware-misc-nonfree"},
			wantLog: func(b string) string { return built(b, old) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			boot := filepath.Join(dir, "boot")
			bin := filepath.Join(dir, "bin")
			for _, d := range []string{boot, bin} {
				if err := os.Mkdir(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			for _, f := range []string{"vmlinuz-" + old, "vmlinuz-" + cur, "vmlinuz-" + bare, "initrd.img-" + old, "initrd.img-" + cur, "config-" + cur} {
				if err := os.WriteFile(filepath.Join(boot, f), []byte("x"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			trig := filepath.Join(dir, "trigger.log")
			if err := os.WriteFile(filepath.Join(bin, "dpkg-trigger"), []byte("#!/bin/sh\necho \"$@\" >>"+trig+"\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			builder, logPath := fakeBuilder(t, dir, tc.fail)
			script, _ := files.ReadFile("files/update-initramfs")
			args := append([]string{"-c", string(script), "update-initramfs"}, tc.args...)
			if !tc.noBoot {
				args = append(args, "-b", boot)
			}
			cmd := exec.Command("sh", args...)
			cmd.Env = append([]string{"PATH=" + bin + ":/usr/bin:/bin", "CLOUDROOT_MKINITRAMFS=" + builder}, tc.env...)
			out, err := cmd.CombinedOutput()
			rc := 0
			if ee, ok := err.(*exec.ExitError); ok {
				rc = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if rc != tc.wantRC {
				t.Errorf("exit %d, want %d; output:\n%s", rc, tc.wantRC, out)
			}
			if !strings.Contains(string(out), tc.wantOut) {
				t.Errorf("output lacks %q:\n%s", tc.wantOut, out)
			}
			log, _ := os.ReadFile(logPath)
			want := ""
			if tc.wantLog != nil {
				want = tc.wantLog(boot)
			}
			if string(log) != want {
				t.Errorf("builder calls:\n%s\nwant:\n%s", log, want)
			}
			for _, v := range tc.wantGone {
				if _, err := os.Stat(filepath.Join(boot, "initrd.img-"+v)); !os.IsNotExist(err) {
					t.Errorf("initrd.img-%s still there", v)
				}
			}
			tl, _ := os.ReadFile(trig)
			if deferred := strings.Contains(tc.wantOut, "deferring"); deferred != (string(tl) == "--no-await update-initramfs\n") {
				t.Errorf("dpkg-trigger calls %q, deferred %v", tl, deferred)
			}
		})
	}
}

func TestKernelInstallPlugin(t *testing.T) {
	const v = "6.1.0-9-amd64"
	for _, tc := range []struct {
		name      string
		args      []string
		staging   bool
		preset    bool // an initrd already staged
		fail      bool
		wantBuilt bool
		wantErr   bool
	}{
		{name: "add builds into the staging area", args: []string{"add", v, "/efi/entry", "/boot/vmlinuz-" + v}, staging: true, wantBuilt: true},
		{name: "an initrd given wins", args: []string{"add", v, "/efi/entry", "/boot/vmlinuz-" + v}, staging: true, preset: true},
		{name: "no staging area (old kernel-install)", args: []string{"add", v, "/efi/entry", "/boot/vmlinuz-" + v}},
		{name: "remove does nothing", args: []string{"remove", v, "/efi/entry"}, staging: true},
		{name: "a failed build fails kernel-install", args: []string{"add", v, "/efi/entry", "/boot/vmlinuz-" + v}, staging: true, fail: true, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			builder, logPath := fakeBuilder(t, dir, tc.fail)
			stage := filepath.Join(dir, "staging")
			if err := os.Mkdir(stage, 0o755); err != nil {
				t.Fatal(err)
			}
			if tc.preset {
				if err := os.WriteFile(filepath.Join(stage, "initrd"), []byte("given"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			plugin, _ := files.ReadFile("files/kernel-install")
			cmd := exec.Command("sh", append([]string{"-c", string(plugin), "50-cloudroot.install"}, tc.args...)...)
			cmd.Env = []string{"PATH=/usr/bin:/bin", "CLOUDROOT_MKINITRAMFS=" + builder}
			if tc.staging {
				cmd.Env = append(cmd.Env, "KERNEL_INSTALL_STAGING_AREA="+stage)
			}
			out, err := cmd.CombinedOutput()
			if (err != nil) != tc.wantErr {
				t.Errorf("plugin: %v, want error %v:\n%s", err, tc.wantErr, out)
			}
			log, _ := os.ReadFile(logPath)
			wantLog := ""
			if tc.wantBuilt || tc.fail {
				wantLog = "-installed -kernel-version " + v + " -o " + stage + "/initrd\n"
			}
			if string(log) != wantLog {
				t.Errorf("builder calls %q, want %q", log, wantLog)
			}
			b, _ := os.ReadFile(filepath.Join(stage, "initrd"))
			switch {
			case tc.preset && string(b) != "given":
				t.Errorf("the given initrd was replaced: %q", b)
			case tc.wantBuilt && string(b) != "built\n":
				t.Errorf("staged initrd %q, want the builder's", b)
			}
		})
	}
}
