// Package golden is the tests' golden files: one -update flag for every
// test binary that imports it, and Check, which compares a result with its
// file or, under -update, rewrites the file.
//
//	go test ./pkg/netconfig/ -update   # rewrite, then review with git diff
//
// The flag is registered when the package is initialised, so a test
// binary has it exactly when one of its tests imports this package; no
// test declares a flag of its own.
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// update is the one -update flag (a flag is process state by nature).
var update = flag.Bool("update", false, "rewrite golden files (testdata/, generated docs sections) instead of comparing with them")

// Update reports whether the test binary runs with -update: tests that
// write a golden tree of their own (not one file) ask it.
func Update() bool { return *update }

// Check compares got with the file path, reporting a -want +got diff;
// under -update it writes got to path (creating its directory) instead.
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		Write(t, path, got)
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", path, diff)
	}
}

// CheckString is Check for text.
func CheckString(t testing.TB, path, got string) {
	t.Helper()
	Check(t, path, []byte(got))
}

// Write writes b to path (0644), creating its directory: the -update half
// of Check, for tests that rewrite a whole tree.
func Write(t testing.TB, path string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
