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

	"github.com/cloudroot/cloudroot/pkg/target"
)

const shadowText = "root:$6$secret:19000::::::\nalice:!:19000::::::\n"

// userHome makes /home/alice a directory alice controls: hers when the
// test runs as root, world-writable otherwise (pkg/target trusts neither).
func userHome(t *testing.T, c *Context) string {
	t.Helper()
	hp := filepath.Join(c.Root.Dir(), "home", "alice")
	if err := os.MkdirAll(hp, 0o755); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		if err := os.Chown(hp, 1000, 1000); err != nil {
			t.Fatal(err)
		}
	} else if err := os.Chmod(hp, 0o777); err != nil {
		t.Fatal(err)
	}
	return hp
}

// shadowUnchanged fails the test when the target's /etc/shadow changed
// (content, mode, owner) since the context was made.
func shadowUnchanged(t *testing.T, c *Context) {
	t.Helper()
	hp := filepath.Join(c.Root.Dir(), "etc", "shadow")
	b, err := os.ReadFile(hp)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != shadowText {
		t.Errorf("/etc/shadow rewritten: %q", b)
	}
	fi, err := os.Lstat(hp)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode() != 0o640 {
		t.Errorf("/etc/shadow mode %v", fi.Mode())
	}
	if uid, gid := ownerOf(fi); os.Geteuid() == 0 && (uid != 0 || gid != 0) {
		t.Errorf("/etc/shadow chowned to %d:%d", uid, gid)
	}
}

func confineContext(t *testing.T, cfg Config) (*Context, *[]string) {
	t.Helper()
	files := maps.Clone(baseFiles)
	files["etc/shadow"] = shadowText
	c, _, _ := testContext(t, cfg, files)
	if err := os.Chmod(filepath.Join(c.Root.Dir(), "etc", "shadow"), 0o640); err != nil {
		t.Fatal(err)
	}
	warnings := &[]string{}
	c.Warn = func(m string) { *warnings = append(*warnings, m) }
	return c, warnings
}

// TestAuthorizedKeysSymlinkRefused: an existing user's authorized_keys (or
// .ssh) planted as a symlink to a root file is refused with a warning, the
// module goes on, and nothing outside the home is touched (issue 25 item 2).
func TestAuthorizedKeysSymlinkRefused(t *testing.T) {
	for _, tc := range []struct{ name, link, to string }{
		{"authorized_keys to /etc/shadow", ".ssh/authorized_keys", "/etc/shadow"},
		{"authorized_keys to a relative /etc/shadow", ".ssh/authorized_keys", "../../../etc/shadow"},
		{".ssh to /etc", ".ssh", "/etc"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, warnings := confineContext(t, Config{})
			home := userHome(t, c)
			if err := os.MkdirAll(filepath.Join(home, ".ssh"), 0o700); err != nil {
				t.Fatal(err)
			}
			lp := filepath.Join(home, tc.link)
			os.Remove(lp)
			if err := os.Symlink(tc.to, lp); err != nil {
				t.Fatal(err)
			}
			u, err := c.Root.LookupUser("alice")
			if err != nil {
				t.Fatal(err)
			}
			if err := setupUserKeys(c, u, []string{"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIB alice@laptop"}, nil); err != nil {
				t.Errorf("err = %v, want a warning only", err)
			}
			shadowUnchanged(t, c)
			if c.Root.Exists("/etc/authorized_keys") {
				t.Error("/etc/authorized_keys written")
			}
			if len(*warnings) != 1 || !strings.Contains((*warnings)[0], "symlink") || !strings.Contains((*warnings)[0], "alice") {
				t.Errorf("warnings = %q, want one about alice's symlink", *warnings)
			}
		})
	}
}

// TestAuthorizedKeysInUserHome: the ordinary case still works in a home the
// user owns, keys owned by the user.
func TestAuthorizedKeysInUserHome(t *testing.T) {
	c, warnings := confineContext(t, Config{})
	home := userHome(t, c)
	u, err := c.Root.LookupUser("alice")
	if err != nil {
		t.Fatal(err)
	}
	if err := setupUserKeys(c, u, []string{"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIB alice@laptop"}, nil); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(home, ".ssh", "authorized_keys"))
	if err != nil || !strings.Contains(string(b), "alice@laptop") {
		t.Fatalf("authorized_keys = %q, %v", b, err)
	}
	if os.Geteuid() == 0 {
		for _, p := range []string{".ssh", ".ssh/authorized_keys"} {
			fi, _ := os.Lstat(filepath.Join(home, p))
			if uid, gid := ownerOf(fi); uid != 1000 || gid != 1000 {
				t.Errorf("%s owner %d:%d", p, uid, gid)
			}
		}
	}
	if len(*warnings) != 0 {
		t.Errorf("warnings: %q", *warnings)
	}
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
			home := userHome(t, c)
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
			shadowUnchanged(t, c)
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
