//go:build unix

package target

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// hostPath is the host path of name in d, for messages and the few
// operations the kernel has no descriptor-relative form of.
func (r *Root) hostPath(d *dirRef, name string) string {
	return filepath.Join(r.dir, filepath.FromSlash(d.path), name)
}

// typeOf is the type of a stat mode, as fs.FileMode.Type names it.
func typeOf(m uint32) fs.FileMode {
	switch m & unix.S_IFMT {
	case unix.S_IFDIR:
		return fs.ModeDir
	case unix.S_IFLNK:
		return fs.ModeSymlink
	case unix.S_IFIFO:
		return fs.ModeNamedPipe
	case unix.S_IFSOCK:
		return fs.ModeSocket
	case unix.S_IFCHR:
		return fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		return fs.ModeDevice
	}
	return 0
}

// goMode is a stat mode's permission and special bits as fs.FileMode.
func goMode(m uint32) fs.FileMode {
	out := fs.FileMode(m & 0o777)
	if m&unix.S_ISUID != 0 {
		out |= fs.ModeSetuid
	}
	if m&unix.S_ISGID != 0 {
		out |= fs.ModeSetgid
	}
	if m&unix.S_ISVTX != 0 {
		out |= fs.ModeSticky
	}
	return out
}

// openNoFollow opens name in d for reading without following a symlink and
// without blocking on a FIFO, and checks it. In a directory that is not
// trusted, a regular file with other hard links is refused: it may be a
// link a user made to a file they cannot otherwise touch.
func openNoFollow(d *dirRef, name, what, p string) (int, *unix.Stat_t, error) {
	fd, err := unix.Openat(d.fd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOCTTY, 0)
	if errors.Is(err, unix.ELOOP) {
		return -1, nil, fmt.Errorf("target: %s %s: %s (%s): %w", what, p, path.Join(d.path, name), d.owner(), ErrUnsafeSymlink)
	}
	if err != nil {
		return -1, nil, fmt.Errorf("target: %s %s: %w", what, p, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return -1, nil, fmt.Errorf("target: %s %s: %w", what, p, err)
	}
	if !d.trusted() && st.Mode&unix.S_IFMT == unix.S_IFREG && st.Nlink > 1 {
		unix.Close(fd)
		return -1, nil, fmt.Errorf("target: %s %s: %s has %d links in %s (%s): %w", what, p, path.Join(d.path, name), st.Nlink, d.path, d.owner(), ErrHardLinked)
	}
	return fd, &st, nil
}

// MkdirAll creates p and its parents with perm (exact, umask ignored for the
// directories it creates; existing directories are left alone). A symlink on
// the way is followed only in a trusted directory (see confine_unix.go).
func (r *Root) MkdirAll(p string, perm fs.FileMode) error {
	root, err := r.openRoot()
	if err != nil {
		return err
	}
	w := &walker{r: r, mkdir: true, perm: perm, what: "mkdir"}
	d, err := w.dirs([]*dirRef{root}, splitPath(path.Clean("/"+p)), p)
	if err != nil {
		return err
	}
	d.close()
	return nil
}

// WriteFileWith is WriteFileOpts with the content produced by fn writing to
// w (buffered): an encoder streams into the file instead of building the
// whole text in memory. An error from fn leaves p as it was.
func (r *Root) WriteFileWith(p string, o WriteOpts, fn func(w io.Writer) error) error {
	p = path.Clean("/" + p)
	dirPerm := o.DirPerm
	if dirPerm == 0 {
		dirPerm = 0o755
	}
	// A symlink at p (in a trusted directory) is followed, and the
	// directory of its target created when missing (e.g. /etc/resolv.conf
	// -> ../run/systemd/resolve/...).
	w := &walker{r: r, mkdir: true, perm: dirPerm, what: "write"}
	d, name, err := w.final(p)
	if err != nil {
		return err
	}
	defer d.close()
	// Only a regular file is replaced: "/" would put the temp file in the
	// parent of the root, a FIFO would block the append's read, a
	// directory or device is not a file to write.
	if name == "" {
		return fmt.Errorf("target: write %s: %w", p, ErrNotRegular)
	}
	var st unix.Stat_t
	exists := true
	if err := unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); errors.Is(err, unix.ENOENT) {
		exists = false
	} else if err != nil {
		return fmt.Errorf("target: write %s: %w", p, err)
	} else if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return fmt.Errorf("target: write %s: %w (%s)", p, ErrNotRegular, typeOf(uint32(st.Mode)))
	}
	mode := unixMode(o.Perm)
	if o.Keep && exists {
		mode = goMode(uint32(st.Mode))
		o.UID, o.GID = int(st.Uid), int(st.Gid)
	}
	var tmp string
	var fd int
	for i := 0; ; i++ {
		tmp = "." + name + ".tmp-" + strconv.FormatUint(rand.Uint64(), 36)
		fd, err = unix.Openat(d.fd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		if errors.Is(err, unix.EEXIST) && i < 100 {
			continue
		}
		if err != nil {
			return fmt.Errorf("target: write %s: %w", p, err)
		}
		break
	}
	f := os.NewFile(uintptr(fd), r.hostPath(d, tmp))
	ok := false
	defer func() {
		if !ok {
			f.Close()
			unix.Unlinkat(d.fd, tmp, 0)
		}
	}()
	if o.Append && exists {
		ofd, _, err := openNoFollow(d, name, "append", p)
		if err != nil {
			return err
		}
		old := os.NewFile(uintptr(ofd), r.hostPath(d, name))
		_, err = io.Copy(f, old)
		old.Close()
		if err != nil {
			return fmt.Errorf("target: append %s: %w", p, err)
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
	if !r.deferSync || r.needsReplaceFlush(p, exists && st.Size > 0) {
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
	if err := unix.Renameat(d.fd, tmp, d.fd, name); err != nil {
		return fmt.Errorf("target: rename %s: %w", p, err)
	}
	ok = true
	if !r.deferSync {
		_ = unix.Fsync(d.fd)
	}
	return nil
}

// OpenRegular opens p for reading, following symlinks as the writes do
// (only in trusted directories), without blocking: what is not a regular
// file (a FIFO, a device, a directory, a socket) is refused with
// ErrNotRegular.
func (r *Root) OpenRegular(p string) (*os.File, error) {
	p = path.Clean("/" + p)
	w := &walker{r: r, what: "open"}
	d, name, err := w.final(p)
	if err != nil {
		return nil, err
	}
	defer d.close()
	if name == "" {
		return nil, fmt.Errorf("target: open %s: %w (%s)", p, ErrNotRegular, fs.ModeDir)
	}
	fd, st, err := openNoFollow(d, name, "open", p)
	if err != nil {
		return nil, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		unix.Close(fd)
		return nil, fmt.Errorf("target: open %s: %w (%s)", p, ErrNotRegular, typeOf(uint32(st.Mode)))
	}
	if err := unix.SetNonblock(fd, false); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("target: open %s: %w", p, err)
	}
	return os.NewFile(uintptr(fd), r.hostPath(d, name)), nil
}

// onFile runs op on p (a symlink followed, in a trusted directory): in a
// trusted directory through the directory's descriptor, elsewhere through a
// descriptor on the file opened without following a symlink (and refused
// if it has other hard links).
func (r *Root) onFile(p, what string, at func(dfd int, name string) error, byFd func(fd int) error) error {
	w := &walker{r: r, what: what}
	d, name, err := w.final(p)
	if err != nil {
		return err
	}
	defer d.close()
	if name == "" {
		err = byFd(d.fd)
	} else if d.trusted() {
		err = at(d.fd, name)
	} else {
		fd, _, oerr := openNoFollow(d, name, what, p)
		if oerr != nil {
			return oerr
		}
		err = byFd(fd)
		unix.Close(fd)
	}
	if err != nil {
		return fmt.Errorf("target: %s %s: %w", what, p, err)
	}
	return nil
}

// Chown changes the owner of p (following symlinks inside the root, only
// in trusted directories).
func (r *Root) Chown(p string, uid, gid int) error {
	return r.onFile(p, "chown",
		func(dfd int, name string) error { return unix.Fchownat(dfd, name, uid, gid, unix.AT_SYMLINK_NOFOLLOW) },
		func(fd int) error { return unix.Fchown(fd, uid, gid) })
}

// Chmod changes the mode of p (classic octal setuid/setgid/sticky bits are
// accepted, as in WriteOpts.Perm; symlinks followed as by Chown).
func (r *Root) Chmod(p string, perm fs.FileMode) error {
	m := sysMode(perm)
	return r.onFile(p, "chmod",
		// The name is not a symlink (final resolved it) and the
		// directory is trusted: nobody can swap it for one.
		func(dfd int, name string) error { return unix.Fchmodat(dfd, name, m, 0) },
		func(fd int) error { return unix.Fchmod(fd, m) })
}

// Lchown changes the owner of p itself (a symlink is not followed).
func (r *Root) Lchown(p string, uid, gid int) error {
	w := &walker{r: r, what: "lchown"}
	d, name, err := w.parent(p)
	if err != nil {
		return err
	}
	defer d.close()
	var st unix.Stat_t
	switch {
	case name == "":
		err = unix.Fchown(d.fd, uid, gid)
	case d.trusted():
		err = unix.Fchownat(d.fd, name, uid, gid, unix.AT_SYMLINK_NOFOLLOW)
	default:
		if err = unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK {
			err = unix.Fchownat(d.fd, name, uid, gid, unix.AT_SYMLINK_NOFOLLOW)
			break
		}
		fd, _, oerr := openNoFollow(d, name, "lchown", p)
		if oerr != nil {
			return oerr
		}
		err = unix.Fchown(fd, uid, gid)
		unix.Close(fd)
	}
	if err != nil {
		return fmt.Errorf("target: lchown %s: %w", p, err)
	}
	return nil
}

// removalParent opens the directory that holds p for a removal (what
// names it in errors). A d of nil with a nil error means p is already
// gone; the root itself (or a path that resolves to it) is refused with
// refusal.
func (r *Root) removalParent(p, what, refusal string) (d *dirRef, name string, err error) {
	w := &walker{r: r, what: what}
	d, name, err = w.parent(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, "", nil
	}
	if err != nil {
		return nil, "", err
	}
	if name == "" {
		d.close()
		return nil, "", fmt.Errorf("target: %s %s: %s", what, p, refusal)
	}
	return d, name, nil
}

// Remove removes p (a symlink itself, not its target). Missing is not an error.
func (r *Root) Remove(p string) error {
	d, name, err := r.removalParent(p, "remove", "refusing to remove the root or a parent")
	if d == nil || err != nil {
		return err
	}
	defer d.close()
	err = unix.Unlinkat(d.fd, name, 0)
	if errors.Is(err, unix.EISDIR) || errors.Is(err, unix.EPERM) {
		if rerr := unix.Unlinkat(d.fd, name, unix.AT_REMOVEDIR); rerr == nil || !errors.Is(rerr, unix.ENOTDIR) {
			err = rerr
		}
	}
	if err != nil && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("target: remove %s: %w", p, err)
	}
	return nil
}

// RemoveAll removes p and everything under it, inside the root. p itself
// is not followed if it is a symlink (the link goes), and os.RemoveAll
// never follows links below it.
func (r *Root) RemoveAll(p string) error {
	d, name, err := r.removalParent(p, "remove all of", "refusing to empty the root")
	if d == nil || err != nil {
		return err
	}
	defer d.close()
	if err := os.RemoveAll(r.hostPath(d, name)); err != nil {
		return fmt.Errorf("target: remove all of %s: %w", p, err)
	}
	return nil
}

// Rename renames oldpath to newpath inside the root (neither is followed
// if it is a symlink; their directories are resolved inside the root).
func (r *Root) Rename(oldpath, newpath string) error {
	w := &walker{r: r, what: "rename"}
	od, on, err := w.parent(oldpath)
	if err != nil {
		return err
	}
	defer od.close()
	nd, nn, err := w.parent(newpath)
	if err != nil {
		return err
	}
	defer nd.close()
	if on == "" || nn == "" {
		return fmt.Errorf("target: rename %s to %s: refusing to move the root", oldpath, newpath)
	}
	if err := unix.Renameat(od.fd, on, nd.fd, nn); err != nil {
		return fmt.Errorf("target: rename %s to %s: %w", oldpath, newpath, err)
	}
	return nil
}

// Symlink atomically makes newname a symlink to oldname (oldname is stored
// verbatim; it is interpreted inside the root when followed). An existing
// file or symlink at newname is replaced; a directory is an error.
func (r *Root) Symlink(oldname, newname string) error {
	w := &walker{r: r, mkdir: true, perm: 0o755, what: "symlink"}
	d, name, err := w.parent(path.Clean("/" + newname))
	if err != nil {
		return err
	}
	defer d.close()
	if name == "" {
		return fmt.Errorf("target: symlink %s: is a directory", newname)
	}
	var st unix.Stat_t
	if err := unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR {
		return fmt.Errorf("target: symlink %s: is a directory", newname)
	}
	// A unique temp name: concurrent Symlink calls in one directory must not
	// trample each other's temp link.
	for i := 0; ; i++ {
		tmp := fmt.Sprintf(".%s.tmp-link-%d-%d", name, os.Getpid(), linkSeq.Add(1))
		err := unix.Symlinkat(oldname, d.fd, tmp)
		if errors.Is(err, unix.EEXIST) && i < 100 {
			continue
		}
		if err != nil {
			return fmt.Errorf("target: symlink %s: %w", newname, err)
		}
		if err := unix.Renameat(d.fd, tmp, d.fd, name); err != nil {
			unix.Unlinkat(d.fd, tmp, 0)
			return fmt.Errorf("target: symlink %s: %w", newname, err)
		}
		return nil
	}
}
