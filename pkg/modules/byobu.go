package modules

// byobu, as cloud-init 26.x's cc_byobu: `byobu_by_default` (user, system,
// enable[-user|-system], disable[-user|-system]) installs byobu when
// missing and runs byobu-launcher-(un)install for the default user and/or
// debconf + dpkg-reconfigure for the system, in one shell that counts
// failures. An unknown value is a warning (and, as upstream, may still act
// by its prefix).

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/modules/internal/ugutil"
	"github.com/cloudroot/cloudroot/pkg/state"
)

// Byobu is cc_byobu.
var Byobu = Module{
	Name:      "byobu",
	Frequency: state.PerInstance,
	Keys:      []string{"byobu_by_default"},
	Distros:   []string{"ubuntu", "debian", "raspberry-pi-os"},
	Run:       Typed(runByobu),
}

// byobuConfig is the module's configuration.
type byobuConfig struct {
	Value string      `cfg:"byobu_by_default,str"`
	Users ugutil.Keys `cfg:",inline"`
}

func runByobu(ctx context.Context, c *Context, cfg byobuConfig) error {
	value := cfg.Value
	if value == "" {
		c.Log.Debug("Skipping module named byobu, no 'byobu' values found")
		return nil
	}
	if !c.Which("byobu") {
		if err := c.InstallPackages(ctx, c.Facts(), []string{"byobu"}); err != nil {
			return err
		}
	}
	if value == "user" || value == "system" {
		value = "enable-" + value
	}
	if !slices.Contains([]string{"enable-user", "enable-system", "enable", "disable-user", "disable-system", "disable"}, value) {
		c.Warnf("Unknown value %s for byobu_by_default", value)
	}
	modUser := strings.HasSuffix(value, "-user")
	modSys := strings.HasSuffix(value, "-system")
	blInst, dcVal := "uninstall", "byobu byobu/launch-by-default boolean false"
	if strings.HasPrefix(value, "enable") {
		blInst, dcVal = "install", "byobu byobu/launch-by-default boolean true"
		modSys = true
	} else if value == "disable" {
		modUser, modSys = true, true
	}
	var sh strings.Builder
	if modUser {
		_, def, _, _ := ugutil.Normalize(cfg.Users, c.Distro.DefaultUser(), func(string, ...any) {})
		if def == nil {
			c.Warnf("No default byobu user provided, can not launch %s for the default user", blInst)
		} else {
			fmt.Fprintf(&sh, ` sudo -Hu "%s" byobu-launcher-%s || X=$(($X+1)); `, def.Name, blInst)
		}
	}
	if modSys {
		fmt.Fprintf(&sh, `echo "%s" | debconf-set-selections && dpkg-reconfigure byobu --frontend=noninteractive || X=$(($X+1)); `, dcVal)
	}
	if sh.Len() == 0 {
		return nil
	}
	c.Log.Debug("Setting byobu to " + value)
	return c.RunCmd(ctx, DistroCmd("/bin/sh", "-c", "X=0; "+sh.String()+" exit $X"))
}
