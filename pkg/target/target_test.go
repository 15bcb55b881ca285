package target

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// newRoot makes <tmp>/root as the target and <tmp>/outside as a sibling that
// must never be touched; it returns the root and the outside dir.
func newRoot(t *testing.T) (*Root, string) {
	t.Helper()
	base := t.TempDir()
	dir := filepath.Join(base, "root")
	outside := filepath.Join(base, "outside")
	for _, d := range []string{dir, outside, filepath.Join(dir, "etc")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	r, err := New(dir)
	if err != nil {
		t.Fatal(err)
	}
	return r, outside
}

// withUmask runs the test body under umask m.
func withUmask(t *testing.T, m int) {
	t.Helper()
	old := syscall.Umask(m)
	t.Cleanup(func() { syscall.Umask(old) })
}

func assertEmpty(t *testing.T, dir string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 0 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("%s was written to: %v", dir, names)
	}
}

func TestNew(t *testing.T) {
	if _, err := New(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("New(missing dir): no error")
	}
	f := filepath.Join(t.TempDir(), "file")
	os.WriteFile(f, nil, 0o644)
	if _, err := New(f); err == nil {
		t.Error("New(file): no error")
	}
}

func TestSymlinkEscapes(t *testing.T) {
	tests := []struct {
		name  string
		links map[string]string // link path in root → target
		write string            // path written through the links
		want  string            // where the data must land, inside the root
	}{
		{"absolute dir link", map[string]string{"/etc/abs": "/outside"}, "/etc/abs/f", "/outside/f"},
		{"relative dotdot dir link", map[string]string{"/etc/rel": "../../../../../../outside"}, "/etc/rel/f", "/outside/f"},
		{"absolute file link", map[string]string{"/etc/passwd": "/../../outside/passwd"}, "/etc/passwd", "/outside/passwd"},
		{"relative file link", map[string]string{"/etc/hosts": "../../outside/hosts"}, "/etc/hosts", "/outside/hosts"},
		{"chained links", map[string]string{"/a": "/etc/b", "/etc/b": "../../../c", "/c": "/outside"}, "/a/f", "/outside/f"},
		{"dotdot in the path itself", nil, "/../../outside/f", "/outside/f"},
		{"dangling link into missing dir", map[string]string{"/etc/resolv.conf": "../run/systemd/resolve/stub-resolv.conf"}, "/etc/resolv.conf", "/run/systemd/resolve/stub-resolv.conf"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, outside := newRoot(t)
			for l, target := range tt.links {
				os.MkdirAll(filepath.Dir(filepath.Join(r.Dir(), l)), 0o755)
				if err := os.Symlink(target, filepath.Join(r.Dir(), l)); err != nil {
					t.Fatal(err)
				}
			}
			if err := r.WriteFile(tt.write, []byte("data"), 0o644); err != nil {
				t.Fatalf("WriteFile: %v", err)
			}
			b, err := os.ReadFile(filepath.Join(r.Dir(), tt.want))
			if err != nil || string(b) != "data" {
				t.Errorf("%s inside root: %q, %v", tt.want, b, err)
			}
			got, err := r.ReadFile(tt.write)
			if err != nil || string(got) != "data" {
				t.Errorf("ReadFile(%s) = %q, %v", tt.write, got, err)
			}
			hp, err := r.Resolve(tt.write)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(hp, r.Dir()+string(filepath.Separator)) {
				t.Errorf("Resolve(%s) = %s, outside %s", tt.write, hp, r.Dir())
			}
			if r.HostPathOf(hp) != tt.want {
				t.Errorf("HostPathOf(%s) = %s, want %s", hp, r.HostPathOf(hp), tt.want)
			}
			assertEmpty(t, outside)
		})
	}
}

func TestMkdirAllThroughEscapingLink(t *testing.T) {
	r, outside := newRoot(t)
	os.Symlink("/../outside", filepath.Join(r.Dir(), "var"))
	if err := r.MkdirAll("/var/lib/cloud", 0o755); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(r.Dir(), "outside/lib/cloud")); err != nil || !fi.IsDir() {
		t.Errorf("dir not created inside root: %v", err)
	}
	assertEmpty(t, outside)
}

