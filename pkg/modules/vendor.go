package modules

// Shared pieces of the "vendor" modules (snap, landscape, lxd, fan,
// wireguard, ubuntu_pro...): the list they are registered from and
// util.wait_for_snap_seeded.

import (
	"context"
	"fmt"
	"os"
)

// vendorModules are the modules of vendor.go's family, registered by
// Registry.
func vendorModules() []Module {
	return []Module{
		DisableEC2Metadata, Byobu, UbuntuAutoinstall, Fan, GrubDpkg, Spacewalk, Snap, Landscape,
		LXD, Wireguard, ResetRMC, UbuntuDrivers, InstallHotplug, RaspberryPi, UbuntuPro, RHSubscription,
	}
}

// snapSeededSem is the semaphore util.wait_for_snap_seeded takes
// (cloud.run("snap-seeded", ..., freq=PER_ONCE)).
const snapSeededSem = "/var/lib/cloud/sem/snap_seeded.once"

// waitSnapSeeded is util.wait_for_snap_seeded: once per machine, `snap
// wait system seed.loaded` when the target has snap.
func waitSnapSeeded(ctx context.Context, c *Context) error {
	if c.Root.Exists(snapSeededSem) {
		return nil
	}
	body := fmt.Sprintf("%d: %f\n", os.Getpid(), float64(c.Now().UnixNano())/1e9)
	if err := c.Root.WriteFile(snapSeededSem, []byte(body), 0o644); err != nil {
		return fmt.Errorf("snap-seeded semaphore: %w", err)
	}
	if !c.Which("snap") {
		c.Log.Debug("Skipping snap wait, no snap command present")
		return nil
	}
	return c.RunCmd(ctx, DistroCmd("snap", "wait", "system", "seed.loaded"))
}
