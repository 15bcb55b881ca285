// Package cm is the configuration-management family of cloud-init
// modules: ansible, chef, puppet, salt_minion and mcollective, with the
// helpers they share (installing the agent, fetching an installer,
// configobj/ini files).
package cm

import "github.com/cloudroot/cloudroot/pkg/modules"

// Modules are the family's modules, for pkg/modules/builtin.
func Modules() []modules.Module {
	return []modules.Module{Ansible, SaltMinion, Mcollective, Puppet, Chef}
}
