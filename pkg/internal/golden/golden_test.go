package golden

import (
	"os"
	"path/filepath"
	"testing"
)

func TestCheckWrite(t *testing.T) {
	p := filepath.Join(t.TempDir(), "sub", "want.txt")
	Write(t, p, []byte("a\n"))
	CheckString(t, p, "a\n")
	b, err := os.ReadFile(p)
	if err != nil || string(b) != "a\n" {
		t.Fatalf("%q %v", b, err)
	}
}

// TestCheckDiff: a mismatch fails the test (seen through a sub-test's
// recorder, not this test).
func TestCheckDiff(t *testing.T) {
	p := filepath.Join(t.TempDir(), "want.txt")
	Write(t, p, []byte("a\n"))
	ok := t.Run("mismatch", func(t *testing.T) {
		ft := &fakeT{TB: t}
		Check(ft, p, []byte("b\n"))
		if !ft.failed {
			t.Error("no failure reported")
		}
	})
	if !ok {
		t.Fatal("sub-test failed")
	}
}

type fakeT struct {
	testing.TB
	failed bool
}

func (f *fakeT) Helper()               {}
func (f *fakeT) Errorf(string, ...any) { f.failed = true }
func (f *fakeT) Fatalf(string, ...any) { f.failed = true }
