package pkgmgr

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cloudroot/cloudroot/pkg/distro"
	"github.com/cloudroot/cloudroot/pkg/internal/golden"
	"github.com/cloudroot/cloudroot/pkg/modules"
	"github.com/cloudroot/cloudroot/pkg/modules/internal/modtest"
	"github.com/cloudroot/cloudroot/pkg/target"
)

// familyRoots are one target per distro family the package modules
// support: os-release plus the tools cloud-init looks for with which.
var familyRoots = []struct {
	name  string
	files map[string]string
}{
	{"debian", map[string]string{"etc/os-release": "ID=debian\nVERSION_ID=\"12\"\nVERSION_CODENAME=bookworm\n", "usr/bin/apt-get": ""}},
	{"ubuntu", map[string]string{"etc/os-release": "ID=ubuntu\nID_LIKE=debian\nVERSION_ID=\"24.04\"\nVERSION_CODENAME=noble\n", "usr/bin/apt-get": "", "usr/bin/snap": ""}},
	{"rocky", map[string]string{"etc/os-release": "ID=\"rocky\"\nID_LIKE=\"rhel centos fedora\"\nVERSION_ID=\"9.4\"\n"}},
	{"centos7", map[string]string{"etc/os-release": "ID=\"centos\"\nID_LIKE=\"rhel fedora\"\nVERSION_ID=\"7\"\n"}},
	{"opensuse", map[string]string{"etc/os-release": "ID=\"opensuse-leap\"\nID_LIKE=\"suse opensuse\"\nVERSION_ID=\"15.6\"\n"}},
	{"alpine", map[string]string{"etc/os-release": "ID=alpine\nVERSION_ID=3.20.3\n"}},
	{"arch", map[string]string{"etc/os-release": "ID=arch\n"}},
}

// recordRun runs m on a fresh target for each family and renders the
// commands (environment additions and argv) and the module's error.
func recordRun(t *testing.T, m modules.Module, cfg modules.Config, files map[string]string) string {
	t.Helper()
	c, rr, _ := testContext(t, cfg, files)
	rr.Answers = map[string]string{"snap get system -d": `{"refresh": {"timer": "00:00~24:00/4"}}`}
	err := m.Run(context.Background(), c)
	var b strings.Builder
	for i, argv := range rr.Calls {
		var env []string
		for _, kv := range rr.Envs[i] {
			if !strings.HasPrefix(kv, "PATH=") && !strings.HasPrefix(kv, "HOME=") && !strings.HasPrefix(kv, "LANG=") {
				env = append(env, kv)
			}
		}
		if len(env) > 0 {
			b.WriteString(strings.Join(env, " ") + " ")
		}
		fmt.Fprintf(&b, "%q\n", argv)
	}
	if err != nil {
		fmt.Fprintf(&b, "error: %v\n", err)
	}
	return b.String()
}

// TestPackagesGolden runs each testdata/packages/<case>/user-data.yaml on
// every family and compares the commands with want.<family>.txt.
func TestPackagesGolden(t *testing.T) {
	cases, _ := filepath.Glob("testdata/packages/*/user-data.yaml")
	if len(cases) == 0 {
		t.Fatal("no cases")
	}
	for _, ud := range cases {
		dir := filepath.Dir(ud)
		b, err := os.ReadFile(ud)
		if err != nil {
			t.Fatal(err)
		}
		for _, fam := range familyRoots {
			t.Run(filepath.Base(dir)+"/"+fam.name, func(t *testing.T) {
				got := recordRun(t, PackageUpdateUpgradeInstall, yamlCfg(t, string(b)), fam.files)
				golden.CheckString(t, filepath.Join(dir, "want."+fam.name+".txt"), got)
				// The same case run by upstream cloud-init
				// (scripts/goldens/packages.py), compared as commands:
				// upstream installs from sets (any order) and filters apt
				// names through `apt-cache pkgnames`; error texts differ.
				up, err := os.ReadFile(filepath.Join(dir, "upstream."+fam.name+".txt"))
				if err != nil {
					t.Fatalf("%v (run scripts/goldens/packages.py)", err)
				}
				if d := cmp.Diff(normalizeCommands(string(up)), normalizeCommands(got)); d != "" {
					t.Errorf("differs from upstream cloud-init (-upstream +cloudroot):\n%s", d)
				}
			})
		}
	}
}

func TestPackagesDecode(t *testing.T) {
	p, err := decodePackages(modtest.Typed[packagesKeys](yamlCfg(t, `
apt_update: true
package_upgrade: false
apt_upgrade: on
packages:
- a
- [b, "1.0"]
- {snap: [c, [d, --edge]], apt: [e]}
- apt: [f]
`)))
	if err != nil {
		t.Fatal(err)
	}
	want := packagesConfig{
		Update: true, Upgrade: true,
		Generic: []distro.Package{{Name: "a"}, {Name: "b", Version: "1.0"}},
		ByManager: []managerPackages{
			{Manager: "apt", Packages: []distro.Package{{Name: "e"}, {Name: "f"}}},
			{Manager: "snap", Packages: []distro.Package{{Name: "c"}, {Name: "d", Version: "--edge"}}},
		},
		Deprecated: []string{
			"apt_update: Deprecated in version 22.2. Use ``package_update`` instead.",
			"apt_upgrade: Deprecated in version 22.2. Use ``package_upgrade`` instead.",
		},
	}
	if d := cmp.Diff(want, p); d != "" {
		t.Errorf("-want +got:\n%s", d)
	}
	if _, err := decodePackages(modtest.Typed[packagesKeys](yamlCfg(t, "packages: [[a, b, c]]\n"))); !errors.Is(err, distro.ErrBadPackage) {
		t.Errorf("three-item entry: err = %v, want ErrBadPackage", err)
	}
}

