//go:build unix

package modules

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cloudroot/cloudroot/pkg/modules/internal/modtest"
	"github.com/cloudroot/cloudroot/pkg/target"
)

func confineContext(t *testing.T, cfg Config) (*Context, *[]string) {
	t.Helper()
	files := maps.Clone(baseFiles)
	files["etc/shadow"] = modtest.Shadow
	c, _, _ := testContext(t, cfg, files)
	if err := os.Chmod(filepath.Join(c.Root.Dir(), "etc", "shadow"), 0o640); err != nil {
		t.Fatal(err)
	}
	warnings := &[]string{}
	c.Warn = func(m string) { *warnings = append(*warnings, m) }
	return c, warnings
}

// TestWriteFilesUserDirSymlink: write_files (and its deferred half) into a
// directory a user controls does not follow the user's symlinks, with or
// without owner: (issue 25 item 2).
func TestWriteFilesUserDirSymlink(t *testing.T) {
	for _, tc := range []struct {
		name, entry string
		deferred    bool
	}{
		{"owner into a symlinked file", "path: /home/alice/notes\n    owner: alice:alice\n    content: x", false},
		{"owner into a symlinked directory", "path: /home/alice/.config/shadow\n    owner: alice:alice\n    content: x", false},
		{"append into a symlinked file", "path: /home/alice/notes\n    append: true\n    content: x", false},
		{"defer into a symlinked file", "path: /home/alice/notes\n    owner: alice:alice\n    content: x\n    defer: true", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := confineContext(t, yamlCfg(t, "write_files:\n  - "+tc.entry+"\n"))
			home := modtest.UserHome(t, c.Root.Dir())
			if err := os.Symlink("/etc/shadow", filepath.Join(home, "notes")); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("/etc", filepath.Join(home, ".config")); err != nil {
				t.Fatal(err)
			}
			m := WriteFiles
			if tc.deferred {
				m = WriteFilesDeferred
			}
			err := m.Run(context.Background(), c)
			if !errors.Is(err, target.ErrUnsafeSymlink) {
				t.Errorf("err = %v, want ErrUnsafeSymlink", err)
			}
			modtest.ShadowUnchanged(t, c.Root.Dir())
		})
	}
}

// TestWriteFilesSourceBounded: a file:// source that is not a regular file
// (a FIFO, /dev/zero, a directory) or is larger than MaxDecodedFile is
// refused without blocking or reading it, and the entry falls back to its
// content (issue 25 item 6).
func TestWriteFilesSourceBounded(t *testing.T) {
	type src struct{ name, path string }
	srcs := []src{{"fifo", "/srv/fifo"}, {"directory", "/srv"}, {"larger than the cap", "/srv/big"}}
	if os.Geteuid() == 0 {
		srcs = append(srcs, src{"/dev/zero", "/dev/zero"})
	}
	for _, s := range srcs {
		t.Run(s.name, func(t *testing.T) {
			// owned by whoever runs the test, so that it runs without root
			c, warnings := confineContext(t, yamlCfg(t, "write_files:\n  - path: /etc/out\n    owner: me:me\n    source: {uri: 'file://"+s.path+"'}\n    content: fallback\n"))
			dir := c.Root.Dir()
			me := fmt.Sprintf("me:x:%d:%d::/:/bin/sh\n", os.Geteuid(), os.Getegid())
			if err := os.WriteFile(filepath.Join(dir, "etc", "passwd"), []byte(baseFiles["etc/passwd"]+me), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "etc", "group"), []byte(baseFiles["etc/group"]+fmt.Sprintf("me:x:%d:\n", os.Getegid())), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Join(dir, "srv"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Mkfifo(filepath.Join(dir, "srv", "fifo"), 0o644); err != nil {
				t.Fatal(err)
			}
			// Sparse: no disk used.
			big, err := os.Create(filepath.Join(dir, "srv", "big"))
			if err != nil {
				t.Fatal(err)
			}
			if err := big.Truncate(MaxDecodedFile + 1); err != nil {
				t.Fatal(err)
			}
			big.Close()
			if os.Geteuid() == 0 {
				if err := os.MkdirAll(filepath.Join(dir, "dev"), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := syscall.Mknod(filepath.Join(dir, "dev", "zero"), syscall.S_IFCHR|0o666, 1<<8|5); err != nil {
					t.Fatal(err)
				}
			}
			done := make(chan error, 1)
			go func() { done <- WriteFiles.Run(context.Background(), c) }()
			select {
			case err := <-done:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(time.Minute):
				t.Fatal("write_files blocked on the source")
			}
			if got := readFile(t, c, "/etc/out"); got != "fallback" {
				t.Errorf("/etc/out = %.40q, want the fallback content", got)
			}
			if len(*warnings) != 1 || !strings.Contains((*warnings)[0], "Failed to retrieve contents from source") {
				t.Errorf("warnings = %q", *warnings)
			}
		})
	}
}
