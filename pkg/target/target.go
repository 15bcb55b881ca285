// Package target is the root filesystem being provisioned. Every module
// reaches files and commands only through a Root: paths resolve inside the
// root with chroot semantics (absolute and relative symlinks never escape),
// writes are atomic (temp file, fsync, rename) with exact modes, and commands
// run inside the root (chroot when the root is not "/").
//
// In the initramfs the root is /sysroot; in the agent it is /; in unit tests
// it is a t.TempDir().
package target

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	securejoin "github.com/cyphar/filepath-securejoin"
)

// Cmd is a command to run inside the root.
type Cmd struct {
	Argv   []string
	Env    []string // full environment; nil means a minimal default
	Dir    string   // working directory inside the root ("" = "/")
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
}

// Runner executes commands for a Root. The default runner execs the command
// chrooted into the root; tests substitute a fake that records argv.
type Runner interface {
	Run(ctx context.Context, root string, cmd Cmd) error
}

// Root is an opened target root.
type Root struct {
	dir    string
	runner Runner
	now    func() time.Time
	// acct serialises read-modify-write cycles on the account databases.
	acct sync.Mutex
	// deferSync skips the per-file fsync; the owner calls Sync once.
	deferSync bool
	// acctSeq numbers account commits (journal names); journals are
	// finished commits whose journal waits for the next Sync. Both under acct.
	acctSeq  int
	journals []string
	// faultAt, when set (tests), simulates a power cut at a named point.
	faultAt func(point string) error
}

// Option configures a Root.
type Option func(*Root)

// WithRunner replaces the command runner.
func WithRunner(r Runner) Option { return func(t *Root) { t.runner = r } }

// WithClock replaces the clock used for timestamps the root records itself
// (the shadow "last password change" day).
func WithClock(now func() time.Time) Option { return func(t *Root) { t.now = now } }

// WithDeferredSync makes writes atomic (temp file + rename) without an
// fsync each; the caller makes them durable at once with Root.Sync. The
// initramfs uses it: nothing else runs while it provisions, and under
// emulation dozens of fsyncs cost more than the provisioning itself.
func WithDeferredSync() Option { return func(t *Root) { t.deferSync = true } }

// WithFaultHook calls hook at the points where a power cut is interesting
// ("sync", "flush <path>", "acct-staged", "acct-journal", "acct-flushed",
// "acct-renamed-<i>"); a non-nil error stops the operation there. For tests
// that simulate crashes.
func WithFaultHook(hook func(point string) error) Option {
	return func(t *Root) { t.faultAt = hook }
}

// DefaultPath is the PATH commands run with when Cmd.Env is nil.
const DefaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// New opens dir as a target root. dir must exist.
func New(dir string, opts ...Option) (*Root, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("target: %s: %w", dir, err)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("target: open root: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("target: root %s is not a directory", abs)
	}
	r := &Root{dir: abs, runner: execRunner{}, now: time.Now}
	for _, o := range opts {
		o(r)
	}
	return r, nil
}

// Dir is the host path of the root.
func (r *Root) Dir() string { return r.dir }

// Resolve returns the host path for p (a path inside the root), resolving
// symlinks as if the root were "/". The final component may not exist.
func (r *Root) Resolve(p string) (string, error) {
	if !path.IsAbs(p) {
		p = "/" + p
	}
	if r.dir == "/" {
		return path.Clean(p), nil
	}
	hp, err := securejoin.SecureJoin(r.dir, p)
	if err != nil {
		return "", fmt.Errorf("target: resolve %s: %w", p, err)
	}
	return hp, nil
}

// resolveNoFollow resolves the parent of p and joins the last element
// unresolved, so that operations on symlinks act on the link itself.
func (r *Root) resolveNoFollow(p string) (string, error) {
	if !path.IsAbs(p) {
		p = "/" + p
	}
	p = path.Clean(p)
	if p == "/" {
		return r.dir, nil
	}
	parent, err := r.Resolve(path.Dir(p))
	if err != nil {
		return "", err
	}
	return filepath.Join(parent, path.Base(p)), nil
}

// ReadFile reads p inside the root.
func (r *Root) ReadFile(p string) ([]byte, error) {
	hp, err := r.Resolve(p)
	if err != nil {
		return nil, err
	}
	return os.ReadFile(hp)
}

// Exists reports whether p exists (following symlinks inside the root).
func (r *Root) Exists(p string) bool {
	hp, err := r.Resolve(p)
	if err != nil {
		return false
	}
	_, err = os.Stat(hp)
	return err == nil
}