func TestWriteFileModes(t *testing.T) {
	withUmask(t, 0o077)
	tests := []struct {
		name string
		perm fs.FileMode
		want fs.FileMode
	}{
		{"0600", 0o600, 0o600},
		{"0644 under umask 077", 0o644, 0o644},
		{"0755", 0o755, 0o755},
		{"0440", 0o440, 0o440},
		{"04755 octal", 0o4755, 0o755 | fs.ModeSetuid},
		{"setuid flag", 0o755 | fs.ModeSetuid, 0o755 | fs.ModeSetuid},
		{"02755 octal", 0o2755, 0o755 | fs.ModeSetgid},
		{"01777 octal", 0o1777, 0o777 | fs.ModeSticky},
		{"0000", 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, _ := newRoot(t)
			o := WriteOpts{Perm: tt.perm, UID: -1, GID: -1}
			if os.Geteuid() == 0 {
				o.UID, o.GID = 1234, 5678
			}
			if err := r.WriteFileOpts("/usr/bin/tool", []byte("x"), o); err != nil {
				t.Fatal(err)
			}
			fi, err := r.Stat("/usr/bin/tool")
			if err != nil {
				t.Fatal(err)
			}
			if got := fi.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky); got != tt.want {
				t.Errorf("mode = %v, want %v", got, tt.want)
			}
			if os.Geteuid() == 0 {
				if uid, gid := fileOwner(fi); uid != 1234 || gid != 5678 {
					t.Errorf("owner = %d:%d, want 1234:5678", uid, gid)
				}
			}
			// Parents get DirPerm's default, exactly.
			if d, _ := r.Stat("/usr/bin"); d.Mode().Perm() != 0o755 {
				t.Errorf("parent mode = %v, want 0755", d.Mode().Perm())
			}
		})
	}
}

func TestWriteFileAtomicNoTempFiles(t *testing.T) {
	r, _ := newRoot(t)
	for i := range 3 {
		if err := r.WriteFile("/etc/motd", []byte(strings.Repeat("x", i)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A failing write (target is a directory) must clean up too.
	os.Mkdir(filepath.Join(r.Dir(), "etc/dir"), 0o755)
	if err := r.WriteFile("/etc/dir", []byte("x"), 0o644); err == nil {
		t.Error("writing over a directory: no error")
	}
	ents, _ := os.ReadDir(filepath.Join(r.Dir(), "etc"))
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if diff := cmp.Diff([]string{"dir", "motd"}, names); diff != "" {
		t.Errorf("etc/ entries (-want +got):\n%s", diff)
	}
	if b, _ := r.ReadFile("/etc/motd"); string(b) != "xx" {
		t.Errorf("motd = %q", b)
	}
}

func TestWriteFileAppend(t *testing.T) {
	r, _ := newRoot(t)
	o := WriteOpts{Perm: 0o640, UID: -1, GID: -1, Append: true}
	for _, s := range []string{"a\n", "b\n"} {
		if err := r.WriteFileOpts("/var/log/x.log", []byte(s), o); err != nil {
			t.Fatal(err)
		}
	}
	b, _ := r.ReadFile("/var/log/x.log")
	if string(b) != "a\nb\n" {
		t.Errorf("appended = %q", b)
	}
	if fi, _ := r.Stat("/var/log/x.log"); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode = %v", fi.Mode())
	}
}

func TestWriteFileReplacesSymlinkTarget(t *testing.T) {
	r, _ := newRoot(t)
	os.WriteFile(filepath.Join(r.Dir(), "etc/real"), []byte("old"), 0o644)
	os.Symlink("real", filepath.Join(r.Dir(), "etc/link"))
	if err := r.WriteFile("/etc/link", []byte("new"), 0o600); err != nil {
		t.Fatal(err)
	}
	if fi, err := r.Lstat("/etc/link"); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("link was replaced: %v %v", fi, err)
	}
	if b, _ := r.ReadFile("/etc/real"); string(b) != "new" {
		t.Errorf("target = %q", b)
	}
}

func TestMkdirAllModes(t *testing.T) {
	withUmask(t, 0o077)
	r, _ := newRoot(t)
	os.Mkdir(filepath.Join(r.Dir(), "existing"), 0o700)
	os.Chmod(filepath.Join(r.Dir(), "existing"), 0o711)
	tests := []struct {
		path string
		perm fs.FileMode
		want map[string]fs.FileMode
	}{
		{"/a/b/c", 0o755, map[string]fs.FileMode{"/a": 0o755, "/a/b": 0o755, "/a/b/c": 0o755}},
		{"/existing/d", 0o700, map[string]fs.FileMode{"/existing": 0o711, "/existing/d": 0o700}},
		{"/sticky", 0o1777, map[string]fs.FileMode{"/sticky": 0o777 | fs.ModeSticky}},
		{"/sgid", 0o2750, map[string]fs.FileMode{"/sgid": 0o750 | fs.ModeSetgid}},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			if err := r.MkdirAll(tt.path, tt.perm); err != nil {
				t.Fatal(err)
			}
			for p, want := range tt.want {
				fi, err := r.Stat(p)
				if err != nil {
					t.Fatal(err)
				}
				if got := fi.Mode() &^ fs.ModeDir; got != want {
					t.Errorf("%s mode = %v, want %v", p, got, want)
				}
			}
		})
	}
	os.WriteFile(filepath.Join(r.Dir(), "file"), nil, 0o644)
	if err := r.MkdirAll("/file/sub", 0o755); err == nil {
		t.Error("MkdirAll under a file: no error")
	}
}

