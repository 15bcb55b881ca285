// Package ntp is the time family of cloud-init modules: ntp (cc_ntp),
// which configures an NTP client from the distro's table and cloudroot's
// templates/ntp, and timezone (cc_timezone), the distro class's
// set_timezone. locale and keyboard stay in pkg/modules; the upstream
// replay helpers their tests share with timezone's live in
// pkg/modules/internal/modtest.
package ntp

import "github.com/cloudroot/cloudroot/pkg/modules"

// Modules are the family's modules, for pkg/modules/builtin.
func Modules() []modules.Module {
	return []modules.Module{NTP, Timezone}
}
