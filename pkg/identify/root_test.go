package identify

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
	"github.com/cloudroot/cloudroot/pkg/internal/testtree"
)

// makeSeedISO builds a real NoCloud ISO labelled cidata with genisoimage.
func makeSeedISO(t *testing.T, label string) []byte {
	t.Helper()
	tool, err := exec.LookPath("genisoimage")
	if err != nil {
		t.Skip("genisoimage not installed")
	}
	src := t.TempDir()
	testtree.Write(t, src, map[string]string{
		"meta-data": "instance-id: iid-fromroot\n",
		"user-data": "#cloud-config\nhostname: fromroot\n",
	})
	out := filepath.Join(t.TempDir(), "seed.iso")
	cmd := exec.Command(tool, "-quiet", "-output", out, "-volid", label, "-joliet", "-rock",
		filepath.Join(src, "user-data"), filepath.Join(src, "meta-data"))
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("genisoimage: %v\n%s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fakeRoot lays out a PATH_ROOT: DMI, cmdline, uname, and the seed ISO as
// dev/sr0 with its sysfs entry.
func fakeRoot(t *testing.T, iso []byte, extra map[string]string) string {
	t.Helper()
	root := t.TempDir()
	tree := map[string]string{
		"sys/class/dmi/id/sys_vendor":   "QEMU\n",
		"sys/class/dmi/id/product_name": "Standard PC (i440FX + PIIX, 1996)\n",
		"sys/class/dmi/id/board_name":   "\n",
		"proc/cmdline":                  "BOOT_IMAGE=/vmlinuz root=/dev/vda1 ro console=ttyS0\n",
		"proc/sys/kernel/ostype":        "Linux\n",
		"proc/sys/kernel/osrelease":     "6.1.0-18-amd64\n",
		"proc/sys/kernel/version":       "#1 SMP PREEMPT_DYNAMIC Debian 6.1.76-1 (2024-02-01)\n",
		"etc/cloud/cloud.cfg":           "users: [default]\n",
		"sys/class/block/sr0/dev":       "11:0\n",
		"sys/class/block/sr0/size":      strconv.Itoa((len(iso)+511)/512) + "\n",
		"sys/class/block/sr0/removable": "1\n",
		"dev/sr0":                       string(iso),
	}
	for k, v := range extra {
		tree[k] = v
	}
	testtree.Write(t, root, tree)
	return root
}

func TestFromRootSeedISO(t *testing.T) {
	iso := makeSeedISO(t, "cidata")
	root := fakeRoot(t, iso, nil)
	in, err := FromRoot(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(in.FS) != 1 || in.FS[0].Device != "/dev/sr0" || in.FS[0].Type != "iso9660" || in.FS[0].Label != "cidata" {
		t.Fatalf("FS = %+v, want /dev/sr0 iso9660 cidata", in.FS)
	}
	if got, want := in.DMI, (bootenv.DMI{SysVendor: "QEMU", ProductName: "Standard PC (i440FX + PIIX, 1996)"}); got != want {
		t.Errorf("DMI = %+v, want %+v", got, want)
	}
	if got := in.Cmdline.String(); got != "BOOT_IMAGE=/vmlinuz root=/dev/vda1 ro console=ttyS0" {
		t.Errorf("cmdline = %q", got)
	}
	if in.Uname.Sysname != "Linux" || in.Uname.Release != "6.1.0-18-amd64" || in.Uname.Machine == "" {
		t.Errorf("uname = %+v", in.Uname)
	}
	in.Virt = "kvm"
	r := Identify(in)
	if diff := cmp.Diff([]string{"NoCloud", "None"}, r.List); diff != "" || r.ExitCode != 0 {
		t.Fatalf("exit %d, list (-want +got):\n%s\n%s", r.ExitCode, diff, strings.Join(r.Log, "\n"))
	}
	if !slices.Contains(r.Log, "FS_LABELS=cidata") || !slices.Contains(r.Log, "ISO9660_DEVS=/dev/sr0=cidata") {
		t.Errorf("log lacks the filesystem dump:\n%s", strings.Join(r.Log, "\n"))
	}
}

func TestFromRootOVFCdrom(t *testing.T) {
	iso := makeSeedISO(t, "OVF-TRANSPORT")
	root := fakeRoot(t, iso, map[string]string{"etc/cloud/cloud.cfg.d/90.cfg": "datasource_list: [ OVF, NoCloud ]\n"})
	in, err := FromRoot(root)
	if err != nil {
		t.Fatal(err)
	}
	in.Virt = "vmware"
	if r := Identify(in); r.ExitCode != 0 || !cmp.Equal(r.List, []string{"OVF", "None"}) {
		t.Fatalf("exit %d list %v\n%s", r.ExitCode, r.List, strings.Join(r.Log, "\n"))
	}
}

func TestFromRootEmpty(t *testing.T) {
	in, err := FromRoot(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	r := Identify(in)
	if r.ExitCode != ExitDisabled || r.List != nil {
		t.Fatalf("empty root: exit %d list %v", r.ExitCode, r.List)
	}
	if _, err := FromRoot(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Fatal("FromRoot of a missing dir succeeded")
	}
}

// TestFromRootConfined checks that a symlink leaving the root is not
// followed: an absolute link to a NoCloud seed outside it finds nothing.
func TestFromRootConfined(t *testing.T) {
	outside := t.TempDir()
	testtree.Write(t, outside, map[string]string{"meta-data": "x", "user-data": "y"})
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, PathSeedDir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, PathSeedDir, "nocloud")); err != nil {
		t.Fatal(err)
	}
	in, err := FromRoot(root)
	if err != nil {
		t.Fatal(err)
	}
	if r := Identify(in); r.ExitCode != ExitDisabled {
		t.Fatalf("followed a symlink out of the root: %v", r.List)
	}
}
