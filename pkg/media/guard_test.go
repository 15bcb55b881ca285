package media

import (
	"errors"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"
)

type panicFS struct{}

func (panicFS) Open(string) (fs.File, error) { panic("slice bounds out of range [33:32]") }

func TestGuardRecovers(t *testing.T) {
	g := &guardFS{fsys: panicFS{}, name: "/dev/sr0"}
	for name, call := range map[string]func() error{
		"open":    func() error { _, err := g.Open("meta-data"); return err },
		"stat":    func() error { _, err := g.Stat("meta-data"); return err },
		"readdir": func() error { _, err := g.ReadDir("."); return err },
	} {
		err := call()
		if !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: err = %v, want ErrCorrupt", name, err)
		}
		t.Log(err)
	}
}

// nestedPanics panics when asked for anything below the top level (what
// go-diskfs does when it reads a file's record as a directory is worse).
type nestedPanics struct{ fstest.MapFS }

func (n nestedPanics) Open(name string) (fs.File, error) {
	if strings.Contains(name, "/") {
		panic("read a file as a directory")
	}
	return n.MapFS.Open(name)
}

func TestGuardDirsAreDirs(t *testing.T) {
	inner := nestedPanics{fstest.MapFS{
		"openstack": {Data: []byte("a file, not a directory")},
	}}
	g := &guardFS{fsys: inner, name: "/dev/sr0", maxDir: 1 << 20}
	if _, err := g.Open("openstack/latest/meta_data.json"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("open through a file: %v, want fs.ErrNotExist", err)
	}
	if _, err := g.ReadDir("openstack"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("readdir of a file: %v, want fs.ErrNotExist", err)
	}
	if b, err := fs.ReadFile(g, "openstack"); err != nil || len(b) == 0 {
		t.Errorf("the file itself: %q, %v", b, err)
	}
}
