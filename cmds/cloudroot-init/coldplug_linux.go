//go:build linux

package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"time"

	"github.com/u-root/u-root/pkg/kmodule"
	"golang.org/x/sys/unix"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
	"github.com/cloudroot/cloudroot/pkg/coldplug"
	"github.com/cloudroot/cloudroot/pkg/mdraid"
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
	b.assembleStorage(p)
	ctx, cancel := context.WithTimeout(context.Background(), coldplugWatch)
	go func() {
		defer cancel()
		c.Watch(ctx)
	}()
	go b.watchFirmware(coldplugWatch)
}

// assembleStorage starts the md arrays whose members are present (root on
// md RAID, degraded or not), then activates the LVM volume groups found
// (on disks or on those arrays) when the image carries lvm, so that the
// root's filesystem appears before the root is looked for.
func (b *boot) assembleStorage(p *kmodule.Prober) {
	load := func(m string) error { return p.Probe(m, "") }
	devs, err := bootenv.Env{}.List()
	if err != nil {
		b.log.Warn("listing block devices", "err", err)
		return
	}
	x := mdraid.Assembler{Load: load, Log: b.log}
	arrays, err := x.Assemble(devs)
	if err != nil {
		b.log.Warn("md RAID", "err", err)
	}
	if len(arrays) > 0 {
		if devs, err = (bootenv.Env{}).List(); err != nil {
			b.log.Warn("listing block devices", "err", err)
			return
		}
	}
	b.activateLVM(devs, load)
}

// watchFirmware reports// watchFirmware reports on the console, for d, the firmware files drivers
// asked the kernel for and the image lacks: the kernel logs "Direct
// firmware load for X failed" in /dev/kmsg (from the start of its buffer,
// so failures before /init are reported too).
func (b *boot) watchFirmware(d time.Duration) {
	f, err := os.OpenFile("/dev/kmsg", os.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		b.log.Debug("firmware watch: opening /dev/kmsg", "err", err)
		return
	}
	defer f.Close()
	end := time.Now().Add(d)
	buf := make([]byte, 8192)
	seen := map[string]bool{}
	for time.Now().Before(end) {
		if err := f.SetReadDeadline(time.Now().Add(500 * time.Millisecond)); err != nil {
			return // not pollable: give up rather than block PID 1's goroutine forever
		}
		n, err := f.Read(buf)
		switch {
		case errors.Is(err, os.ErrDeadlineExceeded):
			continue
		case errors.Is(err, unix.EPIPE):
			continue // overwritten records: the next read goes on
		case err != nil:
			return
		}
		if fw, ok := coldplug.ParseFirmwareFailure(string(buf[:n])); ok && !seen[fw.File+fw.Device] {
			seen[fw.File+fw.Device] = true
			b.log.Warn(fw.String())
		}
	}
}
