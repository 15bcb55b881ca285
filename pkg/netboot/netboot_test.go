package netboot

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
)

func hexsum(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

func TestParseSumFile(t *testing.T) {
	a := strings.Repeat("a", 64)
	b := strings.Repeat("B", 64)
	for _, tc := range []struct {
		in, name, want, bad string
	}{
		{in: a + "\n", name: "x.img", want: a},
		{in: a + "  x.img\n", name: "x.img", want: a},
		{in: a + " *x.img\n", name: "x.img", want: a},
		{in: a + "  ./dir/x.img\n", name: "x.img", want: a},
		{in: a + "  y.img\n" + b + "  x.img\n", name: "x.img", want: strings.ToLower(b)},
		{in: "# comment\n\n" + a, name: "", want: a},
		{in: a + "  y.img\n", name: "x.img", bad: "names no"},
		{in: "", name: "x", bad: "empty"},
		{in: "nothex  x.img", name: "x.img", bad: "64 hex"},
	} {
		got, err := ParseSumFile([]byte(tc.in), tc.name)
		if tc.bad != "" {
			if err == nil || !strings.Contains(err.Error(), tc.bad) {
				t.Errorf("%q: err = %v, want %q", tc.in, err, tc.bad)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q: got %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func FuzzParseSumFile(f *testing.F) {
	f.Add([]byte(strings.Repeat("a", 64)+"  x.img\n"), "x.img")
	f.Add([]byte(strings.Repeat("0", 64)+"\n"), "")
	f.Fuzz(func(t *testing.T, b []byte, name string) {
		s, err := ParseSumFile(b, name)
		if err == nil && len(s) != 64 {
			t.Fatalf("digest %q", s)
		}
	})
}

func TestVerifier(t *testing.T) {
	data := []byte("image")
	v := NewVerifier(hexsum(data))
	v.Write(data)
	if err := v.Check(); err != nil {
		t.Fatal(err)
	}
	v = NewVerifier(hexsum([]byte("other")))
	v.Write(data)
	if err := v.Check(); !errors.Is(err, ErrChecksum) {
		t.Fatalf("mismatch: %v", err)
	}
}

func compress(t *testing.T, comp string, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	var w io.WriteCloser
	var err error
	switch comp {
	case bootenv.CompressNone:
		return b
	case bootenv.CompressGzip:
		w = gzip.NewWriter(&buf)
	case bootenv.CompressZstd:
		w, err = zstd.NewWriter(&buf)
	case bootenv.CompressXz:
		w, err = xz.NewWriter(&buf)
	}
	if err != nil {
		t.Fatal(err)
	}
	w.Write(b)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestDecompress(t *testing.T) {
	data := bytes.Repeat([]byte("cloudroot "), 100000)
	for _, comp := range []string{bootenv.CompressNone, bootenv.CompressGzip, bootenv.CompressZstd, bootenv.CompressXz} {
		z := compress(t, comp, data)
		for _, named := range []string{comp, bootenv.CompressNone} {
			r, err := Decompress(bytes.NewReader(z), named)
			if err != nil {
				t.Fatalf("%s as %s: %v", comp, named, err)
			}
			got, err := io.ReadAll(r)
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("%s as %s: %d bytes, %v", comp, named, len(got), err)
			}
		}
	}
	if _, err := Decompress(bytes.NewReader(data), bootenv.CompressGzip); err == nil {
		t.Fatal("plain data named gzip: no error")
	}
	// A truncated stream fails.
	z := compress(t, bootenv.CompressXz, data)
	r, err := Decompress(bytes.NewReader(z[:len(z)/2]), bootenv.CompressXz)
	if err == nil {
		_, err = io.ReadAll(r)
	}
	if err == nil {
		t.Fatal("truncated xz: no error")
	}
}

// memDisk is a Disk in memory.
type memDisk struct {
	mu    sync.Mutex
	b     []byte
	syncs int
}

func (d *memDisk) ReadAt(p []byte, off int64) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if off >= int64(len(d.b)) {
		return 0, io.EOF
	}
	return copy(p, d.b[off:]), nil
}

func (d *memDisk) WriteAt(p []byte, off int64) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if off+int64(len(p)) > int64(len(d.b)) {
		return 0, errors.New("past the end")
	}
	return copy(d.b[off:], p), nil
}

func (d *memDisk) Sync() error { d.syncs++; return nil }

// image builds a fake disk image with a non-zero head and body.
func image(size int) []byte {
	b := make([]byte, size)
	for i := range b {
		b[i] = byte(i%251 + 1)
	}
	return b
}

func serve(t *testing.T, files map[string][]byte) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		http.ServeContent(w, r, r.URL.Path, time0, bytes.NewReader(b))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestInstall(t *testing.T) {
	const diskSize = 8 << 20
	raw := image(3<<20 + 12345)
	for _, tc := range []struct {
		name      string
		comp      string
		disk      func() []byte
		overwrite bool
		stage     int64 // StageMax; 0 = no staging
		badSum    bool
		sumFile   bool
		wantErr   error
		untouched bool // the disk must be exactly as before
	}{
		{name: "empty disk, zstd, staged", comp: bootenv.CompressZstd, stage: 64 << 20},
		{name: "empty disk, gzip, streamed", comp: bootenv.CompressGzip},
		{name: "empty disk, xz, sum file", comp: bootenv.CompressXz, sumFile: true, stage: 64 << 20},
		{name: "empty disk, raw, too big to stage", comp: bootenv.CompressNone, stage: 1024},
		{name: "not empty, refused", comp: bootenv.CompressNone, disk: func() []byte { b := make([]byte, diskSize); b[510] = 0x55; return b }, wantErr: ErrNotEmpty, untouched: true},
		{name: "backup GPT only, refused", comp: bootenv.CompressNone, disk: func() []byte { b := make([]byte, diskSize); b[diskSize-512] = 'E'; return b }, wantErr: ErrNotEmpty, untouched: true},
		{name: "not empty, overwrite", comp: bootenv.CompressZstd, disk: func() []byte { return image(diskSize) }, overwrite: true, stage: 64 << 20},
		{name: "bad checksum, staged: untouched", comp: bootenv.CompressZstd, stage: 64 << 20, badSum: true, wantErr: ErrChecksum, untouched: true},
		{name: "bad checksum, streamed: head zero", comp: bootenv.CompressGzip, badSum: true, wantErr: ErrChecksum},
		{name: "too large", comp: bootenv.CompressNone, disk: func() []byte { return make([]byte, 2<<20) }, wantErr: ErrTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			payload := compress(t, tc.comp, raw)
			want := hexsum(payload)
			if tc.badSum {
				want = hexsum([]byte("something else"))
			}
			files := map[string][]byte{"/disk.img": payload}
			img := bootenv.Image{URL: "", Target: "/dev/vdb", Compression: tc.comp, Overwrite: tc.overwrite, Checksum: bootenv.Checksum{SHA256: want}}
			if tc.sumFile {
				files["/disk.img.sha256"] = []byte(want + "  disk.img\n")
				img.Checksum = bootenv.Checksum{SumURL: "/disk.img.sha256"}
			}
			srv := serve(t, files)
			img.URL = srv.URL + "/disk.img"
			if img.Checksum.SumURL != "" {
				img.Checksum.SumURL = srv.URL + img.Checksum.SumURL
			}
			disk := &memDisk{b: make([]byte, diskSize)}
			if tc.disk != nil {
				disk.b = tc.disk()
			}
			before := bytes.Clone(disk.b)
			var out bytes.Buffer
			in := &Install{
				Fetcher: &Fetcher{Client: srv.Client(), Progress: &out, Delay: 1},
				Image:   img, Disk: disk, Size: int64(len(disk.b)), Out: &out,
			}
			if tc.stage > 0 {
				in.StageDir, in.StageMax = t.TempDir(), tc.stage
			}
			res, err := in.Run(context.Background())
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err = %v, want %v", err, tc.wantErr)
				}
				if tc.untouched && !bytes.Equal(disk.b, before) {
					t.Fatal("disk changed")
				}
				if !bytes.Equal(disk.b[:HeadSize], make([]byte, HeadSize)) && !tc.untouched {
					t.Fatal("failed write left a head on the disk")
				}
				return
			}
			if err != nil {
				t.Fatalf("Run: %v\n%s", err, out.String())
			}
			if !bytes.Equal(disk.b[:len(raw)], raw) {
				t.Fatal("disk does not hold the image")
			}
			if tc.overwrite && !bytes.Equal(disk.b[diskSize-HeadSize:], make([]byte, HeadSize)) {
				t.Fatal("overwrite left the old disk's tail (backup GPT)")
			}
			if res.Bytes != int64(len(raw)) || res.SHA256 != hexsum(payload) {
				t.Fatalf("result %+v", res)
			}
			if tc.stage > int64(len(payload)) != res.Staged {
				t.Fatalf("staged = %v", res.Staged)
			}
			if !strings.Contains(out.String(), "downloaded") {
				t.Fatalf("no progress on the console:\n%s", out.String())
			}
		})
	}
}