func TestSymlinkReplace(t *testing.T) {
	r, _ := newRoot(t)
	os.WriteFile(filepath.Join(r.Dir(), "etc/localtime"), []byte("file"), 0o644)
	for _, target := range []string{"/usr/share/zoneinfo/UTC", "/usr/share/zoneinfo/Europe/Berlin"} {
		if err := r.Symlink(target, "/etc/localtime"); err != nil {
			t.Fatal(err)
		}
		got, err := r.Readlink("/etc/localtime")
		if err != nil || got != target {
			t.Errorf("Readlink = %q, %v; want %q", got, err, target)
		}
	}
	ents, _ := os.ReadDir(filepath.Join(r.Dir(), "etc"))
	if len(ents) != 1 {
		t.Errorf("etc has %d entries, want 1 (no temp links)", len(ents))
	}
	os.Mkdir(filepath.Join(r.Dir(), "etc/d"), 0o755)
	if err := r.Symlink("x", "/etc/d"); err == nil {
		t.Error("Symlink over a directory: no error")
	}
	// Parents are created.
	if err := r.Symlink("/lib/systemd/system/x.service", "/etc/systemd/system/multi-user.target.wants/x.service"); err != nil {
		t.Fatal(err)
	}
}

func TestGlob(t *testing.T) {
	r, outside := newRoot(t)
	for _, f := range []string{
		"/etc/ssh/ssh_host_rsa_key", "/etc/ssh/ssh_host_rsa_key.pub", "/etc/ssh/ssh_host_ed25519_key",
		"/etc/ssh/sshd_config", "/etc/ssh/sshd_config.d/a.conf", "/etc/ssh/sshd_config.d/b.conf",
		"/etc/cloud/cloud.cfg.d/90_dpkg.cfg", "/etc/[weird]/x",
	} {
		if err := r.WriteFile(f, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(outside, "secret"), nil, 0o600)
	os.Symlink("/../outside", filepath.Join(r.Dir(), "escape"))
	tests := []struct {
		pattern string
		want    []string
	}{
		{"/etc/ssh/ssh_host_*key*", []string{"/etc/ssh/ssh_host_ed25519_key", "/etc/ssh/ssh_host_rsa_key", "/etc/ssh/ssh_host_rsa_key.pub"}},
		{"/etc/ssh/*.d/*.conf", []string{"/etc/ssh/sshd_config.d/a.conf", "/etc/ssh/sshd_config.d/b.conf"}},
		{"/etc/*/cloud.cfg.d/*.cfg", []string{"/etc/cloud/cloud.cfg.d/90_dpkg.cfg"}},
		{"etc/ssh/sshd_config", []string{"/etc/ssh/sshd_config"}},
		{"/etc/ssh/nothing*", nil},
		{"/missing/*", nil},
		{"/escape/*", nil},
		{`/etc/\[weird\]/*`, []string{"/etc/[weird]/x"}},
	}
	for _, tt := range tests {
		t.Run(tt.pattern, func(t *testing.T) {
			got, err := r.Glob(tt.pattern)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Glob(%q) (-want +got):\n%s", tt.pattern, diff)
			}
		})
	}
	if _, err := r.Glob("/etc/[x"); !errors.Is(err, path.ErrBadPattern) {
		t.Errorf("bad pattern: err = %v", err)
	}
}

