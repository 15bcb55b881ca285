package media_test

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/metrics"
	"strings"
	"testing"
	"time"

	diskfs "github.com/diskfs/go-diskfs"
	"github.com/diskfs/go-diskfs/disk"
	"github.com/diskfs/go-diskfs/filesystem"

	"github.com/cloudroot/cloudroot/pkg/media"
	"github.com/cloudroot/cloudroot/pkg/seed"
)

// The fuzz targets read mutated images through the reader the boot uses
// (media.Read) and then every file and directory in them, as a datasource
// would. Per input: no panic escapes, the bytes allocated stay under
// fuzzAllocBound, and the read ends within fuzzHang (a hang detector, not
// a speed check: the time bound itself is Limits.Time).
const (
	fuzzAllocBound = 512 << 20
	fuzzHang       = 60 * time.Second
)

var fuzzLimits = media.Limits{Read: 64 << 20, Time: 10 * time.Second}

// compactISO is a seed ISO without its trailing zero blocks (seed.Write
// sizes the image with a megabyte to spare).
func compactISO(t testing.TB) []byte {
	t.Helper()
	b, err := os.ReadFile(writeSeed(t, seed.FormatISO))
	if err != nil {
		t.Fatal(err)
	}
	end := len(bytes.TrimRight(b, "\x00"))
	return b[:(end+2047)/2048*2048]
}

// smallFAT is a FAT12 or FAT16 image of size bytes holding the seed files
// and a subdirectory, written with go-diskfs.
func smallFAT(t testing.TB, typ filesystem.Type, size int64) []byte {
	t.Helper()
	p := filepath.Join(t.TempDir(), "fat.img")
	d, err := diskfs.Create(p, size, diskfs.SectorSizeDefault)
	if err != nil {
		t.Fatal(err)
	}
	fsys, err := d.CreateFilesystem(disk.FilesystemSpec{Partition: 0, FSType: typ, VolumeLabel: "CIDATA"})
	if err != nil {
		t.Fatal(err)
	}
	if err := fsys.Mkdir("/openstack/latest"); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"/meta-data": seedFiles.MetaData, "/user-data": seedFiles.UserData, "/openstack/latest/meta_data.json": []byte(`{"uuid": "u"}`)} {
		f, err := fsys.OpenFile(name, os.O_CREATE|os.O_RDWR)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write(data); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	d.Close()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func udfImage(t testing.TB) []byte {
	t.Helper()
	f, err := os.Open("udf/testdata/hybrid.iso.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func allocated() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// readEverything opens img as the boot does and reads every file and
// directory in it (at most 64 MiB a file, 4096 entries in all).
func readEverything(img []byte, lim media.Limits) error {
	fsys, err := media.Read(bytes.NewReader(img), int64(len(img)), "fuzz.img", lim)
	if err != nil {
		return err
	}
	n := 0
	return fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if n++; n > 4096 || err != nil {
			return fs.SkipAll
		}
		if d.IsDir() {
			return nil
		}
		f, err := fsys.Open(p)
		if err != nil {
			return nil
		}
		defer f.Close()
		_, _ = io.Copy(io.Discard, io.LimitReader(f, 64<<20))
		return nil
	})
}

// fuzzRead is one input's run with its bounds checked.
func fuzzRead(t *testing.T, img []byte, lim media.Limits) {
	before := allocated()
	done := make(chan error, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- fmt.Errorf("panic escaped the reader: %v", p)
			}
		}()
		done <- readEverything(img, lim)
	}()
	select {
	case err := <-done:
		if err != nil && strings.HasPrefix(err.Error(), "panic escaped") {
			t.Fatal(err)
		}
	case <-time.After(fuzzHang):
		t.Fatalf("reading a %d-byte image did not end in %v", len(img), fuzzHang)
	}
	if a := allocated() - before; a > fuzzAllocBound {
		t.Fatalf("reading a %d-byte image allocated %d bytes, more than %d", len(img), a, fuzzAllocBound)
	}
}

func FuzzSeedISO(f *testing.F) {
	f.Add(compactISO(f))
	f.Fuzz(func(t *testing.T, img []byte) { fuzzRead(t, img, fuzzLimits) })
}

func FuzzSeedFAT(f *testing.F) {
	f.Add(smallFAT(f, filesystem.TypeFat12, 64<<10))
	f.Fuzz(func(t *testing.T, img []byte) { fuzzRead(t, img, fuzzLimits) })
}

func FuzzSeedUDF(f *testing.F) {
	f.Add(udfImage(f))
	lim := fuzzLimits
	lim.UDF = true
	f.Fuzz(func(t *testing.T, img []byte) { fuzzRead(t, img, lim) })
}

