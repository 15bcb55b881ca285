// Package pkgmgr is the package-manager family of cloud-init modules:
// apt_configure (mirrors, keys, sources; apt_sources.go, apt_dearmor.go),
// apt_pipelining, package_update_upgrade_install, yum_add_repo,
// zypper_add_repo and apk_configure, with what they share (apt-get's
// settings from system_info, running the distro's package commands once
// per instance).
package pkgmgr

import "github.com/cloudroot/cloudroot/pkg/modules"

// Modules are the family's modules, for pkg/modules/builtin.
func Modules() []modules.Module {
	return []modules.Module{AptPipelining, AptConfigure, YumAddRepo, ZypperAddRepo, ApkConfigure, PackageUpdateUpgradeInstall}
}
