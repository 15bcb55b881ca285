package cli

import (
	"bytes"
	"context"
	"fmt"
	"github.com/cloudroot/cloudroot/pkg/internal/golden"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cloudroot/cloudroot/pkg/distro"
	"github.com/cloudroot/cloudroot/templates"
)

// installEnv is an Env for install/generator tests rooted at root.
func installEnv(root string) (*Env, *bytes.Buffer, *bytes.Buffer) {
	env, out, errb := newTestEnv(root)
	env.Log = slog.New(slog.DiscardHandler)
	return env, out, errb
}

// TestInstallGolden runs `cloudroot install` on each testdata/install/<case>:
// root/ is the image's tree before, args the extra arguments (one a line),
// want.tree the tree after (every path, its mode, link target or content),
// want.out stdout and stderr with the temp root shown as ROOT, want.code
// the exit code. -update rewrites the want files.
func TestInstallGolden(t *testing.T) {
	cases, err := filepath.Glob("testdata/install/*")
	if err != nil || len(cases) == 0 {
		t.Fatalf("no cases: %v", err)
	}
	for _, c := range cases {
		t.Run(filepath.Base(c), func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "root")
			copyInstallRoot(t, filepath.Join(c, "root"), root)
			agent := filepath.Join(t.TempDir(), "cloudroot")
			if err := os.WriteFile(agent, []byte("the agent binary\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			args := []string{"--root", root, "--agent", agent}
			if b, err := os.ReadFile(filepath.Join(c, "args")); err == nil {
				args = append(args, strings.Fields(string(b))...)
			}
			before := dumpTree(t, root)
			env, out, errb := installEnv(root)
			code := runInstall(context.Background(), env, args)
			gotOut := strings.ReplaceAll(out.String()+errb.String(), root, "ROOT")
			gotTree := dumpTree(t, root)
			golden.Check(t, filepath.Join(c, "want.code"), []byte(fmt.Sprintf("%d\n", code)))
			golden.Check(t, filepath.Join(c, "want.out"), []byte(gotOut))
			golden.Check(t, filepath.Join(c, "want.tree"), []byte(gotTree))
			if code != 0 || slices.Contains(args, "--dry-run") {
				if gotTree != before {
					t.Errorf("the tree changed although nothing was to be written:\n%s", cmp.Diff(before, gotTree))
				}
				return
			}
			// A second run changes nothing and says so.
			env, out, _ = installEnv(root)
			if code := runInstall(context.Background(), env, args); code != 0 {
				t.Fatalf("second run: exit %d", code)
			}
			for line := range strings.SplitSeq(strings.TrimSpace(out.String()), "\n") {
				if !strings.HasPrefix(line, "unchanged ") && !strings.HasPrefix(line, "note: ") && !strings.HasPrefix(line, "replaced ") {
					t.Errorf("second run changed something: %s", line)
				}
			}
			if again := dumpTree(t, root); again != gotTree {
				t.Errorf("second run changed the tree:\n%s", cmp.Diff(gotTree, again))
			}
		})
	}
}

// TestInstallDryRunListsTheSame: --dry-run announces exactly what a real run
// then does.
func TestInstallDryRunListsTheSame(t *testing.T) {
	for _, initSys := range []string{InitSystemd, InitOpenRC, InitSysvinit} {
		t.Run(initSys, func(t *testing.T) {
			root := t.TempDir()
			agent := filepath.Join(t.TempDir(), "cloudroot")
			if err := os.WriteFile(agent, []byte("agent\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			args := []string{"--root", root, "--agent", agent, "--init", initSys}
			env, dry, _ := installEnv(root)
			if code := runInstall(context.Background(), env, append(args, "--dry-run")); code != 0 {
				t.Fatalf("dry run: exit %d", code)
			}
			env, real, _ := installEnv(root)
			if code := runInstall(context.Background(), env, args); code != 0 {
				t.Fatalf("run: exit %d", code)
			}
			want := strings.ReplaceAll(dry.String(), "would ", "")
			if diff := cmp.Diff(want, real.String()); diff != "" {
				t.Errorf("dry run vs run (-dry +real):\n%s", diff)
			}
		})
	}
}

func TestInstallArguments(t *testing.T) {
	root := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no root", nil, 2, "--root is required"},
		{"extra argument", []string{"--root", root, "x"}, 2, "unexpected arguments: x"},
		{"unknown init", []string{"--root", root, "--init", "upstart", "--agent", "/dev/null"}, 1, `unknown init system "upstart"`},
		{"undetectable init", []string{"--root", root, "--agent", "/dev/null"}, 1, "cannot tell the root's init system"},
		{"missing root", []string{"--root", filepath.Join(root, "nope")}, 1, "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env, _, errb := installEnv(root)
			if code := runInstall(context.Background(), env, tc.args); code != tc.code || !strings.Contains(errb.String(), tc.want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, errb.String(), tc.code, tc.want)
			}
		})
	}
}

