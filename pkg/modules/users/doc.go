// Package users is the users/ssh/passwords family of cloud-init modules:
// users_groups (cc_users_groups), set_passwords (cc_set_passwords),
// ssh_import_id (cc_ssh_import_id), ssh (cc_ssh) with its host keys
// (hostkeys.go: the background pool, deferral to the booted root), and
// keys_to_console and ssh_authkey_fingerprints (ssh_console.go). The
// users normalisation they share with byobu is
// pkg/modules/internal/ugutil. The host-key hooks of modules.Context
// (HostKeySource, HostKeyDeferral) stay in pkg/modules, which names them.
package users

import "github.com/cloudroot/cloudroot/pkg/modules"

// Modules are the family's modules, for pkg/modules/builtin.
func Modules() []modules.Module {
	return []modules.Module{UsersGroups, SetPasswords, SSHImportID, SSH, KeysToConsole, SSHAuthkeyFingerprints}
}
