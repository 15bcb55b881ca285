package harness

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
)

func probeFile(t *testing.T, p string) bootenv.FS {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	got, err := bootenv.Probe(f, fi.Size())
	if err != nil {
		t.Fatalf("probing %s: %v", p, err)
	}
	return got
}

var seedFiles = map[string][]byte{
	"meta-data": []byte("instance-id: iid-test\nlocal-hostname: seeded\n"),
	"user-data": []byte("#cloud-config\nhostname: seeded\n"),
}

func TestMakeSeedISO(t *testing.T) {
	if HaveTools("genisoimage") != nil && HaveTools("xorriso") != nil {
		t.Skip("neither genisoimage nor xorriso is installed")
	}
	p, err := MakeSeed(t.TempDir(), seedFiles, SeedISO)
	if err != nil {
		t.Fatal(err)
	}
	got := probeFile(t, p)
	if got.Type != "iso9660" || got.Label != "cidata" {
		t.Errorf("seed ISO is %s labelled %q, want iso9660 labelled cidata", got.Type, got.Label)
	}
	if HaveTools("isoinfo") == nil {
		out, err := exec.Command("isoinfo", "-R", "-i", p, "-x", "/user-data").Output()
		if err != nil || string(out) != string(seedFiles["user-data"]) {
			t.Errorf("user-data in the ISO = %q, %v", out, err)
		}
	}
}

func TestMakeSeedVFAT(t *testing.T) {
	needTools(t, "mkfs.vfat", "mcopy", "mdir", "mtype")
	p, err := MakeSeed(t.TempDir(), seedFiles, SeedVFAT)
	if err != nil {
		t.Fatal(err)
	}
	got := probeFile(t, p)
	if got.Type != "vfat" || !strings.EqualFold(got.Label, "cidata") {
		t.Errorf("seed FAT is %s labelled %q, want vfat labelled CIDATA", got.Type, got.Label)
	}
	cmd := exec.Command("mtype", "-i", p, "::/meta-data")
	cmd.Env = append(os.Environ(), "MTOOLS_SKIP_CHECK=1")
	out, err := cmd.Output()
	if err != nil || string(out) != string(seedFiles["meta-data"]) {
		t.Errorf("meta-data in the FAT image = %q, %v", out, err)
	}
}

func TestMakeSeedBadKind(t *testing.T) {
	if _, err := MakeSeed(t.TempDir(), seedFiles, "floppy"); err == nil {
		t.Error("MakeSeed with an unknown kind succeeded")
	}
}

func TestSeedFiles(t *testing.T) {
	dir := t.TempDir()
	for n, b := range seedFiles {
		if err := os.WriteFile(filepath.Join(dir, n), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	got, err := SeedFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(seedFiles, got); d != "" {
		t.Errorf("SeedFiles (-want +got):\n%s", d)
	}
	if _, err := SeedFiles(t.TempDir()); err == nil {
		t.Error("SeedFiles on a directory without meta-data succeeded")
	}
}

func TestCopyDiskSparse(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src.img")
	f, err := os.Create(src)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("head"), 0); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("tail"), 64<<20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	dst := filepath.Join(dir, "dst.img")
	if err := CopyDisk(src, dst); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(src)
	b, err := os.ReadFile(dst)
	if err != nil || string(a) != string(b) {
		t.Fatalf("copy differs from the source (err %v)", err)
	}
}
