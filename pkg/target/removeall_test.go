package target

import (
	"os"
	"path/filepath"
	"testing"
)

func TestRemoveAll(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "keep"), []byte("x"), 0o644)
	os.MkdirAll(filepath.Join(dir, "a/b"), 0o755)
	os.WriteFile(filepath.Join(dir, "a/b/f"), []byte("x"), 0o644)
	os.Symlink(outside, filepath.Join(dir, "a/link"))
	r, err := New(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.RemoveAll("/a"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "a")); !os.IsNotExist(err) {
		t.Errorf("/a still there: %v", err)
	}
	if _, err := os.Stat(filepath.Join(outside, "keep")); err != nil {
		t.Errorf("a file behind a symlink was removed: %v", err)
	}
	if err := r.RemoveAll("/"); err == nil {
		t.Error("emptying the root was allowed")
	}
}