// Stat stats p inside the root.
func (r *Root) Stat(p string) (fs.FileInfo, error) {
	hp, err := r.Resolve(p)
	if err != nil {
		return nil, err
	}
	return os.Stat(hp)
}

// Lstat lstats p inside the root.
func (r *Root) Lstat(p string) (fs.FileInfo, error) {
	hp, err := r.resolveNoFollow(p)
	if err != nil {
		return nil, err
	}
	return os.Lstat(hp)
}

// ReadDir lists p inside the root.
func (r *Root) ReadDir(p string) ([]fs.DirEntry, error) {
	hp, err := r.Resolve(p)
	if err != nil {
		return nil, err
	}
	return os.ReadDir(hp)
}

// unixMode converts a mode that may carry setuid/setgid/sticky either as Go
// flags (fs.ModeSetuid...) or as the classic octal bits (0o4000...) into a
// Go mode, so that both 0o4755 and 0o755|fs.ModeSetuid mean the same thing.
func unixMode(m fs.FileMode) fs.FileMode {
	out := m.Perm() | m&(fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky)
	if m&0o4000 != 0 {
		out |= fs.ModeSetuid
	}
	if m&0o2000 != 0 {
		out |= fs.ModeSetgid
	}
	if m&0o1000 != 0 {
		out |= fs.ModeSticky
	}
	return out
}

// MkdirAll creates p and its parents with perm (exact, umask ignored for the
// directories it creates; existing directories are left alone).
func (r *Root) MkdirAll(p string, perm fs.FileMode) error {
	if !path.IsAbs(p) {
		p = "/" + p
	}
	p = path.Clean(p)
	if p == "/" {
		return nil
	}
	hp, err := r.Resolve(p)
	if err != nil {
		return err
	}
	if fi, err := os.Stat(hp); err == nil {
		if !fi.IsDir() {
			return fmt.Errorf("target: mkdir %s: exists and is not a directory", p)
		}
		return nil
	}
	if err := r.MkdirAll(path.Dir(p), perm); err != nil {
		return err
	}
	// Resolve again: a parent may have been a dangling symlink that now
	// points at a created directory.
	if hp, err = r.Resolve(p); err != nil {
		return err
	}
	if err := os.Mkdir(hp, 0o700); err != nil {
		if errors.Is(err, fs.ErrExist) {
			if fi, serr := os.Stat(hp); serr == nil && fi.IsDir() {
				return nil
			}
		}
		return fmt.Errorf("target: mkdir %s: %w", p, err)
	}
	if err := os.Chmod(hp, unixMode(perm)); err != nil {
		return fmt.Errorf("target: mkdir %s: %w", p, err)
	}
	return nil
}

// ErrNotRegular: a write was asked of something that exists and is not a
// regular file (the root itself, a directory, a FIFO, a device, a socket).
var ErrNotRegular = errors.New("not a regular file")

// WriteOpts controls WriteFileOpts.
type WriteOpts struct {
	// Perm is the exact mode; the classic setuid/setgid/sticky octal bits
	// (0o4000, 0o2000, 0o1000) and the fs.Mode* flags are both accepted.
	Perm fs.FileMode
	// UID and GID, or -1 to leave as created (root, when running as root).
	UID, GID int
	// Append adds data to the end of an existing file (still atomic: the
	// whole new content is written to a temp file and renamed).
	Append bool
	// DirPerm for parents that must be created (default 0755).
	DirPerm fs.FileMode
	// Keep gives an existing file back its own mode, owner and group
	// (Perm, UID and GID apply only to a new file): logs the image
	// ships as root:adm stay so.
	Keep bool
}

// WriteFile atomically writes data to p with mode perm, creating parents 0755.
func (r *Root) WriteFile(p string, data []byte, perm fs.FileMode) error {
	return r.WriteFileOpts(p, data, WriteOpts{Perm: perm, UID: -1, GID: -1})
}

// WriteFileOpts atomically writes p: a temp file in the same directory is
// written, chmod/chowned, fsynced and renamed over p, then the directory is
// fsynced. A symlink at p is resolved inside the root and its target replaced
// (the target's directory is created when missing). Something at p that is
// not a regular file (the root itself, a directory, a FIFO, a device) is
// refused with ErrNotRegular before anything is created.
func (r *Root) WriteFileOpts(p string, data []byte, o WriteOpts) error {
	return r.WriteFileFrom(p, bytes.NewReader(data), o)
}

