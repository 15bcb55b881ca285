// Package disks is the disk family of cloud-init modules: growpart,
// resizefs, disk_setup (with fs_setup) and mounts, which reach the
// machine's block devices through a DiskEnv (outside the target root) and
// do the work with pkg/disk.
package disks

import "github.com/cloudroot/cloudroot/pkg/modules"

// Modules are the family's modules, for pkg/modules/builtin.
func Modules() []modules.Module {
	return []modules.Module{Growpart, Resizefs, DiskSetup, Mounts}
}
