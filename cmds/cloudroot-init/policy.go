package main

import (
	"time"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/imds"
)

// searchPolicy is the boot's metadata timing policy: the defaults, with
// the kernel command line's cloudroot.ds-* keys over them
// (datasource.CmdlinePolicy).
func searchPolicy(cmdline bootenv.Cmdline) (imds.Policy, []error) {
	return datasource.CmdlinePolicy(cmdline)
}

// includeBudget is the policy's bound on every #include fetch of one
// user-data.
func includeBudget(cmdline bootenv.Cmdline) time.Duration {
	p, _ := searchPolicy(cmdline)
	return p.Include
}
