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

// activateLVM runs `lvm vgchange -ay --sysinit` (only the volume groups
// rd.lvm.vg= names, when given) if a physical volume is present and the
// image has lvm; bounded to 60 s, its output logged.
func (b *boot) activateLVM(devs []bootenv.Device, load func(string) error) {
	if !slices.ContainsFunc(devs, func(d bootenv.Device) bool { return d.FS.Type == bootenv.TypeLVM }) {
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
	args := []string{"vgchange", "-ay", "--sysinit", "--config", lvmConfig}
	if vgs, ok := b.cmdline.Get("rd.lvm.vg"); ok {
		args = append(args, strings.Split(vgs, ",")...)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	start := time.Now()
	out, err := exec.CommandContext(ctx, lvmProgram, args...).CombinedOutput()
	text := strings.TrimSpace(string(out))
	if err != nil {
		b.log.Warn("LVM activation failed", "argv", strings.Join(args, " "), "err", err, "output", text)
		return
	}
	b.log.Info("LVM volume groups activated", "output", text, "duration", time.Since(start).Seconds())
}
