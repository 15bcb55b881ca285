package initramfs

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestProgramFiles follows the host's /usr/bin/true (dynamically linked on
// Debian) to its interpreter and libc, and stages them.
func TestProgramFiles(t *testing.T) {
	const prog = "/usr/bin/true"
	files, err := ProgramFiles("", prog)
	if err != nil {
		t.Skipf("%s: %v", prog, err)
	}
	if len(files) < 2 || files[0] != prog {
		t.Skipf("%s is not dynamically linked here: %v", prog, files)
	}
	if !slices.ContainsFunc(files, func(f string) bool { return strings.HasPrefix(filepath.Base(f), "libc.so") }) ||
		!slices.ContainsFunc(files, func(f string) bool { return strings.HasPrefix(filepath.Base(f), "ld-linux") }) {
		t.Errorf("files = %v, want the interpreter and libc", files)
	}
	dest := t.TempDir()
	n, err := StagePrograms(dest, []string{prog})
	if err != nil || n == 0 {
		t.Fatalf("StagePrograms: %d, %v", n, err)
	}
	for _, f := range files {
		if fi, err := os.Stat(filepath.Join(dest, f)); err != nil || !fi.Mode().IsRegular() {
			t.Errorf("%s not staged: %v", f, err)
		}
	}
	if _, err := ProgramFiles("", filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("no error for a missing program")
	}
}
