package media

import (
	"errors"
	"io/fs"
	"testing"
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
