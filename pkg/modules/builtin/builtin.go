// Package builtin is cloudroot's module registry: every implemented
// cloud-init module, from pkg/modules itself and from each family
// sub-package. It lives apart from pkg/modules because it imports every
// family, and the families import pkg/modules (as pkg/datasource/builtin
// assembles the datasources). Callers that run modules pass Modules() in
// modules.Options.
package builtin

import (
	"slices"

	"github.com/cloudroot/cloudroot/pkg/modules"
	"github.com/cloudroot/cloudroot/pkg/modules/cm"
	"github.com/cloudroot/cloudroot/pkg/modules/disks"
	"github.com/cloudroot/cloudroot/pkg/modules/ntp"
	"github.com/cloudroot/cloudroot/pkg/modules/pkgmgr"
	"github.com/cloudroot/cloudroot/pkg/modules/users"
)

// Modules returns every module cloudroot implements, in no particular
// order: stage order comes from the cloud_*_modules lists. Each call
// returns a new slice.
func Modules() []modules.Module {
	return slices.Concat(
		modules.Core(),
		cm.Modules(),
		disks.Modules(),
		ntp.Modules(),
		pkgmgr.Modules(),
		users.Modules(),
	)
}
