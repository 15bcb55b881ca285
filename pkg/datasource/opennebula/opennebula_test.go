package opennebula

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

var sr0 = bootenv.Device{Name: "sr0", Path: "/dev/sr0", FS: bootenv.FS{Type: "iso9660", Label: "CONTEXT"}}

// upstreamDiffers are the fields of each case's upstream golden where
// cloudroot deliberately differs (docs/datasources.md).
var upstreamDiffers = map[string]dstest.Differs{
	"full": {"instance_id": "cloud-init's OpenNebula always uses iid-dsopennebula (a shell variable cannot be called instance-id); cloudroot uses VMID, so a new VM is a new instance"},
}

func TestGolden(t *testing.T) {
	dstest.GoldenVolumes(t, dstest.Volumes{Source: &Source{}, Device: sr0, Dir: "disk", Differs: upstreamDiffers,
		Others: []bootenv.Device{{Name: "vda", Path: "/dev/vda", FS: bootenv.FS{Type: "ext4", Label: "root"}}}})
}

func TestParseContext(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want map[string]string
	}{
		{"", map[string]string{}},
		{"# only a comment\n\n", map[string]string{}},
		{"A='x'\nB='it'\\''s'\n", map[string]string{"A": "x", "B": "it's"}},
		{"A='multi\nline'\nB=''", map[string]string{"A": "multi\nline", "B": ""}},
		{"export A='1' B=\"two \\\"q\\\" \\$x\"; C=bare\\ word", map[string]string{"A": "1", "B": `two "q" $x`, "C": "bare word"}},
		{"A=\"line\\\ncontinued\"\r\nB=x\\\ny", map[string]string{"A": "linecontinued", "B": "xy"}},
		{"A='1'\nA='2'", map[string]string{"A": "2"}},
		{"A=cost$ B=\"$\"", map[string]string{"A": "cost$", "B": "$"}},
		{"A='x' # trailing comment\n", map[string]string{"A": "x"}},
		{"export\n", map[string]string{}},
	} {
		got, err := ParseContext([]byte(tc.in))
		if err != nil {
			t.Errorf("ParseContext(%q): %v", tc.in, err)
			continue
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("ParseContext(%q) (-want +got):\n%s", tc.in, diff)
		}
	}
	for in, want := range map[string]string{
		"A='unterminated\n":      "line 1: unterminated single quote",
		"\n\nA=\"open":           "line 3: unterminated double quote",
		"A=$HOME":                "line 1: '$' needs a shell",
		"A=\"$(id)\"":            "line 1: '$' expansion needs a shell",
		"A=`id`":                 "needs a shell",
		"A='x'\nrm -rf /":        "line 2: not a variable assignment",
		"A='x' echo hi":          "line 1: a command after an assignment",
		"A=x|cat":                "'|' needs a shell",
		"A=x\\":                  "backslash at end of file",
		"1A=x":                   "not a variable assignment",
		"A='x\ny'\nB=\"$(x)\"\n": "line 3:",
	} {
		_, err := ParseContext([]byte(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseContext(%q) = %v, want error containing %q", in, err, want)
		}
	}
}

// TestSeedDir: a copy in the target's seed directory comes first.
func TestSeedDir(t *testing.T) {
	b, err := os.ReadFile("testdata/plain-userdata/disk/context.sh")
	if err != nil {
		t.Fatal(err)
	}
	root := fstest.MapFS{"var/lib/cloud/seed/opennebula/context.sh": {Data: b}}
	e := datasource.Env{Root: root, Devices: []bootenv.Device{sr0},
		OpenFS: dstest.DirOpener(t, map[string]string{"/dev/sr0": "testdata/full/disk"})}
	d, err := (&Source{}).Get(context.Background(), e)
	if err != nil {
		t.Fatal(err)
	}
	if d.Subplatform != "seed-dir (/var/lib/cloud/seed/opennebula)" || d.LocalHostname() != "db-2.example.org" {
		t.Errorf("got %s %s, want the seed dir's", d.Subplatform, d.LocalHostname())
	}
	if got := d.Description(); got != "DataSourceOpenNebula [seed=/var/lib/cloud/seed/opennebula][dsmode=net]" {
		t.Errorf("Description = %q", got)
	}
}

