//go:build linux

package main

import (
	"context"
	"path/filepath"
	"time"

	"github.com/u-root/u-root/pkg/kmodule"
	"golang.org/x/sys/unix"

	"github.com/cloudroot/cloudroot/pkg/coldplug"
)

// coldplugWatch is how long, after the first coldplug, devices that appear
// late (USB disks enumerating behind a new xHCI controller) still get
// their drivers loaded in the background.
const coldplugWatch = 30 * time.Second

// coldplug loads the drivers the devices in /sys need from the image's
// modules.alias (pkg/coldplug), with the prober loadDrivers used, so a
// module is loaded once whichever path asked for it. Devices without a
// packed driver are reported on the console when they are storage or
// network devices.
func (b *boot) coldplug(p *kmodule.Prober) {
	var uts unix.Utsname
	_ = unix.Uname(&uts)
	dir := filepath.Join("/lib/modules", cstr(uts.Release[:]))
	aliases, softdeps, err := coldplug.ReadModuleDir(dir)
	if err != nil {
		b.log.Warn("coldplug: reading the module index", "path", dir, "err", err)
	}
	c := coldplug.New(coldplug.Options{
		Aliases:  aliases,
		Softdeps: softdeps,
		Load:     func(m string) error { return p.Probe(m, "") },
		Log:      b.log,
	})
	if _, err := c.Run(context.Background()); err != nil {
		b.log.Warn("coldplug", "err", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), coldplugWatch)
	go func() {
		defer cancel()
		c.Watch(ctx)
	}()
}
