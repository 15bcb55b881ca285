package ovf

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

var sr0 = bootenv.Device{Name: "sr0", Path: "/dev/sr0", FS: bootenv.FS{Type: "iso9660", Label: "OVF ENV"}}

// upstreamDiffers are the fields of each case's upstream golden where
// cloudroot deliberately differs (docs/datasources.md).
var upstreamDiffers = map[string]dstest.Differs{}

func TestGolden(t *testing.T) {
	dstest.GoldenVolumes(t, dstest.Volumes{Source: &Source{}, Device: sr0, Dir: "disk", Differs: upstreamDiffers,
		Others: []bootenv.Device{
			{Name: "sr1", Path: "/dev/sr1", FS: bootenv.FS{Type: "iso9660", Label: "cidata"}},
			{Name: "vdb", Path: "/dev/vdb", FS: bootenv.FS{Type: "vfat", Label: "OVFENV"}},
		}})
}

func TestSeedDirAndVMware(t *testing.T) {
	b, err := os.ReadFile("testdata/minimal/disk/ovf-env.xml")
	if err != nil {
		t.Fatal(err)
	}
	e := datasource.Env{Root: fstest.MapFS{"var/lib/cloud/seed/ovf/ovf-env.xml": {Data: b}},
		Devices: []bootenv.Device{sr0}, DMI: bootenv.DMI{ProductName: "VMware"},
		OpenFS: dstest.DirOpener(t, map[string]string{"/dev/sr0": "testdata/full/disk"})}
	d, err := (&Source{}).Get(context.Background(), e)
	if err != nil {
		t.Fatal(err)
	}
	if d.Subplatform != "vmware (/var/lib/cloud/seed/ovf/ovf-env.xml)" || d.LocalHostname() != "plain-host" {
		t.Errorf("got %s %s, want the seed's", d.Subplatform, d.LocalHostname())
	}
}

// TestImage reads a real ISO9660 transport through go-diskfs, with the
// file under another of its names.
func TestImage(t *testing.T) {
	src, err := filepath.Abs("testdata/full/disk")
	if err != nil {
		t.Fatal(err)
	}
	want, err := (&Source{}).Get(context.Background(), datasource.Env{Devices: []bootenv.Device{sr0},
		OpenFS: dstest.DirOpener(t, map[string]string{"/dev/sr0": src})})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := exec.LookPath("genisoimage"); err != nil {
		t.Skip("genisoimage not installed")
	}
	dir := t.TempDir()
	b, _ := os.ReadFile(filepath.Join(src, "ovf-env.xml"))
	os.Mkdir(filepath.Join(dir, "in"), 0o755)
	os.WriteFile(filepath.Join(dir, "in", "ovf-env.xml"), b, 0o644)
	out := filepath.Join(dir, "ovf.iso")
	if b, err := exec.Command("genisoimage", "-quiet", "-V", "OVF-TRANSPORT", "-r", "-J", "-o", out, filepath.Join(dir, "in")).CombinedOutput(); err != nil {
		t.Skipf("making the image: %v: %s", err, b)
	}
	dev := bootenv.Device{Name: "ovf.iso", Path: out, FS: bootenv.FS{Type: "iso9660", Label: "ovf-transport"}}
	got, err := (&Source{}).Get(context.Background(), datasource.Env{Devices: []bootenv.Device{dev}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("image differs from the directory (-want +got):\n%s", diff)
	}
}

func TestParseOVFEnv(t *testing.T) {
	ns := `xmlns:oe="` + EnvNS + `"`
	got, err := ParseOVFEnv([]byte(`<Environment ` + ns + `><PropertySection><Property oe:key="a" oe:value="1"/><Property oe:key="a" oe:value="2"/><x><Property oe:key="deep" oe:value="no"/></x></PropertySection></Environment>`))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"a": "2"}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	for in, want := range map[string]string{
		"":                                    "no Environment element",
		"<Env/>":                              "root element is Env",
		"<Environment/>":                      "no child nodes",
		"<Environment><Other/></Environment>": "no PropertySection",
		`<Environment ` + ns + `><PropertySection><Property key="a" value="b"/></PropertySection></Environment>`: "without oe:key",
		"<Environment><PropertySection>": "unexpected EOF",
	} {
		if _, err := ParseOVFEnv([]byte(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseOVFEnv(%q) = %v, want error containing %q", in, err, want)
		}
	}
}

func TestNotFound(t *testing.T) {
	for name, e := range map[string]datasource.Env{
		"root without seed": {Root: fstest.MapFS{"var/lib/cloud/seed/ovf/other": {Data: []byte("h")}}},
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
	env := func(doc string) string {
		return `<Environment xmlns:oe="` + EnvNS + `"><PropertySection>` + doc + `</PropertySection></Environment>`
	}
	for _, tc := range []struct {
		name, xml, want string
		is              error
	}{
		{"seedfrom", env(`<Property oe:key="seedfrom" oe:value="http://192.0.2.9/seed/"/>`), `/dev/sr0: seedfrom "http://192.0.2.9/seed/": seedfrom is not supported`, ErrSeedFrom},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := datasource.Env{Devices: []bootenv.Device{sr0}, OpenFS: func(bootenv.Device) (fs.FS, func(), error) {
				return fstest.MapFS{"ovf-env.xml": {Data: []byte(tc.xml)}}, func() {}, nil
			}}
			_, err := (&Source{}).Get(context.Background(), e)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want containing %q", err, tc.want)
			}
			if errors.Is(err, datasource.ErrNotFound) {
				t.Errorf("a broken environment is not ErrNotFound: %v", err)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("err = %v, want %v", err, tc.is)
			}
		})
	}
}

// TestConform: the cases every volume source shares (no volume, empty,
// unopenable, hostile images, truncated and oversized ovf-env.xml).
func TestConform(t *testing.T) {
	dstest.ConformMedia(t, dstest.Media{Source: &Source{}, Device: sr0, Root: "testdata/full/disk", Doc: "ovf-env.xml"})
}

// FuzzParseOVFEnv: arbitrary documents never panic, and what parses
// builds Data (or reports seedfrom).
func FuzzParseOVFEnv(f *testing.F) {
	for _, c := range []string{"full", "minimal"} {
		b, _ := os.ReadFile(filepath.Join("testdata", c, "disk", "ovf-env.xml"))
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		props, err := ParseOVFEnv(b)
		if err != nil {
			return
		}
		d, err := Parse(props, "fuzz", "iso", "")
		if err != nil {
			if !errors.Is(err, ErrSeedFrom) {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		if d.Name != "OVF" || d.InstanceID() == "" {
			t.Fatalf("bad data %+v", d)
		}
	})
}
