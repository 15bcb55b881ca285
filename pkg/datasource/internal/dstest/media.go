package dstest

// The conformance suite every source that reads volumes runs
// (ConformMedia), and the one directory opener their tests share
// (DirOpener).

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/seed"
)

// DirOpener is an Env.OpenFS serving each device from a directory, by
// device path; opening any other device fails the test (the source opened
// a volume that is not one of its candidates).
func DirOpener(t testing.TB, dirs map[string]string) func(bootenv.Device) (fs.FS, func(), error) {
	return func(dev bootenv.Device) (fs.FS, func(), error) {
		d, ok := dirs[dev.Path]
		if !ok {
			t.Errorf("opened %s, which is not a candidate", dev.Path)
			return nil, nil, fs.ErrNotExist
		}
		return os.DirFS(d), func() {}, nil
	}
}

// FSOpener is an Env.OpenFS serving fsys for every device.
func FSOpener(fsys fs.FS) func(bootenv.Device) (fs.FS, func(), error) {
	return func(bootenv.Device) (fs.FS, func(), error) { return fsys, func() {}, nil }
}

// Media is a source that reads volumes (through Env.OpenFS, pkg/media by
// default), for ConformMedia.
type Media struct {
	Source datasource.Source
	// Env is what makes the platform the source's (DMI, Root, Config);
	// ConformMedia sets Devices and OpenFS.
	Env datasource.Env
	// Device is a volume the source reads (its label and type among the
	// source's).
	Device bootenv.Device
	// Root is a volume's tree that the source reads (a golden case's).
	Root string
	// Doc is the path, in Root, of the document the "truncated" and
	// "oversized" cases replace.
	Doc string
	// Why* say why the source answers a case otherwise than the suite
	// expects; "" means the suite's expectation holds.
	//   - WhyEmptyBroken: an empty volume is an error, not ErrNotFound;
	//   - WhyUnreadableNotFound: a volume that cannot be opened, is
	//     corrupt, or whose document cannot be read (oversized) is
	//     ErrNotFound, not an error;
	//   - WhyTruncatedParses: the document cut in half still parses (the
	//     case then only checks that Get does not panic).
	WhyEmptyBroken, WhyUnreadableNotFound, WhyTruncatedParses string
}

