package testtree

import (
	"os"
	"path/filepath"
	"testing"
)

func TestDir(t *testing.T) {
	dir := Dir(t, map[string]string{"a/b/c.txt": "c\n", "top": ""})
	for rel, want := range map[string]string{"a/b/c.txt": "c\n", "top": ""} {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		got, err := os.ReadFile(p)
		if err != nil || string(got) != want {
			t.Errorf("%s = %q, %v; want %q", rel, got, err, want)
		}
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o644 {
			t.Errorf("%s mode %v, %v; want 0644", rel, fi.Mode(), err)
		}
	}
	if fi, err := os.Stat(filepath.Join(dir, "a", "b")); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o755 {
		t.Errorf("a/b: %v, %v; want a 0755 directory", fi, err)
	}
}
