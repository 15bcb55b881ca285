package modules

// disable_ec2_metadata, as cloud-init 26.x's cc_disable_ec2_metadata:
// every boot, when `disable_ec2_metadata` is true, a reject route to the
// metadata address (`ip route add prohibit`, or `route add -host ...
// reject` without ip); neither tool is an error logged, not a failure.

import (
	"context"

	"github.com/cloudroot/cloudroot/pkg/imds"
	"github.com/cloudroot/cloudroot/pkg/state"
)

// DisableEC2Metadata is cc_disable_ec2_metadata.
var DisableEC2Metadata = Module{
	Name:       "disable_ec2_metadata",
	Frequency:  state.PerAlways,
	Keys:       []string{"disable_ec2_metadata"},
	ActivateBy: []string{"disable_ec2_metadata"},
	Run:        Typed(runDisableEC2Metadata),
}

// disableEC2MetadataConfig is the module's configuration.
type disableEC2MetadataConfig struct {
	Disable bool `cfg:"disable_ec2_metadata"`
}

func runDisableEC2Metadata(ctx context.Context, c *Context, cfg disableEC2MetadataConfig) error {
	if !cfg.Disable {
		c.Log.Debug("Skipping module named disable_ec2_metadata, disabling the ec2 route not enabled")
		return nil
	}
	var argv []string
	switch {
	case c.Which("ip"):
		argv = []string{"ip", "route", "add", "prohibit", imds.DefaultAddr}
	case c.Which("ifconfig"):
		argv = []string{"route", "add", "-host", imds.DefaultAddr, "reject"}
	default:
		c.Warnf(`Neither "route" nor "ip" command found, unable to manipulate routing table`)
		return nil
	}
	return c.RunCmd(ctx, DistroCmd(argv...))
}
