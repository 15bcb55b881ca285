// Package testtree writes small file trees for tests: one helper instead of
// a copy in every package's tests.
package testtree

import (
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// Write creates files (slash-separated path → content) under dir, with
// their parent directories (0755); files are 0644.
func Write(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for rel, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Dir is Write into a new temporary directory, which it returns.
func Dir(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	Write(t, dir, files)
	return dir
}

// Gunzip is the content of the gzipped file name (a disk image in a
// package's testdata).
func Gunzip(t testing.TB, name string) []byte {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return b
}