func TestRemoveAndLstat(t *testing.T) {
	r, outside := newRoot(t)
	os.WriteFile(filepath.Join(outside, "keep"), []byte("x"), 0o644)
	os.Symlink(filepath.Join(outside, "keep"), filepath.Join(r.Dir(), "etc/link"))
	if fi, err := r.Lstat("/etc/link"); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Fatalf("Lstat: %v %v", fi, err)
	}
	if err := r.Remove("/etc/link"); err != nil {
		t.Fatal(err)
	}
	if err := r.Remove("/etc/link"); err != nil {
		t.Errorf("removing a missing file: %v", err)
	}
	if _, err := os.Stat(filepath.Join(outside, "keep")); err != nil {
		t.Errorf("link target removed: %v", err)
	}
	if r.Exists("/etc/link") {
		t.Error("Exists after Remove")
	}
}

func TestHostPathOf(t *testing.T) {
	r, _ := newRoot(t)
	for hp, want := range map[string]string{
		r.Dir():                            "/",
		filepath.Join(r.Dir(), "etc/x"):    "/etc/x",
		filepath.Join(r.Dir(), "..foo"):    "/..foo",
		filepath.Join(r.Dir(), "../other"): filepath.Join(filepath.Dir(r.Dir()), "other"),
	} {
		if got := r.HostPathOf(hp); got != want {
			t.Errorf("HostPathOf(%s) = %s, want %s", hp, got, want)
		}
	}
}

func TestDeferredSync(t *testing.T) {
	r, err := New(t.TempDir(), WithDeferredSync())
	if err != nil {
		t.Fatal(err)
	}
	if err := r.WriteFile("/etc/x", []byte("one"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteFileOpts("/etc/x", []byte("two"), WriteOpts{Perm: 0o600, UID: -1, GID: -1, Append: true}); err != nil {
		t.Fatal(err)
	}
	if err := r.Sync(); err != nil {
		t.Fatal(err)
	}
	b, err := r.ReadFile("/etc/x")
	if err != nil || string(b) != "onetwo" {
		t.Errorf("content = %q, %v", b, err)
	}
	ents, _ := r.ReadDir("/etc")
	if len(ents) != 1 {
		t.Errorf("temp files left behind: %v", ents)
	}
}

// TestRunChrootFindsProgramInRoot runs a program that exists only inside the
// root (chroot needs root privileges; skipped otherwise).
func TestRunChrootFindsProgramInRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("chroot needs root")
	}
	bb, err := exec.LookPath("busybox")
	if err != nil {
		t.Skip("busybox not installed")
	}
	if out, err := exec.Command("file", "-L", bb).Output(); err == nil && !strings.Contains(string(out), "statically linked") {
		t.Skip("busybox is not static")
	}
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "opt/only-here"), 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(bb)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "opt/only-here/busybox"), b, 0o755); err != nil {
		t.Fatal(err)
	}
	r, err := New(dir)
	if err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=/opt/only-here"}
	if err := r.Run(context.Background(), Cmd{Argv: []string{"busybox", "true"}, Env: env}); err != nil {
		t.Errorf("running a program found on the root's PATH: %v", err)
	}
	err = r.Run(context.Background(), Cmd{Argv: []string{"missing-in-root"}, Env: env})
	if !errors.Is(err, exec.ErrNotFound) {
		t.Errorf("missing program: err = %v, want exec.ErrNotFound", err)
	}
}