func TestDpkgInstalled(t *testing.T) {
	status := "Package: cloud-init\nStatus: install ok installed\nVersion: 22.4\n\nPackage: cloud-utils\nStatus: deinstall ok config-files\n\nPackage: gone\nStatus: purge ok not-installed\n"
	for pkg, want := range map[string]bool{"cloud-init": true, "cloud-utils": false, "gone": false, "other": false} {
		if got := dpkgInstalled([]byte(status), pkg); got != want {
			t.Errorf("dpkgInstalled(%s) = %v, want %v", pkg, got, want)
		}
	}
}

func TestParseInstall(t *testing.T) {
	got := parseInstall([]byte("[Unit]\nWantedBy=nope.target\n[Install]\n# c\nWantedBy=a.target b.target\nRequiredBy=c.service\nAlias=x.service\n"))
	want := unitInstall{wantedBy: []string{"a.target", "b.target"}, requiredBy: []string{"c.service"}, alias: []string{"x.service"}}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(unitInstall{})); diff != "" {
		t.Errorf("parseInstall (-want +got):\n%s", diff)
	}
}

func TestArgv(t *testing.T) {
	for _, tc := range []struct{ in, want []string }{
		{[]string{"/usr/bin/cloudroot", "status"}, []string{"status"}},
		{[]string{"cloud-init", "status", "--wait"}, []string{"status", "--wait"}},
		{[]string{"/usr/lib/systemd/system-generators/cloudroot-generator", "/a", "/b", "/c"}, []string{"generator", "/a", "/b", "/c"}},
		{nil, nil},
	} {
		if got := Argv(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("Argv(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestGenerator runs the generator on fake roots: with cloudroot's
// hand-off state (the initramfs's ds-identify decided), and without it,
// where ds-identify runs in-process on the root's /sys, /proc/cmdline and
// /etc/cloud, as cloud-init's generator runs it.
func TestGenerator(t *testing.T) {
	const link = "early/multi-user.target.wants/cloud-init.target"
	const handoff = "run/cloud-init/cloudroot/state.json"
	for _, tc := range []struct {
		name    string
		files   map[string]string
		env     string
		enabled bool
		log     []string
		// cloudCfg is /run/cloud-init/cloud.cfg afterwards ("": none).
		cloudCfg string
		// identified: ds-identify ran (its log and result are there).
		identified bool
		// inRoot: the in-root stage units run on this boot (not masked).
		inRoot bool
	}{
		{name: "initramfs enabled", files: map[string]string{handoff: "{}", "proc/cmdline": "console=ttyS0 root=LABEL=cloudimg-rootfs\n", "run/cloud-init/enabled": ""},
			enabled: true, log: []string{"its ds-identify decided", "enabled via "}},
		{name: "initramfs, kernel cmdline", files: map[string]string{handoff: "{}", "proc/cmdline": "quiet cloud-init=disabled\n"},
			log: []string{"cloud-init=disabled on the kernel command line", "cloud-init is disabled by kernel command line or etc_file", "disabled. removed existing "}},
		{name: "initramfs, marker file", files: map[string]string{handoff: "{}", "etc/cloud/cloud-init.disabled": ""},
			log: []string{"/etc/cloud/cloud-init.disabled exists"}},
		{name: "initramfs, its ds-identify", files: map[string]string{handoff: "{}", "run/cloud-init/disabled": ""},
			log: []string{"ds-identify in the initramfs disabled it", "cloud-init is enabled but no datasource found, disabling"}},
		{name: "initramfs, container env", files: map[string]string{handoff: "{}"}, env: "cloud-init=disabled",
			log: []string{"KERNEL_CMDLINE=cloud-init=disabled"}},
		{name: "state of the in-root local stage", files: map[string]string{handoff: "{}", "run/cloud-init/cloudroot/in-root": ""},
			enabled: true, inRoot: true, log: []string{"enabled via "}},

		{inRoot: true, name: "in-root, NoCloud seed", files: map[string]string{"proc/cmdline": "root=/dev/vda1\n",
			"var/lib/cloud/seed/nocloud/meta-data": "instance-id: i-1\n", "var/lib/cloud/seed/nocloud/user-data": "#cloud-config\n"},
			enabled: true, identified: true, cloudCfg: "datasource_list: [ NoCloud, None ]\n",
			log: []string{"checking for datasource", "no cloudroot initramfs state for this boot: running ds-identify in the root", "ds-identify rc=0", "enabled via "}},
		{inRoot: true, name: "in-root, ds=nocloud in the DMI serial", files: map[string]string{"proc/cmdline": "root=/dev/vda1\n",
			"sys/class/dmi/id/product_serial": "ds=nocloud;s=http://10.0.2.2/\n"},
			enabled: true, identified: true, cloudCfg: "datasource_list: [ NoCloud, None ]\n", log: []string{"ds-identify rc=0"}},
		{inRoot: true, name: "in-root, nothing found", files: map[string]string{"proc/cmdline": "root=/dev/vda1\n", "run/cloud-init/enabled": ""},
			identified: true, cloudCfg: "di_report:\n  datasource_list: [  ]\n  # reporting not found result. notfound=disabled.\n",
			log: []string{"ds-identify rc=1", "cloud-init is enabled but no datasource found, disabling", "removing "}},
		{inRoot: true, name: "in-root, kernel cmdline", files: map[string]string{"proc/cmdline": "quiet cloud-init=disabled\n"},
			identified: true, log: []string{"ds-identify rc=2", "cloud-init is disabled by kernel command line or etc_file"}},
		{inRoot: true, name: "in-root, marker file", files: map[string]string{"proc/cmdline": "root=/dev/vda1\n", "etc/cloud/cloud-init.disabled": ""},
			identified: true, log: []string{"ds-identify rc=2"}},
		{inRoot: true, name: "in-root, a single datasource configured", files: map[string]string{"proc/cmdline": "root=/dev/vda1\n",
			"etc/cloud/cloud.cfg.d/90_dpkg.cfg": "datasource_list: [ None ]\n"},
			enabled: true, identified: true, cloudCfg: "datasource_list: [ None ]\n", log: []string{"ds-identify rc=0", "single entry in datasource_list"}},
		{inRoot: true, name: "in-root, an earlier answer is reused", files: map[string]string{"proc/cmdline": "root=/dev/vda1\n",
			"run/cloud-init/cloud.cfg": "datasource_list: [ Ec2, None ]\n", "run/cloud-init/.ds-identify.result": "0\n"},
			enabled: true, cloudCfg: "datasource_list: [ Ec2, None ]\n", log: []string{"ds-identify rc=0 (cached in run/cloud-init/.ds-identify.result)", "enabled via "}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("KERNEL_CMDLINE", tc.env)
			t.Setenv("SYSTEMD_VIRTUALIZATION", "vm:kvm")
			root := t.TempDir()
			for p, c := range tc.files {
				writeTestFile(t, filepath.Join(root, p), c)
			}
			// A link left from an earlier boot's generator run must go when disabled.
			if !tc.enabled {
				if err := os.MkdirAll(filepath.Dir(filepath.Join(root, link)), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink("/usr/lib/systemd/system/cloud-init.target", filepath.Join(root, link)); err != nil {
					t.Fatal(err)
				}
			}
			env, _, errb := installEnv(root)
			args := []string{filepath.Join(root, "normal"), filepath.Join(root, "early"), filepath.Join(root, "late")}
			if code := runGenerator(context.Background(), env, args); code != 0 {
				t.Fatalf("exit %d: %s", code, errb.String())
			}
			target, err := os.Readlink(filepath.Join(root, link))
			if tc.enabled && target != "/usr/lib/systemd/system/cloud-init.target" {
				t.Errorf("enabled: %s -> %q (%v), want the cloud-init.target link", link, target, err)
			}
			if !tc.enabled && err == nil {
				t.Errorf("disabled, but %s -> %s is there", link, target)
			}
			on, off := "enabled", "disabled"
			if !tc.enabled {
				on, off = off, on
			}
			if _, err := os.Stat(filepath.Join(root, "run/cloud-init", on)); err != nil {
				t.Errorf("no /run/cloud-init/%s marker: %v", on, err)
			}
			if _, err := os.Stat(filepath.Join(root, "run/cloud-init", off)); err == nil {
				t.Errorf("/run/cloud-init/%s is still there", off)
			}
			b, _ := os.ReadFile(filepath.Join(root, "run/cloud-init/cloud-init-generator.log"))
			for _, l := range tc.log {
				if !strings.Contains(string(b), l) {
					t.Errorf("generator log %q lacks %q", b, l)
				}
			}
			cfg, _ := os.ReadFile(filepath.Join(root, "run/cloud-init/cloud.cfg"))
			if string(cfg) != tc.cloudCfg {
				t.Errorf("/run/cloud-init/cloud.cfg = %q, want %q", cfg, tc.cloudCfg)
			}
			// After the initramfs's hand-off the in-root units are masked:
			// their ordering (cloudroot-network after
			// systemd-networkd-wait-online, before sysinit.target and sshd)
			// would hold the boot although their conditions skip them.
			for _, u := range []string{"cloudroot-local.service", "cloudroot-network.service"} {
				target, err := os.Readlink(filepath.Join(root, "early", u))
				if tc.inRoot && err == nil {
					t.Errorf("in-root stages run, but %s is masked (-> %s)", u, target)
				}
				if !tc.inRoot && target != "/dev/null" {
					t.Errorf("initramfs hand-off: early/%s -> %q (%v), want masked (-> /dev/null)", u, target, err)
				}
			}
			_, lerr := os.Stat(filepath.Join(root, "run/cloud-init/ds-identify.log"))
			if (lerr == nil) != tc.identified {
				t.Errorf("ds-identify.log: %v, want ds-identify run %v", lerr, tc.identified)
			}
		})
	}
}

func writeTestFile(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// copyInstallRoot copies a golden case's root (files and symlinks; a file named
// .keep only makes its directory exist) into dst.
func copyInstallRoot(t *testing.T, src, dst string) {
	t.Helper()
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		out := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(out, 0o755)
		case d.Type()&fs.ModeSymlink != 0:
			l, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(l, out)
		case d.Name() == ".keep":
			return nil
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			fi, err := d.Info()
			if err != nil {
				return err
			}
			return os.WriteFile(out, b, fi.Mode().Perm())
		}
	})
	if err != nil {
		t.Fatalf("copying %s: %v", src, err)
	}
}

// dumpTree lists every path under root, sorted: "d MODE path", "l path ->
// target", or "f MODE path" followed by the content, each line prefixed
// "  | " — or, for content that is an embedded template or the distro's
// default cloud.cfg, "  = " and its name (so a template's wording changes
// no golden tree; the templates have their own tests).
func dumpTree(t *testing.T, root string) string {
	t.Helper()
	known := map[string]string{}
	err := fs.WalkDir(templates.FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := templates.FS.ReadFile(p)
		known[string(b)] = "templates/" + p
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	info := distro.Detect(func(p string) ([]byte, error) { return os.ReadFile(filepath.Join(root, p)) })
	if cfg, err := distro.DefaultCloudConfig(info); err == nil {
		known[string(cfg)] = "the default cloud.cfg of " + info.Variant()
	}
	var b strings.Builder
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == root {
			return err
		}
		rel := "/" + filepath.ToSlash(strings.TrimPrefix(p, root+string(filepath.Separator)))
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		switch {
		case fi.IsDir():
			fmt.Fprintf(&b, "d %04o %s\n", fi.Mode().Perm(), rel)
		case fi.Mode()&fs.ModeSymlink != 0:
			l, err := os.Readlink(p)
			if err != nil {
				return err
			}
			fmt.Fprintf(&b, "l %s -> %s\n", rel, l)
		default:
			fmt.Fprintf(&b, "f %04o %s\n", fi.Mode().Perm(), rel)
			c, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			if name, ok := known[string(c)]; ok {
				fmt.Fprintf(&b, "  = %s\n", name)
				return nil
			}
			for line := range strings.SplitSeq(strings.TrimSuffix(string(c), "\n"), "\n") {
				fmt.Fprintf(&b, "  | %s\n", line)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("listing %s: %v", root, err)
	}
	return b.String()
}
