//go:build !unix

package target

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// The confined writes walk the root with openat(2) (confine_unix.go);
// elsewhere they are not available.
var errNoConfinedWrites = fmt.Errorf("target: confined writes need a unix system: %w", errors.ErrUnsupported)

// MkdirAll is not available on this system.
func (r *Root) MkdirAll(p string, perm fs.FileMode) error { return errNoConfinedWrites }

// WriteFileWith is not available on this system.
func (r *Root) WriteFileWith(p string, o WriteOpts, fn func(w io.Writer) error) error {
	return errNoConfinedWrites
}

// OpenRegular is not available on this system.
func (r *Root) OpenRegular(p string) (*os.File, error) { return nil, errNoConfinedWrites }

// Chown is not available on this system.
func (r *Root) Chown(p string, uid, gid int) error { return errNoConfinedWrites }

// Chmod is not available on this system.
func (r *Root) Chmod(p string, perm fs.FileMode) error { return errNoConfinedWrites }

// Lchown is not available on this system.
func (r *Root) Lchown(p string, uid, gid int) error { return errNoConfinedWrites }

// Remove is not available on this system.
func (r *Root) Remove(p string) error { return errNoConfinedWrites }

// RemoveAll is not available on this system.
func (r *Root) RemoveAll(p string) error { return errNoConfinedWrites }

// Rename is not available on this system.
func (r *Root) Rename(oldpath, newpath string) error { return errNoConfinedWrites }

// Symlink is not available on this system.
func (r *Root) Symlink(oldname, newname string) error { return errNoConfinedWrites }
