package debpkg

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"
)

// testConfig is a Config with small fake binaries.
func testConfig(t *testing.T) Config {
	t.Helper()
	dir := t.TempDir()
	bin := func(name string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("#!/bin/sh\necho "+name+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	return Config{
		Version:     "1.0+test",
		Date:        time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC),
		Front:       bin("cloudroot"),
		Agent:       bin("cloudroot-agent"),
		Init:        bin("cloudroot-init"),
		Mkinitramfs: bin("cloudroot-mkinitramfs"),
		Lists: fstest.MapFS{
			"drivers.txt":          {Data: []byte("virtio_blk\n")},
			"profiles/minimal.txt": {Data: []byte("include ../drivers.txt\n")},
			"profiles/cloud.txt":   {Data: []byte("include ../drivers.txt\n")},
		},
	}
}

func TestTree(t *testing.T) {
	p, err := Tree(testConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Entry{}
	for _, e := range p.Entries {
		got[e.Path] = e
	}
	for path, want := range map[string]string{
		"/usr/bin/cloudroot":                                     "",
		"/usr/bin/cloud-init":                                    "->cloudroot",
		"/usr/lib/cloudroot/cloudroot-agent":                     "",
		"/usr/lib/systemd/system-generators/cloudroot-generator": "->../../cloudroot/cloudroot-agent",
		"/usr/lib/systemd/system/cloudroot-config.service":       "",
		"/etc/cloud/cloud.cfg":                                   "",
		MkinitramfsPath:                                          "",
		InitPath:                                                 "",
		ListsDir + "/drivers.txt":                                "",
		ListsDir + "/profiles/cloud.txt":                         "",
		InitramfsConfPath:                                        "",
		KernelPostinst:                                           "",
		KernelPostrm:                                             "",
		KernelInstall:                                            "",
		UpdateInitramfs:                                          "",
		DocDir + "/copyright":                                    "",
		DocDir + "/changelog.gz":                                 "",
	} {
		e, ok := got[path]
		if !ok {
			t.Errorf("no %s", path)
			continue
		}
		if l, _ := strings.CutPrefix(want, "->"); want != "" && e.Link != l {
			t.Errorf("%s -> %q, want %q", path, e.Link, l)
		}
	}
	for path, name := range map[string]string{"/usr/bin/cloudroot": "cloudroot", "/usr/lib/cloudroot/cloudroot-agent": "cloudroot-agent"} {
		if want := "#!/bin/sh\necho " + name + "\n"; string(got[path].Data) != want {
			t.Errorf("%s is %q, want the %s binary", path, got[path].Data, name)
		}
	}
	for path := range got {
		if strings.HasPrefix(path, "/etc/systemd/") {
			t.Errorf("%s: enable links are the maintainer scripts' to make", path)
		}
	}
	wantConf := []string{"/etc/cloud/cloud.cfg", InitramfsConfPath, KernelPostinst, KernelPostrm}
	if d := cmp.Diff(wantConf, p.Conffiles); d != "" {
		t.Errorf("conffiles -want +got:\n%s", d)
	}
	if !slices.Contains(p.Units, "cloudroot-config.service") || !slices.Contains(p.Units, "cloudroot-hostkeys.service") {
		t.Errorf("units to enable %v", p.Units)
	}
	ctl := p.Control(1)
	for _, f := range []string{
		"Package: cloudroot\n", "Version: 1.0+test\n", "Architecture: amd64\n",
		"Provides: linux-initramfs-tool\n",
		"Conflicts: cloud-init, initramfs-tools, linux-initramfs-tool\n",
		"Replaces: cloud-init, initramfs-tools\n",
	} {
		if !strings.Contains(ctl, f) {
			t.Errorf("control lacks %q:\n%s", f, ctl)
		}
	}
	post, err := p.script("postinst")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"deb-systemd-helper enable 'cloudroot-final.service'", "/etc/kernel/postinst.d/cloudroot \"$version\" \"$image\"", "update-grub", "triggered)\n"} {
		if !strings.Contains(string(post), s) {
			t.Errorf("postinst lacks %q", s)
		}
	}
	for _, name := range []string{"postinst", "postrm"} {
		b, err := p.script(name)
		if err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command("sh", "-n", "-c", string(b)).CombinedOutput(); err != nil {
			t.Errorf("%s: sh -n: %v: %s", name, err, out)
		}
	}
}

func TestBuild(t *testing.T) {
	if _, err := exec.LookPath("dpkg-deb"); err != nil {
		t.Skip("no dpkg-deb")
	}
	p, err := Tree(testConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	out, err := p.Build(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(out) != "cloudroot_1.0+test_amd64.deb" {
		t.Errorf("file %s", out)
	}
	b, err := exec.Command("dpkg-deb", "-c", out).CombinedOutput()
	if err != nil {
		t.Fatalf("dpkg-deb -c: %v: %s", err, b)
	}
	for _, s := range []string{
		"-rwxr-xr-x root/root", "./etc/kernel/postinst.d/cloudroot", "./usr/sbin/cloudroot-mkinitramfs",
		"./usr/bin/cloud-init -> cloudroot",
	} {
		if !strings.Contains(string(b), s) {
			t.Errorf("dpkg-deb -c lacks %q:\n%s", s, b)
		}
	}
	b, err = exec.Command("dpkg-deb", "-I", out, "triggers").CombinedOutput()
	if err != nil || string(b) != "interest-await update-initramfs\n" {
		t.Errorf("DEBIAN/triggers = %q (%v), want the update-initramfs interest", b, err)
	}
	b, err = exec.Command("dpkg-deb", "-f", out, "Conflicts").CombinedOutput()
	if err != nil || strings.TrimSpace(string(b)) != "cloud-init, initramfs-tools, linux-initramfs-tool" {
		t.Errorf("Conflicts: %q %v", b, err)
	}
}
