package bootenv

import (
	"bytes"
	"encoding/binary"
	"errors"
	"github.com/cloudroot/cloudroot/pkg/internal/golden"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fsCase builds a filesystem image with host tools.
type fsCase struct {
	name  string
	size  int64
	build func(t *testing.T, img string)
}

// seedDir writes a tiny NoCloud seed tree to put on ISO images.
func seedDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range map[string]string{
		"meta-data": "instance-id: iid-bootenv\nlocal-hostname: probe\n",
		"user-data": "#cloud-config\n{}\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func patch(t *testing.T, img string, off int64, b []byte) {
	t.Helper()
	f, err := os.OpenFile(img, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

const extUUID = "6f1c8d2e-7a4b-4c3d-9e5f-0a1b2c3d4e5f"

var fsCases = []fsCase{
	{"ext4-label", 8 << 20, func(t *testing.T, img string) {
		run(t, "", "mkfs.ext4", "-q", "-F", "-L", "cloudroot-root", "-U", extUUID, img)
	}},
	{"ext4-nolabel", 8 << 20, func(t *testing.T, img string) {
		run(t, "", "mkfs.ext4", "-q", "-F", "-U", extUUID, img)
	}},
	{"ext4-nojournal", 8 << 20, func(t *testing.T, img string) {
		run(t, "", "mke2fs", "-q", "-F", "-t", "ext4", "-O", "^has_journal", "-L", "nojournal", "-U", extUUID, img)
	}},
	{"ext3", 8 << 20, func(t *testing.T, img string) {
		run(t, "", "mke2fs", "-q", "-F", "-t", "ext3", "-L", "old3", "-U", extUUID, img)
	}},
	{"ext2", 4 << 20, func(t *testing.T, img string) {
		run(t, "", "mke2fs", "-q", "-F", "-t", "ext2", "-L", "older2", "-U", extUUID, img)
	}},
	{"fat12", 2 << 20, func(t *testing.T, img string) {
		run(t, "", "mkfs.vfat", "-n", "CIDATA", "-i", "1234abcd", img)
	}},
	{"fat12-nolabel", 2 << 20, func(t *testing.T, img string) {
		run(t, "", "mkfs.vfat", "-i", "0badcafe", img)
	}},
	{"fat16", 32 << 20, func(t *testing.T, img string) {
		run(t, "", "mkfs.vfat", "-F", "16", "-n", "SEED16", "-i", "a1b2c3d4", img)
	}},
	{"fat32", 40 << 20, func(t *testing.T, img string) {
		run(t, "", "mkfs.vfat", "-F", "32", "-n", "CIDATA", "-i", "deadbeef", img)
	}},
	{"fat32-dirlabel", 40 << 20, func(t *testing.T, img string) {
		// mkfs.vfat writes the label to both places; spoil the boot
		// sector's copy: blkid (and we) prefer the root directory's.
		run(t, "", "mkfs.vfat", "-F", "32", "-n", "DIRLABEL", "-i", "00c0ffee", img)
		patch(t, img, 71, []byte("BOOTLABEL  "))
	}},
	{"fat12-dirlabel", 2 << 20, func(t *testing.T, img string) {
		run(t, "", "mkfs.vfat", "-n", "DIRLABEL", "-i", "00c0ffee", img)
		patch(t, img, 43, []byte("NO NAME    "))
	}},
	{"iso-joliet", 0, func(t *testing.T, img string) {
		run(t, "", "genisoimage", "-quiet", "-o", img, "-V", "cidata", "-r", "-J", seedDir(t))
	}},
	{"iso-plain", 0, func(t *testing.T, img string) {
		run(t, "", "genisoimage", "-quiet", "-o", img, "-V", "CIDATA", "-r", seedDir(t))
	}},
	{"iso-joliet-long", 0, func(t *testing.T, img string) {
		// Joliet holds 16 characters, the primary descriptor 32: the label
		// is rebuilt from both.
		run(t, "", "genisoimage", "-quiet", "-o", img, "-V", "cloudroot-seed-volume-Long", "-r", "-J", seedDir(t))
	}},
	{"iso-xorriso", 0, func(t *testing.T, img string) {
		run(t, "", "xorriso", "-as", "mkisofs", "-quiet", "-o", img, "-volid", "config-2", "-joliet", "-rock", seedDir(t))
	}},
	{"swap", 1 << 20, func(t *testing.T, img string) {
		run(t, "", "mkswap", "-L", "swp", "-U", extUUID, img)
	}},
}

// TestProbeTools builds each image with the host tools and compares Probe
// with `blkid -p` on the same file. With -update it rewrites the fixtures.
func TestProbeTools(t *testing.T) {
	for _, tc := range fsCases {
		t.Run(tc.name, func(t *testing.T) {
			img := filepath.Join(t.TempDir(), "img")
			if tc.size > 0 {
				sparseFile(t, img, tc.size)
			}
			tc.build(t, img)
			f, err := os.Open(img)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			fi, err := f.Stat()
			if err != nil {
				t.Fatal(err)
			}
			rec := &recorder{r: f}
			got, err := Probe(rec, fi.Size())
			if err != nil {
				t.Fatalf("Probe: %v", err)
			}
			b := blkid(t, img)
			want := FS{Type: b["TYPE"], Label: b["LABEL"], UUID: b["UUID"], Version: b["VERSION"]}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Probe vs blkid -p (-want +got):\n%s", diff)
			}
			if golden.Update() {
				writeFixture(t, filepath.Join("testdata", "probe", tc.name), img, rec.max, fixture{Size: fi.Size(), FS: &got})
			}
		})
	}
}

// TestProbeGolden runs Probe on the committed fixtures (no tools needed).
func TestProbeGolden(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join("testdata", "probe", "*"))
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) == 0 {
		t.Fatal("no fixtures in testdata/probe (run go test -update with the host tools)")
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			fx, img := readFixture(t, dir)
			got, err := Probe(img, fx.Size)
			if err != nil {
				t.Fatalf("Probe: %v", err)
			}
			if diff := cmp.Diff(*fx.FS, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestProbeSynthetic(t *testing.T) {
	uuid := []byte{0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef}
	const uuidStr = "01234567-89ab-cdef-0123-456789abcdef"

	xfs := make([]byte, 1<<20)
	copy(xfs, "XFSB")
	binary.BigEndian.PutUint32(xfs[4:], 4096)
	copy(xfs[32:], uuid)
	copy(xfs[108:], "xfsroot")

	btrfs := make([]byte, 1<<20)
	copy(btrfs[0x10040:], "_BHRfS_M")
	copy(btrfs[0x10020:], uuid)
	copy(btrfs[0x1012b:], "btrroot")

	swap0 := make([]byte, 64<<10)
	copy(swap0[4096-10:], "SWAP-SPACE")

	swap64k := make([]byte, 128<<10)
	copy(swap64k[65536-10:], "SWAPSPACE2")
	binary.LittleEndian.PutUint32(swap64k[1024:], 1)
	copy(swap64k[1024+12:], uuid)
	copy(swap64k[1024+28:], "bigpage")

	jbd := make([]byte, 8192)
	binary.LittleEndian.PutUint16(jbd[1024+56:], extMagic)
	binary.LittleEndian.PutUint32(jbd[1024+96:], extIncompatJournal)
	copy(jbd[1024+104:], uuid)

	for _, tc := range []struct {
		name string
		img  []byte
		want FS
	}{
		{"xfs", xfs, FS{Type: "xfs", Label: "xfsroot", UUID: uuidStr}},
		{"btrfs", btrfs, FS{Type: "btrfs", Label: "btrroot", UUID: uuidStr}},
		{"swap-v0", swap0, FS{Type: "swap", Version: "0"}},
		{"swap-64k-page", swap64k, FS{Type: "swap", Version: "1", Label: "bigpage", UUID: uuidStr}},
		{"jbd", jbd, FS{Type: "jbd", UUID: uuidStr, Version: "0.0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Probe(bytes.NewReader(tc.img), int64(len(tc.img)))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestProbeNothing(t *testing.T) {
	for _, size := range []int64{0, 100, 512, 4096, 1 << 20} {
		_, err := Probe(bytes.NewReader(make([]byte, size)), size)
		if !errors.Is(err, ErrNoFilesystem) {
			t.Errorf("size %d: err = %v, want ErrNoFilesystem", size, err)
		}
	}
}

type failingReader struct{ err error }

func (f failingReader) ReadAt([]byte, int64) (int, error) { return 0, f.err }

func TestProbeIOError(t *testing.T) {
	boom := errors.New("no medium found")
	_, err := Probe(failingReader{boom}, 1<<20)
	if !errors.Is(err, boom) || errors.Is(err, ErrNoFilesystem) {
		t.Errorf("err = %v, want it to wrap the read error", err)
	}
	_, err = ProbeTable(failingReader{boom}, 1<<20, 512)
	if !errors.Is(err, boom) {
		t.Errorf("ProbeTable err = %v, want it to wrap the read error", err)
	}
}

func TestMergeJoliet(t *testing.T) {
	be := func(s string) []byte {
		var b []byte
		for _, r := range s {
			b = append(b, byte(r>>8), byte(r))
		}
		for len(b) < 32 {
			b = append(b, 0, ' ')
		}
		return b
	}
	pad := func(s string) []byte { return append([]byte(s), bytes.Repeat([]byte(" "), 32-len(s))...) }
	for _, tc := range []struct {
		name, joliet, pvd, want string
		ok                      bool
	}{
		{"same", "cidata", "cidata", "cidata", true},
		{"case from joliet", "CiData", "CIDATA", "CiData", true},
		{"tail from pvd", "cloudroot-seed-v", "CLOUDROOT-SEED-VOLUME", "cloudroot-seed-vOLUME", true},
		{"unrepresentable", "café", "CAF_", "café", true},
		{"disagree", "other", "CIDATA", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			units, ok := mergeJoliet(be(tc.joliet), pad(tc.pvd))
			if ok != tc.ok {
				t.Fatalf("ok = %v, want %v", ok, tc.ok)
			}
			if ok {
				if got := utf16Label(units); got != tc.want {
					t.Errorf("got %q, want %q", got, tc.want)
				}
			}
		})
	}
}

var _ io.ReaderAt = sparseImage{}
