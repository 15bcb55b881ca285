package disk

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// memDev is a Device in memory.
type memDev struct {
	b  []byte
	ss int
}

func (m *memDev) Size() int64 { return int64(len(m.b)) }
func (m *memDev) SectorSize() int {
	if m.ss == 0 {
		return 512
	}
	return m.ss
}

func (m *memDev) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 || off > int64(len(m.b)) {
		return 0, io.EOF
	}
	n := copy(p, m.b[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (m *memDev) WriteAt(p []byte, off int64) (int, error) {
	if off < 0 || off+int64(len(p)) > int64(len(m.b)) {
		return 0, io.ErrShortWrite
	}
	return copy(m.b[off:], p), nil
}

func needTools(t testing.TB, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
}

// image makes a sparse image file of size bytes in a temp dir.
func image(t testing.TB, size int64) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "disk.img")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return p
}

// sfdiskImage lays out a fresh image with an sfdisk script.
func sfdiskImage(t testing.TB, size int64, script string) string {
	t.Helper()
	needTools(t, "sfdisk")
	p := image(t, size)
	run(t, script, "sfdisk", "-q", "--no-reread", "--no-tell-kernel", p)
	return p
}

func run(t testing.TB, stdin string, argv ...string) string {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin = strings.NewReader(stdin)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	cmd.Env = append(os.Environ(), "LANG=C", "LC_ALL=C")
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(argv, " "), err, out.String())
	}
	return out.String()
}

func resize(t testing.TB, p string, size int64) {
	t.Helper()
	if err := os.Truncate(p, size); err != nil {
		t.Fatal(err)
	}
}

func readAll(t testing.TB, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func strconvFormat(n int64) string { return strconv.FormatInt(n, 10) }
