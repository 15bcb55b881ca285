package users

// ssh_import_id, as cloud-init 26.x's cc_ssh_import_id: when any
// `ssh_import_id` key is in the config (top level, or in a users: entry),
// the target's ssh-import-id imports the ids for each user: the top-level
// list for the default user, each entry's own list for the others. It runs
// as the user through sudo (keeping https_proxy) or doas, and is retried
// once after half a second. A missing ssh-import-id is a warning; a
// failing user is logged, the others go on, and the first failure is the
// module's error.

import (
	"context"
	"fmt"
	"time"

	"github.com/cloudroot/cloudroot/pkg/internal/pyval"
	"github.com/cloudroot/cloudroot/pkg/modules"
	"github.com/cloudroot/cloudroot/pkg/modules/internal/ugutil"
	"github.com/cloudroot/cloudroot/pkg/state"
)

// SSHImportID is cc_ssh_import_id.
var SSHImportID = modules.Module{
	Name:      "ssh_import_id",
	Frequency: state.PerInstance,
	Keys:      []string{"ssh_import_id"},
	Distros:   []string{"alpine", "cos", "debian", "raspberry-pi-os", "ubuntu"},
	Run:       modules.Typed(runSSHImportID),
}

// sshImportRetryDelay is how long a failed import waits before its retry.
const sshImportRetryDelay = 500 * time.Millisecond

// sshImportIDConfig is the module's configuration.
type sshImportIDConfig struct {
	// All is the whole cloud-config: cloud-init runs the module when
	// ssh_import_id is a key anywhere in it (is_key_in_nested_dict).
	All map[string]any `cfg:",all"`
	// SSHImportID is the default user's ids.
	SSHImportID importIDs   `cfg:"ssh_import_id"`
	Users       ugutil.Keys `cfg:",inline"`
}

// importIDs is the top-level ssh_import_id as util.get_cfg_option_list
// and util.uniq_merge read it: a list's items as text (a string is one
// item, not split on commas), trimmed, empties and repeats dropped.
type importIDs []string

// UnmarshalPy implements pyval.Unmarshaler.
func (ids *importIDs) UnmarshalPy(_ *pyval.Decoder, v any) error {
	switch t := v.(type) {
	case nil:
		*ids = nil
	case []any:
		*ids = ugutil.UniqMerge(t)
	default:
		*ids = ugutil.UniqMerge([]any{pyval.ScalarStr(v)})
	}
	return nil
}

func runSSHImportID(ctx context.Context, c *modules.Context, cfg sshImportIDConfig) error {
	if !pyval.KeyInNested(cfg.All, "ssh_import_id") {
		c.Log.Debug("Skipping module named ssh_import_id, no 'ssh_import_id' directives found.")
		return nil
	}
	if !c.Which("ssh-import-id") {
		c.Warnf("ssh-import-id is not installed, but module ssh_import_id is configured. Skipping module.")
		return nil
	}
	users, _, _, _ := ugutil.Normalize(cfg.Users, c.Distro.DefaultUser(), func(string, ...any) {})
	var first error
	for _, u := range users {
		var ids []string
		if u.Default {
			ids = cfg.SSHImportID
		} else {
			ids = ugutil.UniqMerge(u.SSHImportID)
		}
		if len(ids) == 0 {
			continue
		}
		if err := importSSHIDs(ctx, c, ids, u.Name); err != nil {
			c.Logexc("ssh-import-id failed for: %s %s", u.Name, pyval.Repr(ids))
			if first == nil {
				first = err
			}
		}
	}
	return first
}

func importSSHIDs(ctx context.Context, c *modules.Context, ids []string, user string) error {
	if _, err := c.Root.LookupUser(user); err != nil {
		return fmt.Errorf("getpwnam(): name not found: '%s': %w", user, err)
	}
	var argv []string
	switch {
	case c.Which("sudo"):
		argv = []string{"sudo", "--preserve-env=https_proxy", "-Hu", user, "ssh-import-id"}
	case c.Which("doas"):
		argv = []string{"doas", "-u", user, "ssh-import-id"}
	default:
		c.Warnf("Neither sudo nor doas available! Unable to import SSH ids.")
		return nil
	}
	argv = append(argv, ids...)
	if c.RunCmd(ctx, modules.DistroCmd(argv...)) == nil {
		return nil
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(sshImportRetryDelay):
	}
	return c.RunCmd(ctx, modules.DistroCmd(argv...))
}
