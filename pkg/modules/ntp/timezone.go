package ntp

// timezone (cloud-init cc_timezone, config stage, per-instance, all
// distros) sets the zone the way the distro class's set_timezone does,
// after checking that <zoneinfo>/<zone> is a file in the target:
//
//   - where the distro keeps /etc/timezone (Debian, Ubuntu, Arch, Alpine,
//     Gentoo, Photon, the BSDs) it gets the zone name, and /etc/localtime
//     becomes a symlink to the zone's file when it is a symlink or absent,
//     else a copy of it;
//   - RHEL-family and SUSE under systemd replace /etc/localtime with the
//     symlink (cloud-init does not use timedatectl: it complains at boot);
//   - RHEL-family and SUSE without systemd set ZONE= (TIMEZONE= on SUSE) in
//     /etc/sysconfig/clock and copy the zone's file to /etc/localtime.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/distro"
	"github.com/cloudroot/cloudroot/pkg/modules"
	"github.com/cloudroot/cloudroot/pkg/state"
	"github.com/cloudroot/cloudroot/pkg/target"
)

// Timezone is cc_timezone.
var Timezone = modules.Module{
	Name:       "timezone",
	Frequency:  state.PerInstance,
	Keys:       []string{"timezone"},
	ActivateBy: []string{"timezone"},
	Run:        modules.Typed(runTimezone),
}

// timezoneConfig is the module's configuration: str() of timezone, ""
// when absent or null.
type timezoneConfig struct {
	Timezone string `cfg:"timezone"`
}

func runTimezone(_ context.Context, c *modules.Context, cfg timezoneConfig) error {
	tz := cfg.Timezone
	if tz == "" {
		c.Log.Debug("Skipping module named timezone, no 'timezone' specified", "module", "timezone")
		return nil
	}
	return setTimezone(c, tz)
}

// setTimezone is distro.set_timezone.
func setTimezone(c *modules.Context, tz string) error {
	f := c.Facts().Timezone
	if slices.Contains(strings.Split(tz, "/"), "..") {
		return fmt.Errorf("invalid timezone %s: it leaves %s", tz, f.ZoneinfoDir)
	}
	zf := path.Join(f.ZoneinfoDir, tz)
	if fi, err := c.Root.Stat(zf); err != nil || !fi.Mode().IsRegular() {
		return fmt.Errorf("Invalid timezone %s, no file found at %s", tz, zf)
	}
	switch {
	case f.File != "":
		if err := c.Root.WriteFile(f.File, []byte(strings.TrimRight(tz, " \t\r\n")+"\n"), 0o644); err != nil {
			return err
		}
		fi, err := c.Root.Lstat(f.Localtime)
		if err == nil && fi.Mode()&fs.ModeSymlink == 0 {
			return copyInTarget(c, zf, f.Localtime)
		}
		return c.Root.Symlink(zf, f.Localtime)
	case f.Copy:
		if err := updateSysconfig(c, f.Clock, f.ClockKey, tz); err != nil {
			return err
		}
		return copyInTarget(c, zf, f.Localtime)
	default:
		return c.Root.Symlink(zf, f.Localtime)
	}
}

// copyInTarget copies src to dst with src's permission bits (shutil.copy).
func copyInTarget(c *modules.Context, src, dst string) error {
	b, err := c.Root.ReadFile(src)
	if err != nil {
		return err
	}
	fi, err := c.Root.Stat(src)
	if err != nil {
		return err
	}
	if l, err := c.Root.Lstat(dst); err == nil && l.Mode()&fs.ModeSymlink != 0 {
		if err := c.Root.Remove(dst); err != nil {
			return err
		}
	}
	return c.Root.WriteFileOpts(dst, b, target.WriteOpts{Perm: fi.Mode().Perm(), UID: -1, GID: -1})
}

// updateSysconfig is rhel_util.update_sysconfig_file for one key: KEY=value
// set in a shell-variable file (distro.SetShellVar), other lines kept; a
// new file starts with cloud-init's "Created by" header.
func updateSysconfig(c *modules.Context, fn, key, value string) error {
	b, err := c.Root.ReadFile(fn)
	if errors.Is(err, fs.ErrNotExist) {
		b, err = []byte(c.MakeHeader("Created")+"\n"), nil
	}
	if err != nil {
		return err
	}
	return c.Root.WriteFile(fn, []byte(distro.SetShellVar(b, key, value)), 0o644)
}
