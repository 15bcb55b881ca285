package udf

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/cloudroot/cloudroot/pkg/internal/testtree"
)

// hybrid.iso.gz was made with
//
//	genisoimage -quiet -udf -V rd_rdfe_stable.240101-0000 -o img.iso src
//
// from src/ovf-env.xml, src/sub/deep.txt ("nested\n") and src/big.txt (5000
// random bytes in base64, several blocks); blkid calls it TYPE="udf"
// VERSION="1.02".
func image(t testing.TB) []byte {
	t.Helper()
	return testtree.Gunzip(t, "testdata/hybrid.iso.gz")
}

func TestImage(t *testing.T) {
	b := image(t)
	u, err := Open(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	if got := u.Label(); got != "rd_rdfe_stable.240101-0000" {
		t.Errorf("label %q", got)
	}
	got, err := fs.ReadFile(u, "ovf-env.xml")
	if err != nil {
		t.Fatal(err)
	}
	if want := "<?xml version=\"1.0\"?>\n<Environment/>\n"; string(got) != want {
		t.Errorf("ovf-env.xml = %q, want %q", got, want)
	}
	if got, err := fs.ReadFile(u, "sub/deep.txt"); err != nil || string(got) != "nested\n" {
		t.Errorf("sub/deep.txt = %q, %v", got, err)
	}
	big, err := fs.ReadFile(u, "big.txt")
	if err != nil || len(big) != 6756 || !strings.HasSuffix(string(big), "\n") {
		t.Errorf("big.txt: %d bytes, %v", len(big), err)
	}
	if _, err := u.Open("missing"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
	if err := fstest.TestFS(u, "ovf-env.xml", "sub/deep.txt", "big.txt"); err != nil {
		t.Error(err)
	}
}

// TestGenisoimage builds a fresh image when the tool is there.
func TestGenisoimage(t *testing.T) {
	if _, err := exec.LookPath("genisoimage"); err != nil {
		t.Skip("genisoimage not installed")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	if err := os.MkdirAll(filepath.Join(src, "a", "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{"OVF-ENV.xml": "x", "a/b/c.txt": strings.Repeat("0123456789", 1000)}
	for n, c := range files {
		if err := os.WriteFile(filepath.Join(src, n), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	img := filepath.Join(dir, "img.iso")
	if out, err := exec.Command("genisoimage", "-quiet", "-udf", "-V", "cidata", "-o", img, src).CombinedOutput(); err != nil {
		t.Skipf("genisoimage: %v: %s", err, out)
	}
	f, err := os.Open(img)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, _ := f.Stat()
	u, err := Open(f, fi.Size())
	if err != nil {
		t.Fatal(err)
	}
	for n, c := range files {
		if got, err := fs.ReadFile(u, n); err != nil || string(got) != c {
			t.Errorf("%s: %d bytes, %v", n, len(got), err)
		}
	}
}

func TestNotUDF(t *testing.T) {
	for name, b := range map[string][]byte{
		"empty":       nil,
		"zeros":       make([]byte, 1<<20),
		"iso9660only": append(make([]byte, 32768), []byte("\x01CD001\x01")...),
	} {
		if _, err := Open(bytes.NewReader(b), int64(len(b))); !errors.Is(err, ErrNotUDF) {
			t.Errorf("%s: %v, want ErrNotUDF", name, err)
		}
	}
}

// TestCorrupt flips bytes all over the image's structures: errors, never
// panics.
func TestCorrupt(t *testing.T) {
	b := image(t)
	for off := 32768; off < 300*2048 && off < len(b); off += 97 {
		b[off] ^= 0xff
		if u, err := Open(bytes.NewReader(b), int64(len(b))); err == nil {
			_, _ = fs.ReadFile(u, "ovf-env.xml")
			_, _ = fs.ReadDir(u, ".")
		}
		b[off] ^= 0xff
	}
}

// sparse is a volume given as sector records (a big-endian uint16 sector
// number, a big-endian uint16 length, then that many bytes of the
// sector's start); everything else reads as zeros. It keeps fuzz inputs
// small while the structures sit hundreds of sectors apart.
type sparse map[int64][]byte

func parseSparse(b []byte) sparse {
	s := sparse{}
	for len(b) >= 4 {
		n := int64(b[0])<<8 | int64(b[1])
		k := min(int(b[2])<<8|int(b[3]), len(b)-4, 2048)
		s[n] = b[4 : 4+k]
		b = b[4+k:]
	}
	return s
}

func (s sparse) ReadAt(p []byte, off int64) (int, error) {
	clear(p)
	end := off + int64(len(p))
	for n := off / 2048; n*2048 < end; n++ {
		sec, ok := s[n]
		if !ok {
			continue
		}
		lo := max(off, n*2048)
		hi := min(end, n*2048+int64(len(sec)))
		if lo < hi {
			copy(p[lo-off:hi-off], sec[lo-n*2048:hi-n*2048])
		}
	}
	return len(p), nil
}

func FuzzOpen(f *testing.F) {
	img := image(f)
	var seed []byte
	for sec := 16; sec < 300 && (sec+1)*2048 <= len(img); sec++ {
		b := bytes.TrimRight(img[sec*2048:(sec+1)*2048], "\x00")
		if len(b) == 0 || (sec > 21 && sec < 256 && (sec < 32 || sec > 37)) {
			// Only the recognition sequence, the main descriptor
			// sequence and the file set.
			continue
		}
		seed = append(seed, byte(sec>>8), byte(sec), byte(len(b)>>8), byte(len(b)))
		seed = append(seed, b...)
	}
	if u, err := Open(parseSparse(seed), 1<<30); err != nil {
		f.Fatalf("seed: %v", err)
	} else if _, err := fs.ReadFile(u, "ovf-env.xml"); err != nil {
		f.Fatalf("seed: %v", err)
	}
	f.Add(seed)
	f.Fuzz(func(t *testing.T, b []byte) {
		u, err := Open(parseSparse(b), 1<<30)
		if err != nil {
			return
		}
		_, _ = fs.ReadFile(u, "ovf-env.xml")
		ents, _ := fs.ReadDir(u, ".")
		for _, e := range ents {
			_, _ = e.Info()
		}
	})
}
