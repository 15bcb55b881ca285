//go:build unix

package target

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// userDir makes <root>/home/u a directory a local user controls: owned by
// uid 1000 when the test runs as root, world-writable otherwise (either
// makes it untrusted). It returns its host path.
func userDir(t *testing.T, r *Root, owned bool) string {
	t.Helper()
	hp := filepath.Join(r.Dir(), "home", "u")
	if err := os.MkdirAll(hp, 0o755); err != nil {
		t.Fatal(err)
	}
	if owned {
		if os.Geteuid() != 0 {
			t.Skip("chown to another user needs root")
		}
		if err := os.Chown(hp, 1000, 1000); err != nil {
			t.Fatal(err)
		}
		return hp
	}
	if err := os.Chmod(hp, 0o777); err != nil {
		t.Fatal(err)
	}
	return hp
}

// shadow writes the target's /etc/shadow and returns a check that it is
// unchanged (content, mode, owner).
func shadow(t *testing.T, r *Root) func() {
	t.Helper()
	hp := filepath.Join(r.Dir(), "etc", "shadow")
	if err := os.WriteFile(hp, []byte("root:$6$secret:19000::::::\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	before, err := os.Lstat(hp)
	if err != nil {
		t.Fatal(err)
	}
	return func() {
		t.Helper()
		b, err := os.ReadFile(hp)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != "root:$6$secret:19000::::::\n" {
			t.Errorf("/etc/shadow was rewritten: %q", b)
		}
		after, err := os.Lstat(hp)
		if err != nil {
			t.Fatal(err)
		}
		if after.Mode() != before.Mode() {
			t.Errorf("/etc/shadow mode %v, was %v", after.Mode(), before.Mode())
		}
		bu, bg := fileOwner(before)
		if u, g := fileOwner(after); u != bu || g != bg {
			t.Errorf("/etc/shadow chowned to %d:%d, was %d:%d", u, g, bu, bg)
		}
	}
}

// TestUserPlantedSymlinks: a local user's symlinks (in a directory the user
// controls) never redirect a write, chown, chmod, mkdir or symlink onto
// another file of the target (issue 25 item 2).
func TestUserPlantedSymlinks(t *testing.T) {
	ops := []struct {
		name  string
		plant func(t *testing.T, home string) // makes the trap in home
		op    func(r *Root) error
	}{
		{"write through a symlinked file", linkAt("authorized_keys", "/etc/shadow"), func(r *Root) error {
			return r.WriteFileOpts("/home/u/authorized_keys", []byte("ssh-ed25519 AAAA u\n"), WriteOpts{Perm: 0o600, UID: 1000, GID: 1000})
		}},
		{"write through a relative symlinked file", linkAt("authorized_keys", "../../etc/shadow"), func(r *Root) error {
			return r.WriteFile("/home/u/authorized_keys", []byte("x\n"), 0o600)
		}},
		{"append through a symlinked file", linkAt("log", "/etc/shadow"), func(r *Root) error {
			return r.WriteFileOpts("/home/u/log", []byte("x\n"), WriteOpts{Perm: 0o644, UID: -1, GID: -1, Append: true})
		}},
		{"write through a symlinked directory", linkAt(".ssh", "/etc"), func(r *Root) error {
			return r.WriteFileOpts("/home/u/.ssh/shadow", []byte("x\n"), WriteOpts{Perm: 0o600, UID: 1000, GID: 1000})
		}},
		{"mkdir through a symlinked directory", linkAt(".ssh", "/etc"), func(r *Root) error {
			return r.MkdirAll("/home/u/.ssh/sub", 0o700)
		}},
		{"chown through a symlink", linkAt(".ssh", "/etc/shadow"), func(r *Root) error {
			return r.Chown("/home/u/.ssh", 1000, 1000)
		}},
		{"chmod through a symlink", linkAt(".ssh", "/etc/shadow"), func(r *Root) error {
			return r.Chmod("/home/u/.ssh", 0o777)
		}},
		{"chown through a symlinked directory", linkAt(".ssh", "/etc"), func(r *Root) error {
			return r.Chown("/home/u/.ssh/shadow", 1000, 1000)
		}},
		{"symlink through a symlinked directory", linkAt(".ssh", "/etc"), func(r *Root) error {
			return r.Symlink("/home/u/keys", "/home/u/.ssh/shadow")
		}},
		{"remove through a symlinked directory", linkAt(".ssh", "/etc"), func(r *Root) error {
			return r.Remove("/home/u/.ssh/shadow")
		}},
		{"rename through a symlinked directory", linkAt(".ssh", "/etc"), func(r *Root) error {
			return r.Rename("/home/u/.ssh/shadow", "/home/u/stolen")
		}},
		{"open through a symlinked file", linkAt("src", "/etc/shadow"), func(r *Root) error {
			f, err := r.OpenRegular("/home/u/src")
			if err == nil {
				f.Close()
			}
			return err
		}},
	}
	for _, owned := range []bool{false, true} {
		for _, tc := range ops {
			name := tc.name
			if owned {
				name += " (user-owned home)"
			} else {
				name += " (world-writable home)"
			}
			t.Run(name, func(t *testing.T) {
				r, outside := newRoot(t)
				unchanged := shadow(t, r)
				home := userDir(t, r, owned)
				tc.plant(t, home)
				err := tc.op(r)
				if !errors.Is(err, ErrUnsafeSymlink) {
					t.Errorf("err = %v, want ErrUnsafeSymlink", err)
				}
				unchanged()
				assertEmpty(t, outside)
				for _, p := range []string{"etc/sub", "etc/authorized_keys", "home/u/stolen"} {
					if _, err := os.Lstat(filepath.Join(r.Dir(), p)); err == nil {
						t.Errorf("%s was created", p)
					}
				}
			})
		}
	}
}

func linkAt(name, to string) func(t *testing.T, home string) {
	return func(t *testing.T, home string) {
		t.Helper()
		if err := os.Symlink(to, filepath.Join(home, name)); err != nil {
			t.Fatal(err)
		}
	}
}

// TestUserDirWritesStillWork: writing into a user's directory (not through
// a planted link) works, owner and mode applied, and a symlink in a
// directory only root controls is still followed.
func TestUserDirWritesStillWork(t *testing.T) {
	r, _ := newRoot(t)
	home := userDir(t, r, false)
	if err := r.MkdirAll("/home/u/.ssh", 0o700); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteFile("/home/u/.ssh/authorized_keys", []byte("k\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteFileOpts("/home/u/.ssh/authorized_keys", []byte("k2\n"), WriteOpts{Perm: 0o600, UID: -1, GID: -1, Append: true}); err != nil {
		t.Fatal(err)
	}
	if err := r.Chmod("/home/u/.ssh/authorized_keys", 0o644); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(home, ".ssh", "authorized_keys"))
	if string(b) != "k\nk2\n" {
		t.Errorf("content %q", b)
	}
	if fi, _ := os.Stat(filepath.Join(home, ".ssh", "authorized_keys")); fi.Mode() != 0o644 {
		t.Errorf("mode %v", fi.Mode())
	}
	// /home is root's: a link there (a home moved to /data) is followed.
	if err := os.MkdirAll(filepath.Join(r.Dir(), "data", "v"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/data/v", filepath.Join(r.Dir(), "home", "v")); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteFile("/home/v/.profile", []byte("p\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(r.Dir(), "data", "v", ".profile")); err != nil {
		t.Error(err)
	}
	if err := r.Remove("/home/u/.ssh/authorized_keys"); err != nil {
		t.Fatal(err)
	}
	if err := r.RemoveAll("/home/u/.ssh"); err != nil {
		t.Fatal(err)
	}
}

// TestHardLinkInUserDir: a hard link a user made to a file of the target
// is not appended from, chowned or chmodded.
func TestHardLinkInUserDir(t *testing.T) {
	r, _ := newRoot(t)
	unchanged := shadow(t, r)
	home := userDir(t, r, false)
	if err := os.Link(filepath.Join(r.Dir(), "etc", "shadow"), filepath.Join(home, "log")); err != nil {
		t.Skipf("hard link: %v", err)
	}
	if err := r.WriteFileOpts("/home/u/log", []byte("x\n"), WriteOpts{Perm: 0o644, UID: -1, GID: -1, Append: true}); !errors.Is(err, ErrHardLinked) {
		t.Errorf("append: err = %v, want ErrHardLinked", err)
	}
	if err := r.Chmod("/home/u/log", 0o666); !errors.Is(err, ErrHardLinked) {
		t.Errorf("chmod: err = %v, want ErrHardLinked", err)
	}
	if err := r.Chown("/home/u/log", os.Geteuid(), os.Getegid()); !errors.Is(err, ErrHardLinked) {
		t.Errorf("chown: err = %v, want ErrHardLinked", err)
	}
	unchanged()
	// Replacing the name is fine: the rename makes a new inode.
	if err := r.WriteFile("/home/u/log", []byte("new\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	unchanged()
}

// TestOpenRegularRefusesSpecialFiles: a FIFO, a directory and a device are
// refused without blocking (issue 25 item 6).
func TestOpenRegularRefusesSpecialFiles(t *testing.T) {
	r, _ := newRoot(t)
	dir := r.Dir()
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("fifo", filepath.Join(dir, "fifolink")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "etc", "plain"), []byte("ok"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []string{"/fifo", "/fifolink", "/etc", "/"}
	if os.Geteuid() == 0 {
		// /dev/zero, made in the root (1, 5).
		if err := os.MkdirAll(filepath.Join(dir, "dev"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Mknod(filepath.Join(dir, "dev", "zero"), syscall.S_IFCHR|0o666, 1<<8|5); err != nil {
			t.Fatal(err)
		}
		cases = append(cases, "/dev/zero")
	}
	for _, p := range cases {
		done := make(chan error, 1)
		go func() {
			f, err := r.OpenRegular(p)
			if err == nil {
				f.Close()
			}
			done <- err
		}()
		select {
		case err := <-done:
			if !errors.Is(err, ErrNotRegular) {
				t.Errorf("%s: err = %v, want ErrNotRegular", p, err)
			}
		case <-time.After(time.Minute):
			t.Fatalf("%s: open blocked", p)
		}
	}
	f, err := r.OpenRegular("/etc/plain")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil || string(b) != "ok" {
		t.Errorf("read %q, %v", b, err)
	}
	if _, err := r.OpenRegular("/missing"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing: err = %v, want ErrNotExist", err)
	}
}

// TestSwapRace: a user swapping their .ssh between a directory and a
// symlink to /etc while root writes, chowns and chmods into it never gets
// a write onto /etc/shadow: each element is opened O_NOFOLLOW through the
// descriptor of the directory checked before it.
func TestSwapRace(t *testing.T) {
	r, outside := newRoot(t)
	unchanged := shadow(t, r)
	home := userDir(t, r, false)
	ssh := filepath.Join(home, ".ssh")
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			os.RemoveAll(ssh)
			os.Mkdir(ssh, 0o700)
			os.WriteFile(filepath.Join(ssh, "shadow"), []byte("mine\n"), 0o600)
			os.RemoveAll(ssh)
			os.Symlink("/etc", ssh)
		}
	}()
	for range 500 {
		r.WriteFileOpts("/home/u/.ssh/shadow", []byte("k\n"), WriteOpts{Perm: 0o600, UID: os.Geteuid(), GID: os.Getegid()})
		r.Chmod("/home/u/.ssh/shadow", 0o666)
		r.Chown("/home/u/.ssh/shadow", os.Geteuid(), 4242)
	}
	close(stop)
	<-done
	unchanged()
	assertEmpty(t, outside)
}
