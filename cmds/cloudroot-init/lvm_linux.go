//go:build linux

package main

import (
	"context"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
)

// lvmProgram is Debian's lvm, packed with its libraries by
// cloudroot-mkinitramfs -program /usr/sbin/lvm.
const lvmProgram = "/usr/sbin/lvm"

// lvmConfig runs lvm without udev: libdevmapper makes the /dev/mapper
// nodes itself, no lock daemon, no monitoring daemon.
const lvmConfig = `devices { obtain_device_list_from_udev = 0 } activation { udev_sync = 0 udev_rules = 0 monitoring = 0 } global { use_lvmlockd = 0 }`

// activateLVM activates what the command line asks for (lvmRequest:
// rd.lvm.vg=, rd.lvm.lv=, rd.lvm=0; every volume group when none is given)
// if a physical volume is present and the image has lvm; each lvm run is
// bounded to 60 s and its output logged, and the device-mapper devices
// active afterwards are named on the console.
func (b *boot) activateLVM(devs []bootenv.Device, load func(string) error) {
	if !slices.ContainsFunc(devs, func(d bootenv.Device) bool { return d.FS.Type == bootenv.TypeLVM }) {
		return
	}
	req := parseLVMArgs(b.cmdline.All)
	if len(req.Bad) > 0 {
		b.log.Warn("LVM", "err", badLVError(req.Bad))
	}
	if req.Off {
		b.log.Info("LVM physical volumes found, not activated (rd.lvm=0)")
		return
	}
	if _, err := os.Stat(lvmProgram); err != nil {
		b.log.Warn("LVM physical volumes found, but this initramfs has no lvm (cloudroot-mkinitramfs -program /usr/sbin/lvm)")
		return
	}
	if err := load("dm_mod"); err != nil {
		b.log.Debug("dm_mod not loaded", "err", err)
	}
	for _, d := range []string{"/run/lvm", "/run/lock/lvm", "/etc/lvm"} {
		_ = os.MkdirAll(d, 0o700)
	}
	start := time.Now()
	failed := false
	var outputs []string
	for _, args := range req.commands(lvmConfig) {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		out, err := exec.CommandContext(ctx, lvmProgram, args...).CombinedOutput()
		cancel()
		text := strings.TrimSpace(string(out))
		if err != nil {
			failed = true
			b.log.Warn("LVM activation failed", "argv", strings.Join(args, " "), "err", err, "output", text)
			continue
		}
		if text != "" {
			outputs = append(outputs, text)
		}
	}
	if failed {
		return
	}
	attrs := []any{"request", req.String(), "active", strings.Join(dmNames("/sys/class/block"), ",")}
	if len(outputs) > 0 {
		attrs = append(attrs, "output", strings.Join(outputs, "; "))
	}
	b.log.Info("LVM volume groups activated", append(attrs, "duration", time.Since(start).Seconds())...)
}
