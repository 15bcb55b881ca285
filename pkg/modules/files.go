package modules

// Helpers for modules that write the target's files: cloud-init's header
// line, the owner and mode of a rewritten or a new root file, and a
// symlink read inside the target.

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"time"

	"github.com/cloudroot/cloudroot/pkg/target"
)

// MakeHeader is cloud-init's util.make_header.
func (c *Context) MakeHeader(base string) string {
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	return fmt.Sprintf("# %s by cloud-init v. %s on %s", base, c.Version, now().UTC().Format("Mon, 02 Jan 2006 15:04:05 -0700"))
}

// SameOwner keeps fi's mode and owner for a rewrite of the same file.
func SameOwner(fi fs.FileInfo, appendData bool) target.WriteOpts {
	uid, gid := target.FileOwner(fi)
	return target.WriteOpts{Perm: fi.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky), UID: uid, GID: gid, Append: appendData}
}

// RootOwned are WriteOpts for a root:root file (owner left alone when not
// running as root, as in unit tests).
func RootOwned(perm fs.FileMode) target.WriteOpts {
	if os.Geteuid() == 0 {
		return target.WriteOpts{Perm: perm, UID: 0, GID: 0}
	}
	return target.WriteOpts{Perm: perm, UID: -1, GID: -1}
}

// Readlink reads the symlink at p in the target (its directory resolved
// inside the root, the link itself not followed).
func (c *Context) Readlink(p string) (string, error) {
	dir, err := c.Root.Resolve(path.Dir(p))
	if err != nil {
		return "", err
	}
	return os.Readlink(filepath.Join(dir, path.Base(p)))
}
