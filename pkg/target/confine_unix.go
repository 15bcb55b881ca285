//go:build unix

package target

// Confined writes: the walk every write, chown, chmod, mkdir, remove,
// rename and symlink goes through.
//
// A path is walked from a descriptor on the root one element at a time
// with openat(O_NOFOLLOW): each directory is held open while the next
// element is looked up in it, so swapping a directory for a symlink after
// it was checked changes nothing (the open of the swapped name fails).
// A symlink met on the way is followed (inside the root, with chroot
// semantics) only when the directory holding it is trusted: owned by root
// (or by the user cloudroot runs as) and writable by nobody else — not by
// others, not by a group other than root's. A symlink in any other
// directory (a home, a .ssh, /tmp) was possibly planted by a local user to
// redirect a root write onto /etc/shadow and is refused with
// ErrUnsafeSymlink. Regular files reached through such a directory are
// only ever replaced (a new inode renamed into place), chowned or chmodded
// through a descriptor opened with O_NOFOLLOW, and refused when they have
// other hard links.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"

	"golang.org/x/sys/unix"
)

// maxLinks bounds the symlinks followed in one walk (Linux's MAXSYMLINKS).
const maxLinks = 40

// dirRef is a directory inside the root, held open.
type dirRef struct {
	fd   int
	path string // canonical path inside the root ("/" for the root)
	st   unix.Stat_t
}

func (d *dirRef) close() {
	if d != nil && d.fd >= 0 {
		unix.Close(d.fd)
		d.fd = -1
	}
}

// trusted reports whether only root (or the user cloudroot runs as) can
// change what d holds.
func (d *dirRef) trusted() bool {
	uid := int(d.st.Uid)
	if uid != 0 && uid != os.Geteuid() {
		return false
	}
	mode := uint32(d.st.Mode)
	if mode&0o002 != 0 {
		return false
	}
	return mode&0o020 == 0 || d.st.Gid == 0
}

// owner describes who controls d, for messages.
func (d *dirRef) owner() string {
	if uint32(d.st.Mode)&0o002 != 0 {
		return "writable by others"
	}
	if uid := int(d.st.Uid); uid != 0 && uid != os.Geteuid() {
		return fmt.Sprintf("owned by uid %d", uid)
	}
	return fmt.Sprintf("writable by gid %d", d.st.Gid)
}

// openRoot opens the root directory.
func (r *Root) openRoot() (*dirRef, error) {
	fd, err := unix.Open(r.dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("target: open root %s: %w", r.dir, err)
	}
	d := &dirRef{fd: fd, path: "/"}
	if err := unix.Fstat(fd, &d.st); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("target: open root %s: %w", r.dir, err)
	}
	return d, nil
}

