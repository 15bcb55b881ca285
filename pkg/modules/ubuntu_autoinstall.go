package modules

// ubuntu_autoinstall, as cloud-init 26.x's cc_ubuntu_autoinstall: an
// `autoinstall` key belongs to Ubuntu's live installer (subiquity), not to
// cloud-init. Once snap seeding is done, the module looks for one of the
// installer snaps; without one it refuses with cloud-init's warning, with
// one it leaves the config to the installer. It never acts itself.

import (
	"context"
	"regexp"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/state"
)

// liveInstallerSnaps are the snaps that read autoinstall.
var liveInstallerSnaps = []string{"subiquity", "ubuntu-desktop-installer"}

// UbuntuAutoinstall is cc_ubuntu_autoinstall.
var UbuntuAutoinstall = Module{
	Name:       "ubuntu_autoinstall",
	Frequency:  state.PerOnce,
	Keys:       []string{"autoinstall"},
	Distros:    []string{"ubuntu"},
	ActivateBy: []string{"autoinstall"},
	Run:        Typed(runUbuntuAutoinstall),
}

func runUbuntuAutoinstall(ctx context.Context, c *Context, _ NoKeys) error {
	if err := waitSnapSeeded(ctx, c); err != nil {
		return err
	}
	out, err := c.RunOutput(ctx, "snap", "list")
	if err != nil {
		return err
	}
	present := ""
	for _, n := range liveInstallerSnaps {
		if regexp.MustCompile(n).MatchString(out) {
			present = n
		}
	}
	if present == "" {
		c.Warnf("Skipping autoinstall module. Expected one of the Ubuntu installer snap packages to be present: %s", strings.Join(liveInstallerSnaps, ", "))
		return nil
	}
	c.Log.Debug("Valid autoinstall schema. Config will be processed by " + present)
	return nil
}
