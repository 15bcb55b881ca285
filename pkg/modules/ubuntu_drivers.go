package modules

// ubuntu_drivers, as cloud-init 26.x's cc_ubuntu_drivers: with
// `drivers.nvidia.license-accepted` true, ubuntu-drivers-common is
// installed when ubuntu-drivers is missing, debconf learns the
// linux/nvidia/latelink template (cloud-init loads it through
// python3-debconf's communicator; cloudroot runs the target's
// debconf-communicate with the same X_LOADTEMPLATEFILE command), and
// `ubuntu-drivers install --gpgpu nvidia[:VERSION]` installs the driver.

import (
	"context"
	"fmt"
	"path"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/internal/pyval"
	"github.com/cloudroot/cloudroot/pkg/state"
)

// nvidiaDebconfTemplate is cloud-init's NVIDIA_DEBCONF_CONTENT.
const nvidiaDebconfTemplate = `Template: linux/nvidia/latelink
Type: boolean
Default: true
Description: Late-link NVIDIA kernel modules?
 Enable this to link the NVIDIA kernel modules in cloud-init and
 make them available for use.
`

// nvidiaDebconfDir is where the template is written for debconf to load.
const nvidiaDebconfDir = "/var/tmp/cloud-init/ubuntu-drivers"

// UbuntuDrivers is cc_ubuntu_drivers.
var UbuntuDrivers = Module{
	Name:       "ubuntu_drivers",
	Frequency:  state.PerInstance,
	Keys:       []string{"drivers"},
	Distros:    []string{"ubuntu"},
	ActivateBy: []string{"drivers"},
	Run:        Typed(runUbuntuDrivers),
}

// ubuntuDriversConfig is the module's configuration: drivers as given, its shape
// checked by the module with the module's own message.
type ubuntuDriversConfig struct {
	HasDrivers bool `cfg:"drivers,present"`
	Drivers    any  `cfg:"drivers"`
	// Section is drivers' contents when it is a mapping: nvidia's
	// license-accepted (translate_bool, false when absent) and version
	// (used when truthy); an nvidia that is not a mapping is neither.
	Section struct {
		NVIDIA struct {
			LicenseAccepted bool `cfg:"license-accepted"`
			Version         any  `cfg:"version"`
		} `cfg:"nvidia,loose"`
	} `cfg:"drivers,loose"`
}

func runUbuntuDrivers(ctx context.Context, c *Context, dc ubuntuDriversConfig) error {
	raw, ok := dc.Drivers, dc.HasDrivers
	if !ok {
		return nil
	}
	if !isMapping(raw) {
		return fmt.Errorf("'drivers' config expected dict, found '%s': %s", pyval.TypeName(raw), pyval.Str(raw))
	}
	nv := dc.Section.NVIDIA
	if !nv.LicenseAccepted {
		c.Log.Debug("Not installing NVIDIA drivers. nvidia/license-accepted=False")
		return nil
	}
	if !c.Which("ubuntu-drivers") {
		if err := c.InstallPackages(ctx, c.Facts(), []string{"ubuntu-drivers-common"}); err != nil {
			return err
		}
	}
	arg := "nvidia"
	if v := nv.Version; pyval.Truthy(v) {
		arg += ":" + pyval.Str(v)
	}
	tmpl := path.Join(nvidiaDebconfDir, "nvidia.template")
	if err := c.Root.WriteFile(tmpl, []byte(nvidiaDebconfTemplate), 0o644); err != nil {
		return fmt.Errorf("ubuntu_drivers: %w", err)
	}
	err := c.RunCmdInput(ctx, []string{"debconf-communicate", "-fnoninteractive", "cloud-init"}, []byte("X_LOADTEMPLATEFILE "+tmpl+"\n"))
	if rerr := c.Root.RemoveAll(nvidiaDebconfDir); rerr != nil && err == nil {
		err = rerr
	}
	if err != nil {
		c.Logexc("Failed to register NVIDIA debconf template: %v", err)
		return err
	}
	r, err := c.RunCapture(ctx, "ubuntu-drivers", "install", "--gpgpu", arg)
	if err != nil {
		switch {
		case strings.Contains(r.Stderr, "ubuntu-drivers: error: argument <command>: invalid choice: 'install'"):
			c.Warnf("the available version of ubuntu-drivers is too old to perform requested driver installation")
		case strings.Contains(r.Stdout, "No drivers found for installation."):
			c.Warnf("ubuntu-drivers found no drivers for installation")
		}
		return err
	}
	return nil
}
