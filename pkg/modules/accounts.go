package modules

// What the users/ssh/passwords family (pkg/modules/users) shares with the
// modules still here (ssh, ssh_console, byobu): the users normalisation
// (pkg/modules/internal/ugutil) read through a Context, the file-owner
// options for sudoers and sshd files, cloud-init's header line, and the
// ssh helpers users_groups and set_passwords call.

import (
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/cloudroot/cloudroot/pkg/modules/internal/ugutil"
	"github.com/cloudroot/cloudroot/pkg/target"
)

// userKeys are the users, user, groups and system_info.default_user keys
// (ugutil.Keys), declared inline by the modules that read them.
type userKeys = ugutil.Keys

// normalizeUsers is ugutil.Normalize with c's distro default user.
func normalizeUsers(c *Context, k userKeys, warn func(string, ...any)) ([]ugutil.User, *ugutil.User, []ugutil.Group, error) {
	return ugutil.Normalize(k, c.Distro.DefaultUser(), warn)
}

// keyList is ugutil.KeyList.
func keyList(v any) []string { return ugutil.KeyList(v) }

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

func sameOwner(fi fs.FileInfo, appendData bool) target.WriteOpts { return SameOwner(fi, appendData) }

// RootOwned are WriteOpts for a root:root file (owner left alone when not
// running as root, as in unit tests).
func RootOwned(perm fs.FileMode) target.WriteOpts {
	if os.Geteuid() == 0 {
		return target.WriteOpts{Perm: perm, UID: 0, GID: 0}
	}
	return target.WriteOpts{Perm: perm, UID: -1, GID: -1}
}

func rootOwned(perm fs.FileMode) target.WriteOpts { return RootOwned(perm) }

// SetupUserKeys writes keys to user u's authorized_keys (ssh_util's
// setup_user_keys), each with options when not nil.
func (c *Context) SetupUserKeys(u target.User, keys []string, options *string) error {
	return setupUserKeys(c, u, keys, options)
}

// PublicKeys are the datasource's public keys (cloud.get_public_ssh_keys).
func (c *Context) PublicKeys() []string { return publicKeys(c) }

// DisableUserOpts are opts with $USER and $DISABLE_USER filled in.
func DisableUserOpts(opts, user, disableUser string) string {
	return disableUserOpts(opts, user, disableUser)
}

// UpdateSSHDConfig sets key to value in sshd's configuration (ssh_util's
// update_ssh_config) and reports whether a file changed.
func (c *Context) UpdateSSHDConfig(key, value string) (bool, error) {
	return updateSSHDConfig(c, key, value)
}

// Readlink is the target of the link at p in the target.
func (c *Context) Readlink(p string) (string, error) { return c.readlink(p) }