func TestRename(t *testing.T) {
	dir := t.TempDir()
	r, err := New(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.WriteFile("/var/svc/provisioning", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := r.Rename("/var/svc/provisioning", "/var/svc/provision_success"); err != nil {
		t.Fatal(err)
	}
	if r.Exists("/var/svc/provisioning") || !r.Exists("/var/svc/provision_success") {
		t.Error("not renamed")
	}
	// A symlinked directory pointing out of the root stays inside it.
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(dir, "escape")); err != nil {
		t.Fatal(err)
	}
	if err := r.Rename("/var/svc/provision_success", "/escape/stolen"); err == nil {
		if _, serr := os.Stat(filepath.Join(outside, "stolen")); serr == nil {
			t.Fatal("rename escaped the root")
		}
	}
	if err := r.Rename("/missing", "/x"); err == nil {
		t.Error("renaming a missing file succeeded")
	}
}

// TestWriteFileToRootRefused: a write to "/" or through a symlink to "/"
// fails without creating anything in the parent of the target root.
func TestWriteFileToRootRefused(t *testing.T) {
	r, outside := newRoot(t)
	if err := os.Symlink("/", filepath.Join(r.Dir(), "etc", "toroot")); err != nil {
		t.Fatal(err)
	}
	// A temp file created and removed in the parent would still change
	// its mtime: set it in the past and compare.
	parent := filepath.Dir(r.Dir())
	past := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := os.Chtimes(parent, past, past); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/", "/etc/toroot", "/etc/.."} {
		for _, app := range []bool{false, true} {
			if err := r.WriteFileOpts(p, []byte("x"), WriteOpts{Perm: 0o644, UID: -1, GID: -1, Append: app}); err == nil {
				t.Errorf("write %s (append %v) succeeded", p, app)
			}
		}
	}
	if fi, err := os.Stat(parent); err != nil || !fi.ModTime().Equal(past) {
		t.Errorf("the parent of the root was written to (mtime %v)", fi.ModTime())
	}
	// The parent of the root holds only root/ and outside/.
	ents, err := os.ReadDir(parent)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.Name() != "root" && e.Name() != filepath.Base(outside) {
			t.Errorf("left in the parent of the root: %s", e.Name())
		}
	}
}

// TestWriteFileRefusesNonRegular: appending to (or replacing) a FIFO, a
// directory or a socket fails at once instead of blocking on the FIFO.
func TestWriteFileRefusesNonRegular(t *testing.T) {
	r, _ := newRoot(t)
	fifo := filepath.Join(r.Dir(), "etc", "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan error, 2)
	go func() {
		done <- r.WriteFileOpts("/etc/fifo", []byte("x"), WriteOpts{Perm: 0o644, UID: -1, GID: -1, Append: true})
		done <- r.WriteFileOpts("/etc", []byte("x"), WriteOpts{Perm: 0o644, UID: -1, GID: -1})
	}()
	for _, what := range []string{"append to a FIFO", "write over a directory"} {
		select {
		case err := <-done:
			if err == nil {
				t.Errorf("%s succeeded", what)
			}
		case <-time.After(10 * time.Second):
			// Not a speed assertion: without the check the write blocks
			// forever on the FIFO; open it to release the goroutine.
			w, _ := os.OpenFile(fifo, os.O_WRONLY, 0)
			w.Close()
			t.Fatalf("%s blocked", what)
		}
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced: %v %v", fi, err)
	}
}

// TestWriteFileKeepOwner: rewriting a log with Keep leaves the mode and
// group the image gave it (root:adm 0644 stays so), and a new file gets
// Perm.
func TestWriteFileKeepOwner(t *testing.T) {
	r, _ := newRoot(t)
	hp := filepath.Join(r.Dir(), "etc", "x.log")
	if err := os.WriteFile(hp, []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chmod(hp, 0o644)
	gid := -1
	if os.Getuid() == 0 {
		gid = 4 // adm
	} else if gs, _ := os.Getgroups(); len(gs) > 0 {
		for _, g := range gs {
			if g != os.Getgid() {
				gid = g
			}
		}
	}
	if gid >= 0 {
		if err := os.Chown(hp, -1, gid); err != nil {
			t.Fatal(err)
		}
	}
	o := WriteOpts{Perm: 0o640, UID: -1, GID: -1, Append: true, Keep: true}
	if err := r.WriteFileOpts("/etc/x.log", []byte("b\n"), o); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(hp)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o644 {
		t.Errorf("mode = %v, want the image's 0644", fi.Mode())
	}
	if st := fi.Sys().(*syscall.Stat_t); gid >= 0 && int(st.Gid) != gid {
		t.Errorf("group = %d, want the image's %d", st.Gid, gid)
	}
	if b, _ := os.ReadFile(hp); string(b) != "a\nb\n" {
		t.Errorf("content = %q", b)
	}
	if err := r.WriteFileOpts("/etc/new.log", []byte("n\n"), o); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(filepath.Join(r.Dir(), "etc", "new.log")); fi.Mode().Perm() != 0o640 {
		t.Errorf("new log mode = %v, want 0640", fi.Mode())
	}
}
