package target

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestExpirePassword(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "etc"), 0o755)
	os.WriteFile(filepath.Join(dir, "etc/passwd"), []byte("root:x:0:0::/root:/bin/sh\nu:x:1000:1000::/home/u:/bin/sh\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "etc/shadow"), []byte("root:*:19800:0:99999:7:::\nu:$6$s$h:19800:0:99999:7:::\n"), 0o640)
	r, err := New(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.ExpirePassword("u"); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "etc/shadow"))
	if want := "root:*:19800:0:99999:7:::\nu:$6$s$h:0:0:99999:7:::\n"; string(b) != want {
		t.Errorf("shadow = %q, want %q", b, want)
	}
	if fi, _ := os.Stat(filepath.Join(dir, "etc/shadow")); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode = %v", fi.Mode())
	}
	if err := r.ExpirePassword("nobody"); !errors.Is(err, ErrNoUser) {
		t.Errorf("missing user: %v", err)
	}
}
