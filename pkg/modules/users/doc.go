// Package users is the users/ssh/passwords family of cloud-init modules:
// users_groups (cc_users_groups), set_passwords (cc_set_passwords) and
// ssh_import_id (cc_ssh_import_id). The users normalisation they share
// with ssh, ssh_console and byobu is pkg/modules/internal/ugutil; ssh,
// its host keys and ssh_console stay in pkg/modules for now.
package users

import "github.com/cloudroot/cloudroot/pkg/modules"

// Modules are the family's modules, for pkg/modules/builtin.
func Modules() []modules.Module {
	return []modules.Module{UsersGroups, SetPasswords, SSHImportID}
}
