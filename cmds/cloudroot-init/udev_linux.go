package main

import (
	"golang.org/x/sys/unix"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
	"github.com/cloudroot/cloudroot/pkg/udevdb"
)

// handOverUdev writes the udev hand-off for the probed block devices
// (writeUdev) into the initramfs's /dev and /run. A failure is logged and
// the boot goes on: the booted system's udevd makes it all again.
func (b *boot) handOverUdev() {
	// Nothing here may end PID 1: a panic is a failed hand-off.
	defer func() {
		if r := recover(); r != nil {
			b.log.Warn("udev hand-off failed; the booted system's udev will make it", "panic", r)
		}
	}()
	if len(b.devs) == 0 {
		return // a live root: no disk was looked at
	}
	// Probed again: the init stage may have made filesystems (fs_setup)
	// or partitions (disk_setup) since the root was found, and a stale
	// UUID would name a link udev removes only at its coldplug.
	devs, err := bootenv.Env{}.List()
	if err != nil {
		b.log.Warn("udev hand-off: listing block devices again; using the earlier list", "err", err)
		devs = b.devs
	}
	// udevd stamps I: with now(CLOCK_MONOTONIC) in microseconds.
	var usec uint64
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err == nil {
		usec = uint64(ts.Sec)*1e6 + uint64(ts.Nsec)/1e3
	}
	entries := udevdb.Entries(devs, usec)
	n, err := writeUdev("/dev", "/run", entries)
	if err != nil {
		b.log.Warn("udev hand-off incomplete; the booted system's udev will finish it", "err", err)
	}
	for _, e := range entries {
		b.log.Debug("udev hand-off", "device", "/dev/"+e.Node, "id", e.ID, "links", len(e.Links))
	}
	b.log.Info("udev database handed over", "devices", n)
}
