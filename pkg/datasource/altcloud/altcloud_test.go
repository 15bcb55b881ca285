package altcloud

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/internal/dstest"
)

var sr0 = bootenv.Device{Name: "sr0", Path: "/dev/sr0", FS: bootenv.FS{Type: "iso9660", Label: "CDROM"}}

var vmware = bootenv.DMI{ProductName: "VMware Virtual Platform"}

// upstreamDiffers are the fields of each case's upstream golden where
// cloudroot deliberately differs (docs/datasources.md).
var upstreamDiffers = map[string]dstest.Differs{}

func TestGolden(t *testing.T) {
	dstest.GoldenVolumes(t, dstest.Volumes{Source: &Source{}, Env: datasource.Env{DMI: vmware}, Device: sr0, Dir: "disk", Differs: upstreamDiffers,
		Others: []bootenv.Device{{Name: "sr1", Path: "/dev/sr1", FS: bootenv.FS{Type: "iso9660", Label: "cidata"}}}})
}

func TestCloudType(t *testing.T) {
	for _, tc := range []struct {
		info    []byte
		product string
		want    string
	}{
		{nil, "", Unknown},
		{nil, "VMware Virtual Platform", VSphere},
		{nil, "RHEV Hypervisor", RHEV},
		{nil, "KVM", Unknown},
		{[]byte(" vsphere\n"), "RHEV Hypervisor", VSphere},
		{[]byte("rhev"), "", RHEV},
		{[]byte(""), "VMware", ""},
	} {
		if got := CloudType(tc.info, tc.product); got != tc.want {
			t.Errorf("CloudType(%q, %q) = %q, want %q", tc.info, tc.product, got, tc.want)
		}
	}
}

// TestCloudInfoFile: the target's cloud-info file decides over DMI.
func TestCloudInfoFile(t *testing.T) {
	e := datasource.Env{Root: fstest.MapFS{"etc/sysconfig/cloud-info": {Data: []byte("vSphere\n")}},
		DMI: bootenv.DMI{ProductName: "KVM"}, Devices: []bootenv.Device{sr0},
		OpenFS: dstest.DirOpener(t, map[string]string{"/dev/sr0": "testdata/user-data-txt/disk"})}
	d, err := (&Source{}).Get(context.Background(), e)
	if err != nil {
		t.Fatal(err)
	}
	if d.Subplatform != "vsphere (/dev/sr0)" || d.InstanceID() != "455" {
		t.Errorf("got %s %s", d.Subplatform, d.InstanceID())
	}
	e.Root = fstest.MapFS{"etc/sysconfig/cloud-info": {Data: []byte("other")}}
	e.DMI = vmware
	if _, err := (&Source{}).Get(context.Background(), e); !errors.Is(err, datasource.ErrNotFound) {
		t.Errorf("cloud-info says other: err = %v, want ErrNotFound", err)
	}
}

func TestRHEVUnsupported(t *testing.T) {
	e := datasource.Env{DMI: bootenv.DMI{ProductName: "RHEV Hypervisor"}, Devices: []bootenv.Device{sr0}, OpenFS: dstest.DirOpener(t, nil)}
	_, err := (&Source{}).Get(context.Background(), e)
	if !errors.Is(err, errors.ErrUnsupported) || errors.Is(err, datasource.ErrNotFound) || !strings.Contains(err.Error(), "/dev/fd0") {
		t.Errorf("err = %v, want ErrUnsupported naming /dev/fd0", err)
	}
}

// TestImage reads a real ISO9660 CD-ROM through go-diskfs.
func TestImage(t *testing.T) {
	src, err := filepath.Abs("testdata/deltacloud/disk")
	if err != nil {
		t.Fatal(err)
	}
	want, err := (&Source{}).Get(context.Background(), datasource.Env{DMI: vmware, Devices: []bootenv.Device{sr0},
		OpenFS: dstest.DirOpener(t, map[string]string{"/dev/sr0": src})})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := exec.LookPath("genisoimage"); err != nil {
		t.Skip("genisoimage not installed")
	}
	out := filepath.Join(t.TempDir(), "cdrom.iso")
	if b, err := exec.Command("genisoimage", "-quiet", "-V", "CDROM", "-r", "-J", "-o", out, src).CombinedOutput(); err != nil {
		t.Skipf("making the image: %v: %s", err, b)
	}
	dev := bootenv.Device{Name: "cdrom.iso", Path: out, FS: bootenv.FS{Type: "iso9660", Label: "CDROM"}}
	got, err := (&Source{}).Get(context.Background(), datasource.Env{DMI: vmware, Devices: []bootenv.Device{dev}})
	if err != nil {
		t.Fatal(err)
	}
	if got.Subplatform != "vsphere ("+out+")" {
		t.Errorf("subplatform = %q", got.Subplatform)
	}
	got.Subplatform = want.Subplatform
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("image differs from the directory (-want +got):\n%s", diff)
	}
}

func TestNotFound(t *testing.T) {
	blank := t.TempDir()
	os.WriteFile(filepath.Join(blank, "deltacloud-user-data.txt"), []byte(" \n"), 0o644)
	for name, e := range map[string]datasource.Env{
		"not vsphere": {DMI: bootenv.DMI{ProductName: "Standard PC"}, Devices: []bootenv.Device{sr0}, OpenFS: dstest.DirOpener(t, nil)},
		"blank":       {DMI: vmware, Devices: []bootenv.Device{sr0}, OpenFS: dstest.DirOpener(t, map[string]string{"/dev/sr0": blank})},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := (&Source{}).Get(context.Background(), e)
			if !errors.Is(err, datasource.ErrNotFound) {
				t.Fatalf("err = %v, want ErrNotFound", err)
			}
		})
	}
}

// TestConform: the cases every volume source shares, on vSphere.
func TestConform(t *testing.T) {
	dstest.ConformMedia(t, dstest.Media{Source: &Source{}, Env: datasource.Env{DMI: vmware}, Device: sr0,
		Root: "testdata/user-data-txt/disk", Doc: "user-data.txt",
		WhyUnreadableNotFound: "cloud-init's AltCloud skips a CD-ROM it cannot mount (user_data_vsphere: 'Failed mount of'), and so does cloudroot: the search goes on and ends in not found",
		WhyTruncatedParses:    "user-data.txt is handed on as is: half a user-data is still user-data (its parser runs later, in pkg/userdata)"})
}

// FuzzAltCloud: arbitrary cloud-info, product names and user-data files
// never panic, and found Data always carries the fixed meta-data.
func FuzzAltCloud(f *testing.F) {
	f.Add([]byte("VSPHERE"), "", []byte("#cloud-config\n"), []byte(""))
	f.Add([]byte(nil), "VMware", []byte(" "), []byte("x"))
	f.Fuzz(func(t *testing.T, info []byte, product string, delta, plain []byte) {
		ct := CloudType(info, product)
		if info == nil && ct != RHEV && ct != VSphere && ct != Unknown {
			t.Fatalf("CloudType from DMI %q = %q", product, ct)
		}
		b, _, err := readFS(fstest.MapFS{"deltacloud-user-data.txt": {Data: delta}, "user-data.txt": {Data: plain}}, "fuzz")
		if err != nil {
			t.Fatal(err)
		}
		if d := Parse(b, VSphere, "fuzz"); d != nil && (d.InstanceID() != "455" || len(d.UserData) == 0) {
			t.Fatalf("bad data %+v", d)
		}
	})
}
