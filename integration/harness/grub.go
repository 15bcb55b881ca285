package harness

// Kernel arguments for a disk that boots through its own GRUB (DiskBoot):
// QEMU's -append has no effect there, so a test that needs an argument
// (cloudroot.hostkeys=defer, ...) adds it to the linux lines of the disk
// copy's /boot/grub/grub.cfg before the boot, as an admin editing the menu
// would. The guest's update-grub (after a kernel package) rewrites the
// file from /etc/default/grub and drops the arguments again.

import (
	"fmt"
	"strings"
)

// GRUBConfigPath is where the Debian image's GRUB reads its menu.
const GRUBConfigPath = "/boot/grub/grub.cfg"

// AppendGRUBCmdline adds args to every kernel line of GRUBConfigPath in the
// root filesystem of the disk image at disk (a copy QEMU is not running on).
func AppendGRUBCmdline(disk string, args ...string) error {
	if len(args) == 0 {
		return nil
	}
	im, err := OpenImage(disk)
	if err != nil {
		return err
	}
	cfg, err := im.ReadFile(GRUBConfigPath)
	if err != nil {
		return fmt.Errorf("adding kernel arguments: %w", err)
	}
	out, n := appendLinuxArgs(string(cfg), args)
	if n == 0 {
		return fmt.Errorf("adding kernel arguments: %s of %s has no linux line", GRUBConfigPath, disk)
	}
	return im.WriteFile(GRUBConfigPath, []byte(out))
}

// appendLinuxArgs appends args to each GRUB `linux` (or `linuxefi`,
// `linux16`) command of cfg and reports how many it changed.
func appendLinuxArgs(cfg string, args []string) (string, int) {
	lines := strings.SplitAfter(cfg, "\n")
	n := 0
	for i, l := range lines {
		body := strings.TrimRight(l, "\n")
		switch f := strings.Fields(body); {
		case len(f) < 2:
			continue
		case f[0] == "linux", f[0] == "linuxefi", f[0] == "linux16":
			lines[i] = strings.TrimRight(body, " \t") + " " + strings.Join(args, " ") + l[len(body):]
			n++
		}
	}
	return strings.Join(lines, ""), n
}
