package main

import "github.com/cloudroot/cloudroot/pkg/bootenv"

// asyncProbeParam is the module parameter every Linux module accepts
// (kernel/module: unknown_module_param_cb) asking the driver core to probe
// its devices asynchronously: the module load returns at once and, for
// instance, ahci's scan of six empty SATA ports (seconds under TCG) runs
// beside the rest of the boot instead of before it. Nothing waits on a
// floor driver as such: the root is mounted as soon as its device appears
// (bounded wait), the network only when a source needs it.
const asyncProbeParam = "async_probe"

// floorParams is the parameter string the driver floor's modules are
// loaded with: async_probe, unless cloudroot.async_probe=0 (or off, no,
// false) on the kernel command line asks for the kernel's default
// (synchronous unless the driver itself prefers asynchronous probing).
func floorParams(c bootenv.Cmdline) string {
	if v, ok := c.Get("cloudroot.async_probe"); ok {
		switch v {
		case "0", "off", "no", "false", "n":
			return ""
		}
	}
	return asyncProbeParam
}