// ConformMedia runs the cases every source that reads volumes shares:
//   - "no volume": no devices: ErrNotFound;
//   - "not a candidate": a volume of another label and type is not
//     opened: ErrNotFound;
//   - "empty volume": ErrNotFound (else WhyEmptyBroken);
//   - "unopenable volume": OpenFS fails: an error naming the device, not
//     ErrNotFound (else WhyUnreadableNotFound);
//   - "garbage image", "hostile iso", "hostile vfat": the real reader
//     (pkg/media) on an image file of random bytes, and on ISO9660 and FAT
//     images with a broken directory structure: no panic, no Data, an
//     error naming the image (else WhyUnreadableNotFound);
//   - "truncated": Doc cut in half: an error naming it, not ErrNotFound
//     (else WhyTruncatedParses);
//   - "oversized": Doc larger than datasource.MaxFileSize: an error, not
//     ErrNotFound (else WhyUnreadableNotFound), and no more than
//     MaxFileSize bytes of it read.
//
// The source's own cases (its documents' errors, seed directories,
// platform detection) stay in its tests.
func ConformMedia(t *testing.T, m Media) {
	t.Helper()
	get := func(t *testing.T, devs []bootenv.Device, open func(bootenv.Device) (fs.FS, func(), error)) (*datasource.Data, error) {
		t.Helper()
		e := m.Env
		e.Devices, e.OpenFS = devs, open
		ctx, cancel := context.WithTimeout(context.Background(), MaxGet)
		defer cancel()
		return m.Source.Get(ctx, e)
	}
	notFound := func(t *testing.T, d *datasource.Data, err error) {
		t.Helper()
		if d != nil || !errors.Is(err, datasource.ErrNotFound) {
			t.Fatalf("got %v, %v; want ErrNotFound", d != nil, err)
		}
	}
	broken := func(t *testing.T, d *datasource.Data, err error, want, why string) {
		t.Helper()
		if d != nil || err == nil {
			t.Fatalf("got Data (err %v), want an error", err)
		}
		if why != "" {
			return
		}
		if errors.Is(err, datasource.ErrNotFound) {
			t.Errorf("a broken volume is not ErrNotFound: %v", err)
		}
		if !strings.Contains(err.Error(), want) {
			t.Errorf("err = %v, want naming %q", err, want)
		}
	}
	t.Run("no volume", func(t *testing.T) {
		d, err := get(t, nil, DirOpener(t, nil))
		notFound(t, d, err)
	})
	t.Run("not a candidate", func(t *testing.T) {
		other := bootenv.Device{Name: "vdz", Path: "/dev/vdz", FS: bootenv.FS{Type: "ext4", Label: "not-a-seed"}}
		d, err := get(t, []bootenv.Device{other}, DirOpener(t, nil))
		notFound(t, d, err)
	})
	t.Run("empty volume", func(t *testing.T) {
		d, err := get(t, []bootenv.Device{m.Device}, FSOpener(fstest.MapFS{}))
		if m.WhyEmptyBroken != "" {
			broken(t, d, err, m.Device.Path, "")
			return
		}
		notFound(t, d, err)
	})
	t.Run("unopenable volume", func(t *testing.T) {
		d, err := get(t, []bootenv.Device{m.Device}, func(dev bootenv.Device) (fs.FS, func(), error) {
			return nil, nil, &fs.PathError{Op: "open", Path: dev.Path, Err: errors.New("input/output error")}
		})
		broken(t, d, err, m.Device.Path, m.WhyUnreadableNotFound)
	})
	for _, im := range []struct {
		name string
		make func(t *testing.T, p string)
	}{
		{"garbage image", garbageImage},
		{"hostile iso", func(t *testing.T, p string) { HostileImage(t, p, seed.FormatISO) }},
		{"hostile vfat", func(t *testing.T, p string) { HostileImage(t, p, seed.FormatVFAT) }},
	} {
		t.Run(im.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "volume.img")
			im.make(t, p)
			dev := m.Device
			dev.Path = p
			d, err := get(t, []bootenv.Device{dev}, nil)
			broken(t, d, err, p, m.WhyUnreadableNotFound)
		})
	}
	files := fstest.MapFS{}
	if err := fs.WalkDir(os.DirFS(m.Root), ".", func(p string, de fs.DirEntry, err error) error {
		if err != nil || de.IsDir() {
			return err
		}
		b, err := fs.ReadFile(os.DirFS(m.Root), p)
		files[p] = &fstest.MapFile{Data: b}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	doc, ok := files[m.Doc]
	if !ok {
		t.Fatalf("no %s in %s", m.Doc, m.Root)
	}
	t.Run("good volume", func(t *testing.T) {
		if _, err := get(t, []bootenv.Device{m.Device}, FSOpener(files)); err != nil {
			t.Fatalf("the volume the cases below break: %v", err)
		}
	})
	t.Run("truncated", func(t *testing.T) {
		cut := maps(files, m.Doc, &fstest.MapFile{Data: doc.Data[:len(doc.Data)/2]})
		d, err := get(t, []bootenv.Device{m.Device}, FSOpener(cut))
		if m.WhyTruncatedParses != "" {
			return
		}
		broken(t, d, err, path.Base(m.Doc), "")
	})
	t.Run("oversized", func(t *testing.T) {
		big := &bigFS{FS: files, name: m.Doc}
		d, err := get(t, []bootenv.Device{m.Device}, FSOpener(big))
		broken(t, d, err, path.Base(m.Doc), m.WhyUnreadableNotFound)
		if big.read > datasource.MaxFileSize {
			t.Errorf("read %d bytes of a %d-byte document", big.read, big.size())
		}
	})
}

// maps is files with name replaced by f.
func maps(files fstest.MapFS, name string, f *fstest.MapFile) fstest.MapFS {
	out := fstest.MapFS{}
	for k, v := range files {
		out[k] = v
	}
	out[name] = f
	return out
}

// garbageImage writes 1 MiB of (seeded) random bytes: no filesystem.
func garbageImage(t *testing.T, p string) {
	b := make([]byte, 1<<20)
	r := rand.New(rand.NewPCG(29, 29))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// HostileImage writes to p a seed image (`cloudroot seed make`) of format
// whose directory structure is broken as issue 25's reproductions broke
// it: the FAT root cluster chained to itself (before pkg/media: out of
// memory in go-diskfs), the ISO root's "." record length flipped (a slice
// bounds panic).
func HostileImage(t testing.TB, p string, format seed.Format) {
	t.Helper()
	md, err := seed.MetaData("", "vm1")
	if err != nil {
		t.Fatal(err)
	}
	if err := seed.Write(p, format, seed.Files{MetaData: md, UserData: []byte("#cloud-config\n")}); err != nil {
		t.Fatal(err)
	}
	img, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	switch format {
	case seed.FormatVFAT:
		sector := int(binary.LittleEndian.Uint16(img[11:]))
		reserved := int(binary.LittleEndian.Uint16(img[14:]))
		fatSectors := int(binary.LittleEndian.Uint32(img[36:]))
		root := binary.LittleEndian.Uint32(img[44:])
		for i := range int(img[16]) {
			binary.LittleEndian.PutUint32(img[(reserved+i*fatSectors)*sector+int(root)*4:], root)
		}
	case seed.FormatISO:
		root := int(binary.LittleEndian.Uint32(img[16*2048+156+2:])) * 2048
		img[root+32] ^= 0xff
	}
	if err := os.WriteFile(p, img, 0o644); err != nil {
		t.Fatal(err)
	}
}

// bigFS is FS with the file name larger than datasource.MaxFileSize: its
// bytes are made as they are read, and counted.
type bigFS struct {
	FS   fstest.MapFS
	name string
	read int64
}

func (b *bigFS) size() int64 { return datasource.MaxFileSize + 1<<20 }

func (b *bigFS) Open(name string) (fs.File, error) {
	if name == b.name {
		return &bigFile{fs: b}, nil
	}
	return b.FS.Open(name)
}

func (b *bigFS) ReadDir(name string) ([]fs.DirEntry, error) { return b.FS.ReadDir(name) }

func (b *bigFS) Stat(name string) (fs.FileInfo, error) {
	if name == b.name {
		return bigInfo{b}, nil
	}
	return b.FS.Stat(name)
}

type bigFile struct {
	fs  *bigFS
	off int64
}

func (f *bigFile) Stat() (fs.FileInfo, error) { return bigInfo{f.fs}, nil }
func (f *bigFile) Close() error               { return nil }
func (f *bigFile) Read(p []byte) (int, error) {
	if f.off >= f.fs.size() {
		return 0, io.EOF
	}
	n := int(min(int64(len(p)), f.fs.size()-f.off))
	for i := range n {
		p[i] = 'x'
	}
	f.off += int64(n)
	f.fs.read += int64(n)
	return n, nil
}

type bigInfo struct{ fs *bigFS }

func (i bigInfo) Name() string       { return path.Base(i.fs.name) }
func (i bigInfo) Size() int64        { return i.fs.size() }
func (i bigInfo) Mode() fs.FileMode  { return 0o444 }
func (i bigInfo) ModTime() time.Time { return time.Time{} }
func (i bigInfo) IsDir() bool        { return false }
func (i bigInfo) Sys() any           { return nil }

// Volumes is the golden test of a source that reads volumes, for
// GoldenVolumes.
type Volumes struct {
	Source datasource.Source
	// Env makes the platform the source's (DMI); GoldenVolumes sets
	// Devices and OpenFS.
	Env datasource.Env
	// Device serves each case's Dir; Others are listed before it and must
	// not be opened (volumes that are not the source's).
	Device bootenv.Device
	Others []bootenv.Device
	// Dir is the case's subdirectory holding the volume's tree ("disk",
	// "drive").
	Dir string
	// Differs are the fields of a case's upstream golden where cloudroot
	// deliberately differs, by case name.
	Differs map[string]Differs
}

// GoldenVolumes runs, for each case testdata/<case>/, a Get with its Dir
// as the volume, and compares Data with upstream-26.json (Upstream) and
// want.json (Golden).
func GoldenVolumes(t *testing.T, v Volumes) {
	t.Helper()
	for _, name := range Cases(t, "testdata") {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join("testdata", name)
			e := v.Env
			e.Devices = append(append([]bootenv.Device(nil), v.Others...), v.Device)
			e.OpenFS = DirOpener(t, map[string]string{v.Device.Path: filepath.Join(dir, v.Dir)})
			d, err := v.Source.Get(context.Background(), e)
			Upstream(t, dir, d, err, "", v.Differs[name])
			if err != nil {
				t.Fatal(err)
			}
			Golden(t, filepath.Join(dir, "want.json"), d, "")
		})
	}
}
