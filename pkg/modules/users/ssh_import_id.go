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

// keyInNested is is_key_in_nested_dict: key at any depth of dicts, or in a
// dict directly inside a list.
func keyInNested(m map[string]any, key string) bool {
	for k, v := range m {
		if k == key {
			return true
		}
		switch t := v.(type) {
		case map[string]any:
			if keyInNested(t, key) {
				return true
			}
		case []any:
			for _, e := range t {
				if d, ok := e.(map[string]any); ok && keyInNested(d, key) {
					return true
				}
			}
		}
	}
	return false
}

// sshImportIDConfig is the module's configuration.
type sshImportIDConfig struct {
	// All is the whole cloud-config: cloud-init runs the module when
	// ssh_import_id is a key anywhere in it (is_key_in_nested_dict).
	All         map[string]any `cfg:",all"`
	SSHImportID any            `cfg:"ssh_import_id"`
	Users       ugutil.Keys    `cfg:",inline"`
}

func runSSHImportID(ctx context.Context, c *modules.Context, cfg sshImportIDConfig) error {
	if !keyInNested(cfg.All, "ssh_import_id") {
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
			ids = ugutil.UniqMerge(getCfgOptionList(cfg.SSHImportID))
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

// getCfgOptionList is util.get_cfg_option_list's value handling: a list as
// is, a string as a one-element list, nothing otherwise.
func getCfgOptionList(v any) []any {
	switch t := v.(type) {
	case []any:
		return t
	case nil:
		return nil
	case string:
		return []any{t}
	}
	return []any{pyval.ScalarStr(v)}
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
