package configdrive

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
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
	"github.com/cloudroot/cloudroot/pkg/datasource/openstack"
)

var sr0 = bootenv.Device{Name: "sr0", Path: "/dev/sr0", FS: bootenv.FS{Type: "iso9660", Label: "config-2"}}

// upstreamDiffers are the fields of each case's upstream golden where
// cloudroot deliberately differs (docs/datasources.md).
var upstreamDiffers = map[string]dstest.Differs{}

func TestGolden(t *testing.T) {
	dstest.GoldenVolumes(t, dstest.Volumes{Source: &Source{}, Device: sr0, Dir: "drive", Differs: upstreamDiffers,
		Others: []bootenv.Device{
			{Name: "vda", Path: "/dev/vda", FS: bootenv.FS{Type: "ext4", Label: "config-2"}},
			{Name: "sr1", Path: "/dev/sr1", FS: bootenv.FS{Type: "iso9660", Label: "cidata"}},
		}})
}

// TestSeedDir: a copy in the target's seed directory comes first.
func TestSeedDir(t *testing.T) {
	root := fstest.MapFS{}
	src := os.DirFS("testdata/latest-only/drive")
	fs.WalkDir(src, ".", func(p string, de fs.DirEntry, err error) error {
		if err == nil && !de.IsDir() {
			b, _ := fs.ReadFile(src, p)
			root["var/lib/cloud/seed/config_drive/"+p] = &fstest.MapFile{Data: b}
		}
		return err
	})
	e := datasource.Env{Root: root, Devices: []bootenv.Device{sr0},
		OpenFS: dstest.DirOpener(t, map[string]string{"/dev/sr0": "testdata/rocky/drive"})}
	d, err := (&Source{}).Get(context.Background(), e)
	if err != nil {
		t.Fatal(err)
	}
	if d.Subplatform != "seed-dir (/var/lib/cloud/seed/config_drive)" || d.InstanceID() != "0a9b8c7d-6e5f-4a3b-9c2d-1e0f9a8b7c6d" {
		t.Errorf("got %s %s, want the seed dir's", d.Subplatform, d.InstanceID())
	}
}

// TestImages reads a real ISO9660 and FAT config drive through go-diskfs
// (the default OpenFS) and expects what the directory gave.
func TestImages(t *testing.T) {
	src, err := filepath.Abs("testdata/rocky/drive")
	if err != nil {
		t.Fatal(err)
	}
	want, err := (&Source{}).Get(context.Background(), datasource.Env{Devices: []bootenv.Device{sr0},
		OpenFS: dstest.DirOpener(t, map[string]string{"/dev/sr0": src})})
	if err != nil {
		t.Fatal(err)
	}
	images := map[string]struct {
		tool, label string
		cmd         func(out string) *exec.Cmd
	}{
		"iso9660": {"genisoimage", "config-2", func(out string) *exec.Cmd {
			return exec.Command("genisoimage", "-quiet", "-V", "config-2", "-r", "-J", "-o", out, src)
		}},
		"vfat": {"mcopy", "CONFIG-2", func(out string) *exec.Cmd {
			c := exec.Command("sh", "-c", `truncate -s 8M "$1" && mkfs.vfat -n CONFIG-2 "$1" >/dev/null && mcopy -s -i "$1" "$2"/openstack "$2"/ec2 ::/`, "sh", out, src)
			c.Env = append(os.Environ(), "PATH="+os.Getenv("PATH")+":/usr/sbin:/sbin", "MTOOLS_SKIP_CHECK=1")
			return c
		}},
	}
	for kind, im := range images {
		t.Run(kind, func(t *testing.T) {
			if _, err := exec.LookPath(im.tool); err != nil {
				t.Skipf("%s not installed", im.tool)
			}
			out := filepath.Join(t.TempDir(), "drive.img")
			if b, err := im.cmd(out).CombinedOutput(); err != nil {
				t.Skipf("making the %s image: %v: %s", kind, err, b)
			}
			dev := bootenv.Device{Name: "drive.img", Path: out, FS: bootenv.FS{Type: kind, Label: im.label}}
			got, err := (&Source{}).Get(context.Background(), datasource.Env{Devices: []bootenv.Device{dev}})
			if err != nil {
				t.Fatal(err)
			}
			if got.Subplatform != "config-disk ("+out+")" {
				t.Errorf("subplatform = %q", got.Subplatform)
			}
			got.Subplatform = want.Subplatform
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s image differs from the directory (-want +got):\n%s", kind, diff)
			}
		})
	}
}

