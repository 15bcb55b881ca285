package modules

// grub_dpkg, as cloud-init 26.x's cc_grub_dpkg: when `grub_dpkg.enabled`
// (default false; `grub-dpkg` is the older spelling) it feeds grub-pc's
// install device to debconf-set-selections: grub-efi/install_devices on an
// EFI-booted machine, else grub-pc/install_devices and
// install_devices_empty. A device not given is probed: grub-probe finds the
// disk (or, on EFI, the partition) holding /boot (/boot/efi), and udevadm's
// first /dev/disk/by-id link names it. A debconf failure is a warning.

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/internal/pyval"
	"github.com/cloudroot/cloudroot/pkg/state"
)

// GrubDpkg is cc_grub_dpkg.
var GrubDpkg = Module{
	Name:       "grub_dpkg",
	Frequency:  state.PerInstance,
	Keys:       []string{"grub_dpkg", "grub-dpkg"},
	Distros:    []string{"ubuntu", "debian"},
	ActivateBy: []string{"grub_dpkg", "grub-dpkg"},
	Run:        Typed(runGrubDpkg),
}

// grubDpkgConfig is the module's configuration: grub_dpkg when given,
// else grub-dpkg (cloud-init's cfg.get("grub_dpkg", cfg.get("grub-dpkg",
// {}))); a section that is not a mapping is an empty one.
type grubDpkgConfig struct {
	HasGrubDpkg bool            `cfg:"grub_dpkg,present"`
	GrubDpkg    grubDpkgSection `cfg:"grub_dpkg,loose"`
	Old         grubDpkgSection `cfg:"grub-dpkg,loose"`
}

// grubDpkgSection is grub_dpkg's mapping.
type grubDpkgSection struct {
	// Enabled is as given (util.is_false reads it); absent is False.
	HasEnabled    bool   `cfg:"enabled,present"`
	Enabled       any    `cfg:"enabled"`
	HasEFIDevices bool   `cfg:"grub-efi/install_devices,present"`
	EFIDevices    string `cfg:"grub-efi/install_devices,str"`
	HasPCDevices  bool   `cfg:"grub-pc/install_devices,present"`
	PCDevices     string `cfg:"grub-pc/install_devices,str"`
	// DevicesEmpty is nil when absent or null.
	DevicesEmpty *bool `cfg:"grub-pc/install_devices_empty"`
}

func runGrubDpkg(ctx context.Context, c *Context, cfg grubDpkgConfig) error {
	mycfg := cfg.Old
	if cfg.HasGrubDpkg {
		mycfg = cfg.GrubDpkg
	}
	enabled := mycfg.Enabled
	if !mycfg.HasEnabled {
		enabled = false
	}
	if pyval.IsFalse(enabled) {
		c.Log.Debug(fmt.Sprintf("grub_dpkg disabled by config grub_dpkg/enabled=%s", pyval.Str(enabled)))
		return nil
	}
	sel, err := grubDebconf(ctx, c, mycfg)
	if err != nil {
		return err
	}
	if err := c.RunCmdInput(ctx, []string{"debconf-set-selections"}, []byte(sel)); err != nil {
		c.Logexc("Failed to run debconf-set-selections for grub_dpkg: %v", err)
	}
	return nil
}

func grubDebconf(ctx context.Context, c *Context, mycfg grubDpkgSection) (string, error) {
	efi := c.Root.Exists("/sys/firmware/efi")
	if efi {
		idevs := mycfg.EFIDevices
		if !mycfg.HasEFIDevices {
			var err error
			if idevs, err = grubIdevs(ctx, c, efi); err != nil {
				return "", err
			}
		}
		return fmt.Sprintf("grub-pc grub-efi/install_devices string %s\n", idevs), nil
	}
	idevs := mycfg.PCDevices
	if !mycfg.HasPCDevices {
		var err error
		if idevs, err = grubIdevs(ctx, c, efi); err != nil {
			return "", err
		}
	}
	empty := idevs == ""
	if mycfg.DevicesEmpty != nil {
		empty = *mycfg.DevicesEmpty
	}
	return fmt.Sprintf("grub-pc grub-pc/install_devices string %s\ngrub-pc grub-pc/install_devices_empty boolean %t\n", idevs, empty), nil
}

// grubIdevs is fetch_idevs: the /dev/disk/by-id name of the device grub is
// installed to, else its plain name, else "".
func grubIdevs(ctx context.Context, c *Context, efi bool) (string, error) {
	target, mount := "disk", "/boot"
	if efi {
		target, mount = "device", "/boot/efi"
	}
	disk := ""
	r, err := c.RunCapture(ctx, "grub-probe", "-t", target, mount)
	switch {
	case err == nil:
		disk = strings.TrimSpace(r.Stdout)
	case r.Code == -1 || r.Code == 127:
		// grub-common may not be installed (containers).
		c.Log.Debug("'grub-probe' not found in $PATH")
	case strings.Contains(r.Stderr, "failed to get canonical path"):
		c.Log.Debug("grub-probe 'failed to get canonical path'")
	default:
		return "", err
	}
	if disk == "" || !c.Root.Exists(disk) {
		return "", nil
	}
	var devices []string
	if r, err := c.RunCapture(ctx, "udevadm", "info", "--root", "--query=symlink", disk); err != nil {
		c.Logexc("udevadm DEVLINKS symlink query failed for disk='%s'", disk)
	} else {
		devices = strings.Fields(r.Stdout)
	}
	var byID []string
	for _, d := range devices {
		if strings.Contains(d, "disk/by-id") {
			byID = append(byID, d)
		}
	}
	if len(byID) == 0 {
		return disk, nil
	}
	sort.Strings(byID)
	return byID[0], nil
}
