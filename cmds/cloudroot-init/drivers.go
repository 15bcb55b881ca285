package main

import "github.com/cloudroot/cloudroot/pkg/bootenv"

// asyncProbeParam is the module parameter every Linux module accepts
// (kernel/module: unknown_module_param_cb) asking the driver core to probe
// its devices asynchronously: the module load returns at once and, for
// instance, ahci's scan of six empty SATA ports (seconds under TCG) runs
// beside the rest of the boot instead of before it. Off by default: the
// detect stage then runs before a seed disk behind that controller (a
// CD-ROM on q35's ahci) has appeared and finds no datasource, because
// nothing tells the initramfs when the asynchronous probes are done
// (TestSecondBootAndNewInstance, TestConsoleKeysAndFingerprints and
// TestPlantedAuthorizedKeysLink failed so in CI), and virtio disks are
// named in probe-completion order, so /dev/vda and /dev/vdb may swap
// (TestStackedRootStops).
const asyncProbeParam = "async_probe"

// floorParams is the parameter string the driver floor's modules are
// loaded with: the kernel's default (synchronous unless the driver itself
// prefers asynchronous probing), or async_probe when the kernel command
// line has cloudroot.async_probe (=1, on, yes, true): for machines whose
// seed is not behind a slow controller.
func floorParams(c bootenv.Cmdline) string {
	if v, ok := c.Get("cloudroot.async_probe"); ok {
		switch v {
		case "0", "off", "no", "false", "n":
			return ""
		}
		return asyncProbeParam
	}
	return ""
}
