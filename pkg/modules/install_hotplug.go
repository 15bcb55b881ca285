package modules

// install_hotplug, as cloud-init 26.x's cc_install_hotplug decides: network
// hotplug is wanted when it is enabled (every datasource supports it in
// 26.x): `updates.network.when` lists hotplug, or the config says nothing
// and the datasource's default events include it (Ec2, Hetzner, VMware).
// Where it is not, an installed udev rule
// (/etc/udev/rules.d/90-cloud-init-hook-hotplug.rules) is removed and udev
// reloaded; asking for hotplug on a datasource without it is a warning.
//
// cloudroot has no hotplug handler (cloud-init's hook-hotplug and
// cloud-init-hotplugd): where cloud-init would install the rule, cloudroot
// says so once and installs nothing, so udev never runs a hook that is not
// there. The warning is recorded (status degraded) when the config asked
// for hotplug; enabled only by the datasource's defaults, it is logged.

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/state"
)

// HotplugUdevRules is the rule cloud-init installs.
const HotplugUdevRules = "/etc/udev/rules.d/90-cloud-init-hook-hotplug.rules"

// hotplugByDefault are the datasources whose default network update
// events include hotplug.
var hotplugByDefault = map[string]bool{"Ec2": true, "Hetzner": true, "VMware": true}

// InstallHotplug is cc_install_hotplug.
var InstallHotplug = Module{
	Name:      "install_hotplug",
	Frequency: state.PerInstance,
	Keys:      []string{"updates"},
	Run:       Typed(runInstallHotplug),
}

// dsName is the datasource's name from str(DataSource): "DataSourceEc2Local
// [...]" → "Ec2".
func dsName(s string) string {
	s, _, _ = strings.Cut(strings.TrimPrefix(s, "DataSource"), " ")
	return strings.TrimSuffix(s, "Local")
}

// installHotplugConfig is the module's configuration: updates.network.when
// (anything on the way that is not a mapping is no setting).
type installHotplugConfig struct {
	Updates struct {
		Network struct {
			HasWhen bool     `cfg:"when,present"`
			When    []string `cfg:"when,scalar"`
		} `cfg:"network,loose"`
	} `cfg:"updates,loose"`
}

func runInstallHotplug(ctx context.Context, c *Context, cfg installHotplugConfig) error {
	// Whether updates.network.when lists hotplug.
	given := cfg.Updates.Network.HasWhen
	listed := slices.Contains(cfg.Updates.Network.When, "hotplug")
	enabled := listed || (!given && hotplugByDefault[dsName(c.Datasource)])
	if !enabled {
		switch {
		case c.Root.Exists(HotplugUdevRules):
			c.Log.Debug("Uninstalling hotplug, not enabled")
			if err := c.Root.Remove(HotplugUdevRules); err != nil {
				return fmt.Errorf("install_hotplug: %w", err)
			}
			return c.RunCmd(ctx, DistroCmd("udevadm", "control", "--reload-rules"))
		default:
			c.Log.Debug("Skipping hotplug install, not enabled")
		}
		return nil
	}
	if !c.Which("udevadm") {
		c.Log.Debug("Skipping hotplug install, udevadm not found")
		return nil
	}
	msg := fmt.Sprintf("cloudroot: network hotplug is enabled for datasource %s, but cloudroot has no hotplug handler (cloud-init's hook-hotplug); udev rules will NOT be installed", dsName(c.Datasource))
	if !listed {
		// Enabled only by the datasource's defaults (every EC2 boot): said
		// in the log, not recorded as a problem the user should fix.
		c.Log.Warn(msg)
		return nil
	}
	c.Warnf("%s", msg)
	return nil
}