func TestDSMode(t *testing.T) {
	files := func(s string) fstest.MapFS { return fstest.MapFS{"context.sh": {Data: []byte(s)}} }
	for _, tc := range []struct {
		context, cfg, want string
	}{
		{"VMID='1'", "", "net"},
		{"VMID='1'", "local", "local"},
		{"DSMODE='net'", "local", "net"},
		{"DSMODE='disabled'", "", "disabled"},
		{"VMID='1'", "disabled", "disabled"},
	} {
		e := datasource.Env{Devices: []bootenv.Device{sr0},
			OpenFS: func(bootenv.Device) (fs.FS, func(), error) { return files(tc.context), func() {}, nil }}
		if tc.cfg != "" {
			e.Config = map[string]any{"OpenNebula": map[string]any{"dsmode": tc.cfg}}
		}
		d, err := (&Source{}).Get(context.Background(), e)
		if tc.want == "disabled" {
			if !errors.Is(err, datasource.ErrNotFound) {
				t.Errorf("%q/%q: err = %v, want ErrNotFound", tc.context, tc.cfg, err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if d.Mode != tc.want {
			t.Errorf("%q/%q: mode %q, want %q", tc.context, tc.cfg, d.Mode, tc.want)
		}
	}
}

// TestImage reads a real ISO9660 context disk through go-diskfs (the
// default OpenFS) and expects what the directory gave.
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
	out := filepath.Join(t.TempDir(), "context.iso")
	if b, err := exec.Command("genisoimage", "-quiet", "-V", "CONTEXT", "-r", "-J", "-o", out, src).CombinedOutput(); err != nil {
		t.Skipf("making the image: %v: %s", err, b)
	}
	dev := bootenv.Device{Name: "context.iso", Path: out, FS: bootenv.FS{Type: "iso9660", Label: "CONTEXT"}}
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

func TestCandidates(t *testing.T) {
	devs := []bootenv.Device{
		{Path: "/dev/sr1", FS: bootenv.FS{Type: "iso9660", Label: "cidata"}},
		{Path: "/dev/vdb", FS: bootenv.FS{Type: "ext4", Label: "data"}},
		{Path: "/dev/sr2", FS: bootenv.FS{Type: "iso9660", Label: "CDROM"}},
		{Path: "/dev/sr0", FS: bootenv.FS{Type: "iso9660", Label: "CONTEXT"}},
		{Path: "/dev/sr3", FS: bootenv.FS{Type: "iso9660", Label: "context"}},
	}
	var got []string
	for _, d := range Candidates(devs) {
		got = append(got, d.Path)
	}
	if diff := cmp.Diff([]string{"/dev/sr0", "/dev/sr2", "/dev/sr1", "/dev/sr3"}, got); diff != "" {
		t.Errorf("Candidates (-want +got):\n%s", diff)
	}
}

func TestNotFound(t *testing.T) {
	for name, e := range map[string]datasource.Env{
		"root without seed": {Root: fstest.MapFS{"etc/hostname": {Data: []byte("h")}}},
		"unlabelled unreadable iso": {Devices: []bootenv.Device{{Path: "/dev/sr1", FS: bootenv.FS{Type: "iso9660"}}},
			OpenFS: func(bootenv.Device) (fs.FS, func(), error) { return nil, nil, errors.New("bad iso") }},
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
		name, context, want string
	}{
		{"shell needed", "VMID='1'\nHOSTNAME=$(hostname)\n", "/dev/sr0/context.sh line 2: '$' needs a shell"},
		{"bad base64", "USER_DATA='%%%'\nUSERDATA_ENCODING='base64'\n", "/dev/sr0: context.sh: USER_DATA is not base64"},
		{"bad dsmode", "DSMODE='sometimes'\n", `DSMODE "sometimes"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := datasource.Env{Devices: []bootenv.Device{sr0}, OpenFS: func(bootenv.Device) (fs.FS, func(), error) {
				return fstest.MapFS{"context.sh": {Data: []byte(tc.context)}}, func() {}, nil
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
// unopenable, hostile images, truncated and oversized context.sh).
func TestConform(t *testing.T) {
	dstest.ConformMedia(t, dstest.Media{Source: &Source{}, Device: sr0, Root: "testdata/full/disk", Doc: "context.sh",
		WhyTruncatedParses: "context.sh is shell assignments, one a line: the first half of the lines is a context that parses"})
}

// FuzzParseContext: the parser never panics, and what it accepts builds
// Data; a value written back in single quotes parses to itself.
func FuzzParseContext(f *testing.F) {
	for _, c := range []string{"full", "plain-userdata"} {
		b, _ := os.ReadFile(filepath.Join("testdata", c, "disk", "context.sh"))
		f.Add(b)
	}
	f.Add([]byte("A=\"x\\\ny\" B=c\\ d; export C='e'\\''f'"))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ParseContext(b)
		if err != nil {
			return
		}
		for k, v := range c {
			quoted := k + "='" + strings.ReplaceAll(v, "'", `'\''`) + "'\n"
			again, err := ParseContext([]byte(quoted))
			if err != nil || again[k] != v {
				t.Fatalf("%q: re-quoted %q gave %q, %v", k, quoted, again[k], err)
			}
		}
		d, err := Parse(c, "fuzz", "config-disk (fuzz)", "")
		if err != nil {
			return
		}
		if d.Name != "OpenNebula" || d.InstanceID() == "" {
			t.Fatalf("bad data %+v", d)
		}
		_ = d.Description()
	})
}