// WriteFileFrom is WriteFileOpts with the content read from src, copied
// through a small buffer: a large file is never held in memory. With
// o.Append the existing content is copied first, the same way. An error
// from src leaves p as it was.
func (r *Root) WriteFileFrom(p string, src io.Reader, o WriteOpts) error {
	return r.WriteFileWith(p, o, func(w io.Writer) error {
		_, err := io.Copy(w, src)
		return err
	})
}

// WriteFileWith is WriteFileOpts with the content produced by fn writing to
// w (buffered): an encoder streams into the file instead of building the
// whole text in memory. An error from fn leaves p as it was.
func (r *Root) WriteFileWith(p string, o WriteOpts, fn func(w io.Writer) error) error {
	if !path.IsAbs(p) {
		p = "/" + p
	}
	p = path.Clean(p)
	dirPerm := o.DirPerm
	if dirPerm == 0 {
		dirPerm = 0o755
	}
	if err := r.MkdirAll(path.Dir(p), dirPerm); err != nil {
		return err
	}
	hp, err := r.Resolve(p)
	if err != nil {
		return err
	}
	dir := filepath.Dir(hp)
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		// p is a symlink whose target lives in a directory that does not
		// exist yet (e.g. /etc/resolv.conf -> ../run/systemd/resolve/...).
		if err := r.MkdirAll(r.HostPathOf(dir), dirPerm); err != nil {
			return err
		}
	}
	// Only a regular file is replaced: "/" (or a link to it) would put the
	// temp file in the parent of the root, a FIFO would block the append's
	// read, a directory or device is not a file to write.
	if filepath.Clean(hp) == r.dir {
		return fmt.Errorf("target: write %s: %w", p, ErrNotRegular)
	}
	existing, err := os.Lstat(hp)
	switch {
	case err == nil && !existing.Mode().IsRegular():
		return fmt.Errorf("target: write %s: %w (%s)", p, ErrNotRegular, existing.Mode().Type())
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("target: write %s: %w", p, err)
	case err != nil:
		existing = nil
	}
	mode := unixMode(o.Perm)
	if o.Keep && existing != nil {
		mode = existing.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
		o.UID, o.GID = fileOwner(existing)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(hp)+".tmp-*")
	if err != nil {
		return fmt.Errorf("target: write %s: %w", p, err)
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if o.Append && existing != nil {
		old, err := os.Open(hp)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("target: append %s: %w", p, err)
		}
		if err == nil {
			_, err = io.Copy(f, old)
			old.Close()
			if err != nil {
				return fmt.Errorf("target: append %s: %w", p, err)
			}
		}
	}
	bw := bufio.NewWriterSize(f, 64<<10)
	if err := fn(bw); err != nil {
		return fmt.Errorf("target: write %s: %w", p, err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("target: write %s: %w", p, err)
	}
	if o.UID >= 0 || o.GID >= 0 {
		if err := f.Chown(o.UID, o.GID); err != nil {
			return fmt.Errorf("target: chown %s: %w", p, err)
		}
	}
	// chmod after chown: chown clears setuid/setgid bits.
	if err := f.Chmod(mode); err != nil {
		return fmt.Errorf("target: chmod %s: %w", p, err)
	}
	if !r.deferSync || r.needsReplaceFlush(p, hp) {
		if err := r.fault("flush " + p); err != nil {
			return err
		}
		if err := f.Sync(); err != nil {
			return fmt.Errorf("target: fsync %s: %w", p, err)
		}
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("target: write %s: %w", p, err)
	}
	if err := os.Rename(tmp, hp); err != nil {
		return fmt.Errorf("target: rename %s: %w", p, err)
	}
	ok = true
	if r.deferSync {
		return nil
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}

// Chown changes the owner of p (following symlinks inside the root).
func (r *Root) Chown(p string, uid, gid int) error {
	hp, err := r.Resolve(p)
	if err != nil {
		return err
	}
	if err := os.Chown(hp, uid, gid); err != nil {
		return fmt.Errorf("target: chown %s: %w", p, err)
	}
	return nil
}

// Lchown changes the owner of p itself (a symlink is not followed).
func (r *Root) Lchown(p string, uid, gid int) error {
	hp, err := r.resolveNoFollow(p)
	if err != nil {
		return err
	}
	if err := os.Lchown(hp, uid, gid); err != nil {
		return fmt.Errorf("target: lchown %s: %w", p, err)
	}
	return nil
}

// Chmod changes the mode of p (classic octal setuid/setgid/sticky bits are
// accepted, as in WriteOpts.Perm).
func (r *Root) Chmod(p string, perm fs.FileMode) error {
	hp, err := r.Resolve(p)
	if err != nil {
		return err
	}
	if err := os.Chmod(hp, unixMode(perm)); err != nil {
		return fmt.Errorf("target: chmod %s: %w", p, err)
	}
	return nil
}

// Remove removes p (a symlink itself, not its target). Missing is not an error.
func (r *Root) Remove(p string) error {
	hp, err := r.resolveNoFollow(p)
	if err != nil {
		return err
	}
	if err := os.Remove(hp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("target: remove %s: %w", p, err)
	}
	return nil
}

// Rename renames oldpath to newpath inside the root (neither is followed
// if it is a symlink; their directories are resolved inside the root).
func (r *Root) Rename(oldpath, newpath string) error {
	ho, err := r.resolveNoFollow(oldpath)
	if err != nil {
		return err
	}
	hn, err := r.resolveNoFollow(newpath)
	if err != nil {
		return err
	}
	if err := os.Rename(ho, hn); err != nil {
		return fmt.Errorf("target: rename %s to %s: %w", oldpath, newpath, err)
	}
	return nil
}

// Symlink atomically makes newname a symlink to oldname (oldname is stored
// verbatim; it is interpreted inside the root when followed). An existing
// file or symlink at newname is replaced; a directory is an error.
func (r *Root) Symlink(oldname, newname string) error {
	if err := r.MkdirAll(path.Dir(path.Clean("/"+newname)), 0o755); err != nil {
		return err
	}
	hp, err := r.resolveNoFollow(newname)
	if err != nil {
		return err
	}
	if fi, err := os.Lstat(hp); err == nil && fi.IsDir() {
		return fmt.Errorf("target: symlink %s: is a directory", newname)
	}
	// A unique temp name: concurrent Symlink calls in one directory must not
	// trample each other's temp link.
	for i := 0; ; i++ {
		tmp := filepath.Join(filepath.Dir(hp), fmt.Sprintf(".%s.tmp-link-%d-%d", filepath.Base(hp), os.Getpid(), linkSeq.Add(1)))
		err := os.Symlink(oldname, tmp)
		if errors.Is(err, fs.ErrExist) && i < 100 {
			continue
		}
		if err != nil {
			return fmt.Errorf("target: symlink %s: %w", newname, err)
		}
		if err := os.Rename(tmp, hp); err != nil {
			os.Remove(tmp)
			return fmt.Errorf("target: symlink %s: %w", newname, err)
		}
		return nil
	}
}

var linkSeq atomic.Uint64

// Glob matches pattern inside the root and returns root-relative absolute
// paths, sorted. Wildcards may appear in any element (path.Match syntax);
// symlinked directories are followed inside the root, and the root's own
// host path is never interpreted as a pattern.
func (r *Root) Glob(pattern string) ([]string, error) {
	if !path.IsAbs(pattern) {
		pattern = "/" + pattern
	}
	pattern = path.Clean(pattern)
	if _, err := path.Match(pattern, ""); err != nil {
		return nil, fmt.Errorf("target: glob %s: %w", pattern, err)
	}
	matches := []string{"/"}
	for _, elem := range strings.Split(strings.TrimPrefix(pattern, "/"), "/") {
		if elem == "" {
			continue
		}
		var next []string
		for _, m := range matches {
			if !hasMeta(elem) {
				cand := path.Join(m, elem)
				if _, err := r.Lstat(cand); err == nil {
					next = append(next, cand)
				}
				continue
			}
			ents, err := r.ReadDir(m)
			if err != nil {
				continue // not a directory, or unreadable: no matches below
			}
			for _, e := range ents {
				if ok, _ := path.Match(elem, e.Name()); ok {
					next = append(next, path.Join(m, e.Name()))
				}
			}
		}
		matches = next
		if len(matches) == 0 {
			break
		}
	}
	slices.Sort(matches)
	return matches, nil
}

func hasMeta(s string) bool { return strings.ContainsAny(s, `*?[\`) }

// Run runs cmd inside the root.
func (r *Root) Run(ctx context.Context, cmd Cmd) error {
	if len(cmd.Argv) == 0 {
		return errors.New("target: run: empty command")
	}
	if cmd.Env == nil {
		cmd.Env = []string{"PATH=" + DefaultPath, "HOME=/root", "LANG=C.UTF-8"}
	}
	return r.runner.Run(ctx, r.dir, cmd)
}

// HostPathOf reports the root-relative path for a host path under the root,
// for messages.
func (r *Root) HostPathOf(hp string) string {
	rel, err := filepath.Rel(r.dir, hp)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return hp
	}
	return path.Clean("/" + filepath.ToSlash(rel))
}
