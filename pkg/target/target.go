// Package target is the root filesystem being provisioned. Every module
// reaches files and commands only through a Root: paths resolve inside the
// root with chroot semantics (absolute and relative symlinks never escape),
// writes follow a symlink only in a directory root controls, never one a
// local user could have planted in a home or /tmp (confine_unix.go),
// writes are atomic (temp file, fsync, rename) with exact modes, and commands
// run inside the root (chroot when the root is not "/").
//
// In the initramfs the root is /sysroot; in the agent it is /; in unit tests
// it is a t.TempDir().
package target

import (
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

// ErrNotRegular: a write was asked of something that exists and is not a
// regular file (the root itself, a directory, a FIFO, a device, a socket).
var ErrNotRegular = errors.New("not a regular file")

// ErrUnsafeSymlink: a path met a symlink in a directory that someone other
// than root can write to (a home, a .ssh, /tmp): it is not followed, since
// the user may have planted it to turn a root write into one on /etc/shadow.
var ErrUnsafeSymlink = errors.New("symlink in a directory not controlled by root; not followed")

// ErrHardLinked: a file in a directory someone other than root can write
// to has other hard links; it is not chowned, chmodded or read for an
// append, since it may be a link to a file the user cannot touch.
var ErrHardLinked = errors.New("file has other hard links in a directory not controlled by root")

var linkSeq atomic.Uint64

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
// (the target's directory is created when missing) when it lies in a
// directory root controls; elsewhere it is refused with ErrUnsafeSymlink. Something at p that is
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