func TestPackagesNoManager(t *testing.T) {
	got := recordRun(t, PackageUpdateUpgradeInstall, yamlCfg(t, "packages: [x]\n"),
		map[string]string{"etc/os-release": "ID=netbsd\n"})
	if !strings.Contains(got, "error: distro netbsd has no package manager cloudroot knows") || strings.Contains(got, "[") {
		t.Errorf("got %q", got)
	}
	// Nothing asked: nothing said.
	if got := recordRun(t, PackageUpdateUpgradeInstall, yamlCfg(t, "package_update: false\n"),
		map[string]string{"etc/os-release": "ID=netbsd\n"}); got != "" {
		t.Errorf("got %q", got)
	}
}

// TestPackagesUpdateOncePerInstance: the source refresh is once per
// instance, shared with later runs (cloud-init's update-sources semaphore).
func TestPackagesUpdateOncePerInstance(t *testing.T) {
	c, rr, _ := testContext(t, yamlCfg(t, "package_update: true\npackages: [a]\n"), familyRoots[0].files)
	for range 2 {
		if err := PackageUpdateUpgradeInstall.Run(context.Background(), c); err != nil {
			t.Fatal(err)
		}
	}
	var updates int
	for _, a := range rr.Calls {
		if a[len(a)-1] == "update" {
			updates++
		}
	}
	if updates != 1 || len(rr.Calls) != 3 {
		t.Errorf("calls %q: want one update and two installs", rr.Calls)
	}
}

// TestPackagesReboot: a marker after an install runs /sbin/reboot and, if
// the system is still up after cloud-init's wait, the module fails.
func TestPackagesReboot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		files := map[string]string{"run/reboot-needed": ""}
		for k, v := range familyRoots[5].files {
			files[k] = v
		}
		c, rr, _ := testContext(t, yamlCfg(t, "package_reboot_if_required: true\npackages: [a]\n"), files)
		start := time.Now()
		err := PackageUpdateUpgradeInstall.Run(context.Background(), c)
		if err == nil || !strings.Contains(err.Error(), "Reboot did not happen after 63 seconds!") {
			t.Errorf("err = %v", err)
		}
		if time.Since(start) != RebootWait {
			t.Errorf("waited %v", time.Since(start))
		}
		if last := rr.Calls[len(rr.Calls)-1]; !cmp.Equal(last, RebootCommand) {
			t.Errorf("last command %q", last)
		}
	})
	// No marker, or only an update: no reboot.
	for _, cfg := range []string{"package_reboot_if_required: true\npackages: [a]\n",
		"package_reboot_if_required: true\npackage_update: true\n"} {
		files := map[string]string{"var/run/reboot-required": ""}
		if strings.Contains(cfg, "packages") {
			files = nil
		}
		for k, v := range familyRoots[5].files {
			if files == nil {
				files = map[string]string{}
			}
			files[k] = v
		}
		got := recordRun(t, PackageUpdateUpgradeInstall, yamlCfg(t, cfg), files)
		if strings.Contains(got, "reboot") {
			t.Errorf("%q: %s", cfg, got)
		}
	}
}

// TestPackagesFailureGoesOn: a failed upgrade does not stop the install.
func TestPackagesFailureGoesOn(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "etc"), 0o755)
	os.WriteFile(filepath.Join(dir, "etc/os-release"), []byte("ID=alpine\n"), 0o644)
	rr := &modtest.Recorder{Fail: map[string]error{"--available": errors.New("exit status 1")}}
	root, _ := target.New(dir, target.WithRunner(rr))
	c := &modules.Context{Root: root, Config: yamlCfg(t, "package_upgrade: true\npackages: [a]\n"), InstanceID: "i",
		Distro: distro.Detect(root.ReadFile), Log: slog.New(slog.DiscardHandler), Out: io.Discard,
		Now: time.Now}
	err := PackageUpdateUpgradeInstall.Run(context.Background(), c)
	if err == nil || !strings.Contains(err.Error(), "Package upgrade failed") {
		t.Errorf("err = %v", err)
	}
	if last := rr.Calls[len(rr.Calls)-1]; last[len(last)-1] != "a" {
		t.Errorf("install did not run: %q", rr.Calls)
	}
}

// normalizeCommands makes command logs comparable across set orders: each
// line's words sorted, runs of snap installs sorted, apt-cache pkgnames
// dropped, an error kept only as "error".
func normalizeCommands(s string) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		switch {
		case l == "" || l == `["apt-cache" "pkgnames"]`:
			continue
		case strings.HasPrefix(l, "error: "):
			l = "error"
		default:
			w := strings.Fields(strings.NewReplacer("[", " ", "]", " ").Replace(l))
			sort.Strings(w)
			l = strings.Join(w, " ")
		}
		out = append(out, l)
	}
	for i := 0; i < len(out); {
		j := i
		for j < len(out) && strings.Contains(out[j], `"snap"`) && strings.Contains(out[j], `"install"`) {
			j++
		}
		if j > i {
			sort.Strings(out[i:j])
			i = j
		} else {
			i++
		}
	}
	return out
}