func TestInstallNoSumFile(t *testing.T) {
	srv := serve(t, map[string][]byte{"/d.img": image(1000)})
	disk := &memDisk{b: make([]byte, 4<<20)}
	in := &Install{Fetcher: &Fetcher{Client: srv.Client()}, Image: bootenv.Image{URL: srv.URL + "/d.img", Target: "/dev/vda", Checksum: bootenv.Checksum{SumURL: srv.URL + "/d.img.sha256"}},
		Disk: disk, Size: 4 << 20, Out: io.Discard}
	_, err := in.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "no checksum") {
		t.Fatalf("err = %v", err)
	}
}

// TestFetchResume cuts the first transfer short; the second request must
// ask for the rest with Range.
func TestFetchResume(t *testing.T) {
	data := image(3 << 20)
	var mu sync.Mutex
	var ranges []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		ranges = append(ranges, r.Header.Get("Range"))
		first := len(ranges) == 1
		mu.Unlock()
		if first {
			w.Header().Set("Content-Length", "3145728")
			w.WriteHeader(200)
			w.Write(data[:1<<20])
			return // short body: the client sees an unexpected EOF
		}
		http.ServeContent(w, r, "x", time0, bytes.NewReader(data))
	}))
	defer srv.Close()
	var got bytes.Buffer
	f := &Fetcher{Client: srv.Client(), Delay: 1}
	n, err := f.Copy(context.Background(), srv.URL+"/x", &got, nil)
	if err != nil || n != int64(len(data)) || !bytes.Equal(got.Bytes(), data) {
		t.Fatalf("n=%d err=%v equal=%v", n, err, bytes.Equal(got.Bytes(), data))
	}
	if len(ranges) != 2 || ranges[1] != "bytes=1048576-" {
		t.Fatalf("requests' Range headers: %q", ranges)
	}
}

