package media_test

import (
	"encoding/binary"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/cloudroot/cloudroot/pkg/media"
	"github.com/cloudroot/cloudroot/pkg/seed"
)

var seedFiles = seed.Files{
	MetaData:      []byte("instance-id: iid-media\nlocal-hostname: vm1\n"),
	UserData:      []byte("#cloud-config\nhostname: vm1\n"),
	NetworkConfig: []byte("version: 2\n"),
}

// writeSeed writes a seed image of format as `cloudroot seed make` does.
func writeSeed(t testing.TB, format seed.Format) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "seed."+string(format))
	if err := seed.Write(out, format, seedFiles); err != nil {
		t.Fatal(err)
	}
	return out
}

// patch writes b at off in the image at path.
func patch(t testing.TB, path string, off int64, b ...byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
}

func le32(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }

// fat32 is the geometry of a FAT32 image's boot sector.
type fat32 struct {
	sector, reserved, fats, fatSectors, cluster int64
	root                                        uint32
}

func readFAT32(t testing.TB, path string) fat32 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, 512)
	if _, err := io.ReadFull(f, b); err != nil {
		t.Fatal(err)
	}
	g := fat32{
		sector:     int64(binary.LittleEndian.Uint16(b[11:])),
		reserved:   int64(binary.LittleEndian.Uint16(b[14:])),
		fats:       int64(b[16]),
		fatSectors: int64(binary.LittleEndian.Uint32(b[36:])),
		root:       binary.LittleEndian.Uint32(b[44:]),
	}
	g.cluster = int64(b[13]) * g.sector
	return g
}

// setFAT sets cluster c's entry to v in every FAT copy.
func setFAT(t testing.TB, path string, c, v uint32) {
	t.Helper()
	g := readFAT32(t, path)
	for i := range g.fats {
		patch(t, path, (g.reserved+i*g.fatSectors)*g.sector+int64(c)*4, le32(v)...)
	}
}

// isoRoot is the byte offset of the root directory's extent.
func isoRoot(t testing.TB, path string) int64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return int64(binary.LittleEndian.Uint32(b[16*2048+156+2:])) * 2048
}

// readAll opens the image and reads every seed file, as NoCloud does.
func readAll(path string) error {
	fsys, closeFS, err := media.Open(path, media.Limits{})
	if err != nil {
		return err
	}
	defer closeFS()
	var errs []error
	for _, n := range []string{"meta-data", "user-data", "network-config", "vendor-data"} {
		b, err := fs.ReadFile(fsys, n)
		if err != nil && !errors.Is(err, media.ErrCorrupt) && !errors.Is(err, media.ErrBudget) {
			continue // a missing file: not what is tested
		}
		if err == nil && len(b) == 0 && n != "vendor-data" {
			continue
		}
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func TestSeedImagesRead(t *testing.T) {
	for _, f := range []seed.Format{seed.FormatISO, seed.FormatVFAT} {
		t.Run(string(f), func(t *testing.T) {
			fsys, closeFS, err := media.Open(writeSeed(t, f), media.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			defer closeFS()
			for n, want := range map[string][]byte{"meta-data": seedFiles.MetaData, "user-data": seedFiles.UserData, "network-config": seedFiles.NetworkConfig} {
				got, err := fs.ReadFile(fsys, n)
				if err != nil || string(got[:min(len(got), len(want))]) != string(want) {
					t.Errorf("%s: %q, %v", n, got, err)
				}
			}
			ents, err := fs.ReadDir(fsys, ".")
			if err != nil || len(ents) < 3 {
				t.Errorf("root: %v, %v", ents, err)
			}
		})
	}
}

// TestHostileImages: each image breaks one bound; reading it is an
// ErrCorrupt (or ErrBudget) error, never a panic, a hang or a fatal
// out-of-memory of the process.
func TestHostileImages(t *testing.T) {
	for _, tc := range []struct {
		name   string
		format seed.Format
		breaks func(t testing.TB, path string)
		want   error
	}{
		{"fat root chain to itself", seed.FormatVFAT, func(t testing.TB, p string) {
			// issue 25: fatal error: out of memory (fat12 getClusterList)
			g := readFAT32(t, p)
			setFAT(t, p, g.root, g.root)
		}, media.ErrCorrupt},
		{"fat loop off the root", seed.FormatVFAT, func(t testing.TB, p string) {
			// a chain in no directory loops: still refused
			setFAT(t, p, 60000, 60001)
			setFAT(t, p, 60001, 60000)
		}, media.ErrCorrupt},
		{"fat table of 2 GiB", seed.FormatVFAT, func(t testing.TB, p string) {
			// not a FAT the geometry allows: not read as FAT at all
			patch(t, p, 36, le32(1<<22)...)
		}, media.ErrUnknown},
		{"fat root cluster past the end", seed.FormatVFAT, func(t testing.TB, p string) {
			patch(t, p, 44, le32(0x0FFFFFF0)...)
		}, media.ErrCorrupt},
		{"iso root record name length", seed.FormatISO, func(t testing.TB, p string) {
			// issue 25: panic: slice bounds out of range [33:32]
			patch(t, p, isoRoot(t, p)+32, 0xff)
		}, media.ErrCorrupt},
		{"iso file record name length", seed.FormatISO, func(t testing.TB, p string) {
			// passes the checks; go-diskfs panics parsing it: recovered
			root := isoRoot(t, p)
			b := make([]byte, 2048)
			f, _ := os.Open(p)
			f.ReadAt(b, root)
			f.Close()
			third := int64(b[0]) + int64(b[b[0]])
			patch(t, p, root+third+32, 0xff)
		}, media.ErrCorrupt},
		{"iso root directory of 4 GiB", seed.FormatISO, func(t testing.TB, p string) {
			patch(t, p, 16*2048+156+10, le32(0xFFFFF800)...)
		}, media.ErrCorrupt},
		{"iso path table of 4 GiB", seed.FormatISO, func(t testing.TB, p string) {
			patch(t, p, 16*2048+132, le32(0xFFFFFFF0)...)
		}, media.ErrCorrupt},
		{"iso dot record of 4 GiB", seed.FormatISO, func(t testing.TB, p string) {
			// the size go-diskfs reads at a path table entry's block + 10
			patch(t, p, isoRoot(t, p)+10, le32(0xFFFFF800)...)
		}, media.ErrCorrupt},
		{"iso no descriptor terminator", seed.FormatISO, func(t testing.TB, p string) {
			for i := int64(16); i < 16+64; i++ {
				patch(t, p, i*2048, 0) // boot records
			}
		}, media.ErrCorrupt},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := writeSeed(t, tc.format)
			tc.breaks(t, p)
			err := readAll(p)
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			t.Log(err)
		})
	}
}

func TestReadBudget(t *testing.T) {
	p := writeSeed(t, seed.FormatISO)
	_, _, err := media.Open(p, media.Limits{Read: 4096})
	if !errors.Is(err, media.ErrBudget) {
		t.Fatalf("err = %v, want ErrBudget", err)
	}
}

func TestUnknownFilesystem(t *testing.T) {
	p := filepath.Join(t.TempDir(), "zero")
	if err := os.WriteFile(p, make([]byte, 1<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := media.Open(p, media.Limits{}); !errors.Is(err, media.ErrUnknown) {
		t.Fatalf("err = %v, want ErrUnknown", err)
	}
}