// TestFuzzSeedsRead: the fuzz seeds are valid images the reader reads.
func TestFuzzSeedsRead(t *testing.T) {
	for name, img := range map[string][]byte{
		"iso":   compactISO(t),
		"fat12": smallFAT(t, filesystem.TypeFat12, 64<<10),
		"fat16": smallFAT(t, filesystem.TypeFat16, 8<<20),
		"udf":   udfImage(t),
	} {
		t.Run(name, func(t *testing.T) {
			fsys, err := media.Read(bytes.NewReader(img), int64(len(img)), name, media.Limits{UDF: name == "udf"})
			if err != nil {
				t.Fatal(err)
			}
			want := "meta-data"
			if name == "udf" {
				want = "ovf-env.xml"
			}
			if _, err := fs.ReadFile(fsys, want); err != nil {
				t.Errorf("%s: %v", want, err)
			}
			if name == "fat12" || name == "fat16" {
				b, err := fs.ReadFile(fsys, "openstack/latest/meta_data.json")
				if err != nil || !bytes.HasPrefix(b, []byte(`{"uuid"`)) {
					t.Errorf("openstack/latest/meta_data.json: %q, %v", b, err)
				}
			}
		})
	}
}

// TestWriteFuzzCorpus writes the seeds into testdata/fuzz when
// CLOUDROOT_WRITE_CORPUS=1 (they are committed; `go test` runs them).
func TestWriteFuzzCorpus(t *testing.T) {
	if os.Getenv("CLOUDROOT_WRITE_CORPUS") != "1" {
		t.Skip("CLOUDROOT_WRITE_CORPUS=1 rewrites testdata/fuzz")
	}
	iso := compactISO(t)
	// issue 25's ISO: the root "." record's name length flipped.
	isoBad := bytes.Clone(iso)
	isoBad[int(binary.LittleEndian.Uint32(iso[16*2048+156+2:]))*2048+32] ^= 0xff
	fat := smallFAT(t, filesystem.TypeFat12, 64<<10)
	// issue 25's FAT: a directory's cluster (2, openstack/) chained to
	// itself, in both FATs.
	fatBad := bytes.Clone(fat)
	sector, reserved, fatSectors := int(binary.LittleEndian.Uint16(fat[11:])), int(binary.LittleEndian.Uint16(fat[14:])), int(binary.LittleEndian.Uint16(fat[22:]))
	for i := range int(fat[16]) {
		off := (reserved+i*fatSectors)*sector + 3 // cluster 2's 12 bits
		fatBad[off], fatBad[off+1] = 0x02, fatBad[off+1]&0xF0
	}
	if err := readEverything(fatBad, fuzzLimits); !errors.Is(err, media.ErrCorrupt) {
		t.Fatalf("looped FAT12: %v", err)
	}
	fatAlias := dotAlias(t, fat)
	for target, img := range map[string][]byte{
		"FuzzSeedISO":           iso,
		"FuzzSeedISO/root-name": isoBad,
		"FuzzSeedFAT":           fat,
		"FuzzSeedFAT/dir-loop":  fatBad,
		"FuzzSeedFAT/dot-alias": fatAlias,
	} { // FuzzSeedUDF's seed is udf/testdata/hybrid.iso.gz
		target, name, ok := strings.Cut(target, "/")
		if !ok {
			name = "valid"
		}
		dir := filepath.Join("testdata", "fuzz", target)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		body := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", img)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// dotAlias renames the ".." entry of openstack/latest (the one that is not
// the root's cluster 0) to "..\v": go-diskfs lists it, and a walk goes
// openstack/latest/..\v/latest/..\v/... (found by FuzzSeedFAT).
func dotAlias(t testing.TB, fat []byte) []byte {
	t.Helper()
	b := bytes.Clone(fat)
	for i := 0; i+32 <= len(b); i += 32 {
		if string(b[i:i+11]) == "..         " && b[i+11]&0x10 != 0 && binary.LittleEndian.Uint16(b[i+26:]) != 0 {
			b[i+2] = '\v'
			return b
		}
	}
	t.Fatal("no .. entry off the root")
	return nil
}

func TestFATDotAlias(t *testing.T) {
	img := dotAlias(t, smallFAT(t, filesystem.TypeFat12, 64<<10))
	if err := readEverything(img, fuzzLimits); !errors.Is(err, media.ErrCorrupt) {
		t.Fatalf("err = %v, want ErrCorrupt", err)
	}
}