// openSub opens directory name in d without following a symlink.
func openSub(d *dirRef, name string) (*dirRef, error) {
	fd, err := unix.Openat(d.fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	s := &dirRef{fd: fd, path: path.Join(d.path, name)}
	if err := unix.Fstat(fd, &s.st); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return s, nil
}

func splitPath(p string) []string {
	var out []string
	for _, e := range strings.Split(p, "/") {
		if e != "" && e != "." {
			out = append(out, e)
		}
	}
	return out
}

// walker resolves paths inside a root.
type walker struct {
	r     *Root
	mkdir bool        // create missing directories
	perm  fs.FileMode // their mode
	links int         // symlinks followed so far
	what  string      // the operation, for messages
}

// follow reads symlink name in d (which must be trusted) and returns its
// target's elements; abs reports an absolute target.
func (w *walker) follow(d *dirRef, name, orig string) (elems []string, abs bool, err error) {
	if !d.trusted() {
		return nil, false, fmt.Errorf("target: %s %s: %s in %s (%s): %w", w.what, orig, path.Join(d.path, name), d.path, d.owner(), ErrUnsafeSymlink)
	}
	w.links++
	if w.links > maxLinks {
		return nil, false, fmt.Errorf("target: %s %s: %w", w.what, orig, unix.ELOOP)
	}
	buf := make([]byte, 4096)
	n, err := unix.Readlinkat(d.fd, name, buf)
	if err != nil {
		return nil, false, fmt.Errorf("target: %s %s: readlink %s: %w", w.what, orig, path.Join(d.path, name), err)
	}
	t := string(buf[:n])
	return splitPath(t), strings.HasPrefix(t, "/"), nil
}

// dirs walks elems from the directory stack and returns the directory
// they name, opened. Every directory on the stack but the returned one is
// closed. orig is the path asked for, for messages.
func (w *walker) dirs(stack []*dirRef, elems []string, orig string) (d *dirRef, err error) {
	defer func() {
		for _, s := range stack[:len(stack)-1] {
			s.close()
		}
		if err != nil {
			stack[len(stack)-1].close()
		}
	}()
	for len(elems) > 0 {
		e := elems[0]
		elems = elems[1:]
		top := stack[len(stack)-1]
		if e == ".." {
			if len(stack) > 1 {
				top.close()
				stack = stack[:len(stack)-1]
			}
			continue
		}
		var st unix.Stat_t
		err := unix.Fstatat(top.fd, e, &st, unix.AT_SYMLINK_NOFOLLOW)
		switch {
		case errors.Is(err, unix.ENOENT) && w.mkdir:
			err = unix.Mkdirat(top.fd, e, 0o700)
			if err != nil && !errors.Is(err, unix.EEXIST) {
				return nil, fmt.Errorf("target: mkdir %s: %w", path.Join(top.path, e), err)
			}
			created := err == nil
			sub, err := openSub(top, e)
			if err != nil {
				return nil, fmt.Errorf("target: mkdir %s: %w", path.Join(top.path, e), err)
			}
			stack = append(stack, sub)
			if created {
				if err := unix.Fchmod(sub.fd, sysMode(w.perm)); err != nil {
					return nil, fmt.Errorf("target: mkdir %s: %w", sub.path, err)
				}
			}
		case err != nil:
			return nil, fmt.Errorf("target: %s %s: %w", w.what, orig, &fs.PathError{Op: "lstat", Path: path.Join(top.path, e), Err: err})
		case st.Mode&unix.S_IFMT == unix.S_IFLNK:
			t, abs, err := w.follow(top, e, orig)
			if err != nil {
				return nil, err
			}
			if abs {
				for _, s := range stack[1:] {
					s.close()
				}
				stack = stack[:1]
			}
			elems = append(t, elems...)
		case st.Mode&unix.S_IFMT == unix.S_IFDIR:
			sub, err := openSub(top, e)
			if err != nil {
				return nil, fmt.Errorf("target: %s %s: %w", w.what, orig, &fs.PathError{Op: "open", Path: path.Join(top.path, e), Err: err})
			}
			stack = append(stack, sub)
		default:
			return nil, fmt.Errorf("target: %s %s: %s: %w", w.what, orig, path.Join(top.path, e), unix.ENOTDIR)
		}
	}
	return stack[len(stack)-1], nil
}

// parent opens the directory holding p's last element (resolving the
// elements before it) and returns that element. The last element itself is
// not followed. name "" means the directory returned itself (p is the root,
// or ends in "..").
func (w *walker) parent(p string) (*dirRef, string, error) {
	root, err := w.r.openRoot()
	if err != nil {
		return nil, "", err
	}
	elems := splitPath(p)
	if len(elems) == 0 {
		return root, "", nil
	}
	last := elems[len(elems)-1]
	if last == ".." {
		d, err := w.dirs([]*dirRef{root}, elems, p)
		return d, "", err
	}
	d, err := w.dirs([]*dirRef{root}, elems[:len(elems)-1], p)
	if err != nil {
		return nil, "", err
	}
	return d, last, nil
}

// final is parent, then a symlink as the last element is followed (in a
// trusted directory) until the last element is not one. The returned name
// may not exist; "" means the directory itself.
func (w *walker) final(p string) (*dirRef, string, error) {
	d, name, err := w.parent(p)
	for err == nil && name != "" {
		var st unix.Stat_t
		serr := unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
		if serr != nil || st.Mode&unix.S_IFMT != unix.S_IFLNK {
			return d, name, nil
		}
		t, abs, ferr := w.follow(d, name, p)
		if ferr != nil {
			d.close()
			return nil, "", ferr
		}
		// The link's target, from the link's (canonical) directory; ".."
		// in it is walked, not cleaned away.
		next := strings.Join(t, "/")
		if !abs {
			next = d.path + "/" + next
		}
		d.close()
		d, name, err = w.parent(next)
	}
	return d, name, err
}

// sysMode is m as the mode bits of chmod(2).
func sysMode(m fs.FileMode) uint32 {
	m = unixMode(m)
	o := uint32(m.Perm())
	if m&fs.ModeSetuid != 0 {
		o |= unix.S_ISUID
	}
	if m&fs.ModeSetgid != 0 {
		o |= unix.S_ISGID
	}
	if m&fs.ModeSticky != 0 {
		o |= unix.S_ISVTX
	}
	return o
}