func TestFetchLocalAndSizeCheck(t *testing.T) {
	p := filepath.Join(t.TempDir(), "r.squashfs")
	os.WriteFile(p, image(5000), 0o644)
	var got bytes.Buffer
	f := &Fetcher{}
	errBig := errors.New("too big")
	if _, err := f.Copy(context.Background(), p, &got, func(n int64) error {
		if n != 5000 {
			t.Errorf("size %d", n)
		}
		return errBig
	}); !errors.Is(err, errBig) {
		t.Fatalf("err = %v", err)
	}
	if n, err := f.Copy(context.Background(), p, &got, nil); err != nil || n != 5000 {
		t.Fatalf("n=%d err=%v", n, err)
	}
	srv := serve(t, nil)
	if _, err := (&Fetcher{Client: srv.Client()}).Copy(context.Background(), srv.URL+"/none", io.Discard, nil); err == nil || !strings.Contains(err.Error(), "404") {
		t.Fatalf("404: %v", err)
	}
}

var time0 = func() (t0 time.Time) { return }()

func TestImageFromConfigs(t *testing.T) {
	sum := strings.Repeat("c", 64)
	for _, tc := range []struct {
		name string
		cfgs []map[string]any
		want bootenv.Image
		none bool
		bad  string
	}{
		{name: "absent", cfgs: []map[string]any{{"runcmd": []any{"x"}}}, none: true},
		{name: "dashes", cfgs: []map[string]any{{"cloudroot": map[string]any{"image": "http://h/d.img.gz", "image-target": "/dev/sda", "image-sha256": sum, "image-overwrite": true}}},
			want: bootenv.Image{URL: "http://h/d.img.gz", Target: "/dev/sda", Compression: bootenv.CompressGzip, Overwrite: true, Checksum: bootenv.Checksum{SHA256: sum}}},
		{name: "underscores, later part wins", cfgs: []map[string]any{
			{"cloudroot": map[string]any{"image": "http://h/a.img", "image_target": "/dev/sda"}},
			{"cloudroot": map[string]any{"image": "http://h/b.img.xz", "image_overwrite": "no"}}},
			want: bootenv.Image{URL: "http://h/b.img.xz", Target: "/dev/sda", Compression: bootenv.CompressXz, Checksum: bootenv.Checksum{SumURL: "http://h/b.img.xz.sha256"}}},
		{name: "not a map", cfgs: []map[string]any{{"cloudroot": "x"}}, bad: "mapping"},
		{name: "no target", cfgs: []map[string]any{{"cloudroot": map[string]any{"image": "http://h/a.img"}}}, bad: "/dev/"},
		{name: "bad overwrite", cfgs: []map[string]any{{"cloudroot": map[string]any{"image": "http://h/a.img", "image-target": "/dev/sda", "image-overwrite": 3}}}, bad: "boolean"},
		{name: "bad url type", cfgs: []map[string]any{{"cloudroot": map[string]any{"image": 5}}}, bad: "string"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok, err := ImageFromConfigs(tc.cfgs)
			if ok == tc.none {
				t.Fatalf("ok = %v", ok)
			}
			if tc.bad != "" {
				if err == nil || !strings.Contains(err.Error(), tc.bad) {
					t.Fatalf("err = %v, want %q", err, tc.bad)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %+v, %v\nwant %+v", got, err, tc.want)
			}
		})
	}
}
