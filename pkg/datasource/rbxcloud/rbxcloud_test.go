package rbxcloud

import (
	"context"
	"errors"
	"io/fs"
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

var vdb = bootenv.Device{Name: "vdb", Path: "/dev/vdb", FS: bootenv.FS{Type: "vfat", Label: "CLOUDMD"}}

// upstreamDiffers are the fields of each case's upstream golden where
// cloudroot deliberately differs (docs/datasources.md).
var upstreamDiffers = map[string]dstest.Differs{
	"minimal":      rbxDiffers,
	"two-adapters": rbxDiffers,
}

var rbxDiffers = dstest.Differs{
	"subplatform": "cloud-init's RbxCloud never records its disk (subplatform \"unknown\", [seed=None]); cloudroot names it",
	"config_obj":  "cloud-init also copies the network config into the datasource config as network_config, a key nothing reads; cloudroot hands it on only as the network config",
}

func TestGolden(t *testing.T) {
	dstest.GoldenVolumes(t, dstest.Volumes{Source: &Source{}, Device: vdb, Dir: "disk", Differs: upstreamDiffers,
		Others: []bootenv.Device{{Name: "sr0", Path: "/dev/sr0", FS: bootenv.FS{Type: "iso9660", Label: "cidata"}}}})
}

// TestEtcHosts: a target root with /etc/hosts keeps manage_etc_hosts off.
func TestEtcHosts(t *testing.T) {
	for _, tc := range []struct {
		root datasource.Env
		want bool
	}{
		{datasource.Env{}, true},
		{datasource.Env{Root: fstest.MapFS{"etc/hosts": {Data: []byte("")}}}, true},
		{datasource.Env{Root: fstest.MapFS{"etc/hosts": {Data: []byte("127.0.0.1 localhost\n")}}}, false},
	} {
		e := tc.root
		e.Devices = []bootenv.Device{vdb}
		e.OpenFS = dstest.DirOpener(t, map[string]string{"/dev/vdb": "testdata/minimal/disk"})
		d, err := (&Source{}).Get(context.Background(), e)
		if err != nil {
			t.Fatal(err)
		}
		if got := d.Config["manage_etc_hosts"]; got != tc.want {
			t.Errorf("root %v: manage_etc_hosts = %v, want %v", tc.root.Root, got, tc.want)
		}
	}
}

// TestImage reads a real FAT metadata disk through go-diskfs.
func TestImage(t *testing.T) {
	src, err := filepath.Abs("testdata/two-adapters/disk")
	if err != nil {
		t.Fatal(err)
	}
	want, err := (&Source{}).Get(context.Background(), datasource.Env{Devices: []bootenv.Device{vdb},
		OpenFS: dstest.DirOpener(t, map[string]string{"/dev/vdb": src})})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := exec.LookPath("mcopy"); err != nil {
		t.Skip("mcopy not installed")
	}
	out := filepath.Join(t.TempDir(), "cloudmd.img")
	c := exec.Command("sh", "-c", `truncate -s 8M "$1" && mkfs.vfat -n CLOUDMD "$1" >/dev/null && mcopy -i "$1" "$2"/cloud.json "$2"/user.data ::/`, "sh", out, src)
	c.Env = append(os.Environ(), "PATH="+os.Getenv("PATH")+":/usr/sbin:/sbin", "MTOOLS_SKIP_CHECK=1")
	if b, err := c.CombinedOutput(); err != nil {
		t.Skipf("making the image: %v: %s", err, b)
	}
	dev := bootenv.Device{Name: "cloudmd.img", Path: out, FS: bootenv.FS{Type: "vfat", Label: "CLOUDMD"}}
	got, err := (&Source{}).Get(context.Background(), datasource.Env{Devices: []bootenv.Device{dev}})
	if err != nil {
		t.Fatal(err)
	}
	if got.Subplatform != "config-disk ("+out+")" {
		t.Errorf("subplatform = %q", got.Subplatform)
	}
	got.Subplatform = want.Subplatform
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("image differs from the directory (-want +got):\n%s", diff)
	}
}

func TestNotFound(t *testing.T) {
	for name, e := range map[string]datasource.Env{
		"root has hosts": {Root: fstest.MapFS{"etc/hosts": {Data: []byte("x")}}},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := (&Source{}).Get(context.Background(), e)
			if !errors.Is(err, datasource.ErrNotFound) {
				t.Fatalf("err = %v, want ErrNotFound", err)
			}
		})
	}
}

func TestBroken(t *testing.T) {
	for _, tc := range []struct {
		name, json, want string
	}{
		{"no vm", `{"netadp": []}`, "/dev/vdb/cloud.json: no `vm` object"},
		{"no netadp", `{"vm": {"_id": "x"}}`, "no `netadp` list"},
		{"no id", `{"vm": {"name": "x"}, "netadp": []}`, "no vm._id"},
		{"no mac", `{"vm": {"_id": "x"}, "netadp": [{"ip": []}]}`, "netadp[0] has no macaddress"},
		{"bad gateway", `{"vm": {"_id": "x"}, "netadp": [{"macaddress": "m", "network": {"gateway": "nope"}, "ip": [{"address": "10.0.0.2"}]}]}`, `netadp[0].network.gateway: "nope"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := datasource.Env{Devices: []bootenv.Device{vdb}, OpenFS: func(bootenv.Device) (fs.FS, func(), error) {
				return fstest.MapFS{"cloud.json": {Data: []byte(tc.json)}}, func() {}, nil
			}}
			_, err := (&Source{}).Get(context.Background(), e)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want containing %q", err, tc.want)
			}
			if errors.Is(err, datasource.ErrNotFound) {
				t.Errorf("a broken disk is not ErrNotFound: %v", err)
			}
		})
	}
}

// TestConform: the cases every volume source shares (no volume, empty,
// unopenable, hostile images, truncated and oversized cloud.json).
func TestConform(t *testing.T) {
	dstest.ConformMedia(t, dstest.Media{Source: &Source{}, Device: vdb, Root: "testdata/minimal/disk", Doc: "cloud.json"})
}

func TestThreeIPs(t *testing.T) {
	got, err := threeIPs("10.0.0.254")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]any{"10.0.0.254", "10.0.1.0", "10.0.1.1"}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if _, err := threeIPs("255.255.255.254"); err == nil {
		t.Error("overflow accepted")
	}
}

// FuzzCloudJSON: arbitrary cloud.json never panics, and what parses
// builds Data with the instance-id.
func FuzzCloudJSON(f *testing.F) {
	for _, c := range []string{"two-adapters", "minimal"} {
		b, _ := os.ReadFile(filepath.Join("testdata", c, "disk", "cloud.json"))
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := Parse(Input{Source: "fuzz", CloudJSON: b}, "config-disk (fuzz)")
		if err != nil {
			return
		}
		if d.Name != "RbxCloud" || d.InstanceID() == "" || d.NetworkConfig["version"] != 1 {
			t.Fatalf("bad data %+v", d)
		}
	})
}
