// Package ntp is the time family of cloud-init modules: ntp (cc_ntp),
// which configures an NTP client from the distro's table and cloudroot's
// templates/ntp. timezone stays in pkg/modules for now (the locale and
// keyboard tests share its distro-level helper).
package ntp

import "github.com/cloudroot/cloudroot/pkg/modules"

// Modules are the family's modules, for pkg/modules/builtin.
func Modules() []modules.Module {
	return []modules.Module{NTP}
}