func TestNotFound(t *testing.T) {
	noMeta := t.TempDir()
	os.MkdirAll(filepath.Join(noMeta, "openstack", "latest"), 0o755)
	disabled := t.TempDir()
	os.MkdirAll(filepath.Join(disabled, "openstack", "latest"), 0o755)
	os.WriteFile(filepath.Join(disabled, "openstack", "latest", "meta_data.json"), []byte(`{"uuid": "u", "meta": {"dsmode": "disabled"}}`), 0o644)
	for name, e := range map[string]datasource.Env{
		"no meta_data.json": {Devices: []bootenv.Device{sr0}, OpenFS: dstest.DirOpener(t, map[string]string{"/dev/sr0": noMeta})},
		"dsmode disabled":   {Devices: []bootenv.Device{sr0}, OpenFS: dstest.DirOpener(t, map[string]string{"/dev/sr0": disabled})},
		"root without seed": {Root: fstest.MapFS{"etc/hostname": {Data: []byte("h")}}},
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
		name  string
		files fstest.MapFS
		want  string
	}{
		{"no uuid", fstest.MapFS{"openstack/latest/meta_data.json": {Data: []byte(`{"hostname": "h"}`)}}, "no 'uuid' entry"},
		{"missing content", fstest.MapFS{"openstack/latest/meta_data.json": {Data: []byte(`{"uuid": "u", "files": [{"path": "/etc/x", "content_path": "/content/0007"}]}`)}}, "reading /dev/sr0/openstack/content/0007"},
		{"bad ec2", fstest.MapFS{"openstack/latest/meta_data.json": {Data: []byte(`{"uuid": "u"}`)}, "ec2/latest/meta-data.json": {Data: []byte(`[`)}}, "/dev/sr0/ec2/latest/meta-data.json"},
		{"bad vendor data", fstest.MapFS{"openstack/latest/meta_data.json": {Data: []byte(`{"uuid": "u"}`)}, "openstack/latest/vendor_data.json": {Data: []byte(`{"cloud-init": {"x": 1}}`)}}, "vendor_data.json: vendordata['cloud-init'] cannot be an object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := datasource.Env{Devices: []bootenv.Device{sr0}, OpenFS: func(bootenv.Device) (fs.FS, func(), error) { return tc.files, func() {}, nil }}
			_, err := (&Source{}).Get(context.Background(), e)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want containing %q", err, tc.want)
			}
			if errors.Is(err, datasource.ErrNotFound) {
				t.Errorf("a broken drive is not ErrNotFound: %v", err)
			}
		})
	}
}

// TestConform: the cases every volume source shares (no volume, empty,
// unopenable, hostile images, truncated and oversized meta_data.json).
func TestConform(t *testing.T) {
	dstest.ConformMedia(t, dstest.Media{Source: &Source{}, Device: sr0,
		Root: "testdata/latest-only/drive", Doc: "openstack/latest/meta_data.json"})
}

// FuzzDrive reads arbitrary meta_data.json, ec2 meta-data and
// network_data.json from a drive.
func FuzzDrive(f *testing.F) {
	for _, c := range []string{"rocky", "latest-only"} {
		md, _ := os.ReadFile(filepath.Join("testdata", c, "drive/openstack/latest/meta_data.json"))
		nd, _ := os.ReadFile(filepath.Join("testdata", c, "drive/openstack/latest/network_data.json"))
		ec, _ := os.ReadFile(filepath.Join("testdata", c, "drive/ec2/latest/meta-data.json"))
		f.Add(md, nd, ec)
	}
	f.Fuzz(func(t *testing.T, md, nd, ec []byte) {
		files := fstest.MapFS{"openstack/latest/meta_data.json": {Data: md}, "openstack/latest/network_data.json": {Data: nd},
			"ec2/latest/meta-data.json": {Data: ec}, "openstack/content/0000": {Data: []byte("x")}, "openstack/content/0001": {Data: []byte("y")}}
		in, err := readFS(files, "fuzz", slog.New(slog.DiscardHandler))
		if err != nil {
			return
		}
		d, err := Parse(in, "config-disk (fuzz)")
		if err != nil {
			return
		}
		if d.Name != "ConfigDrive" || d.MetaData == nil {
			t.Fatalf("bad data %+v", d)
		}
		_ = d.Description()
		_, _ = openstack.ParseNetworkData(nd)
	})
}
