package main

import (
	"fmt"
	"slices"
)

// Filesystem magic numbers (statfs f_type) of an initramfs's root: the
// kernel unpacks the cpio into rootfs, which is ramfs, or tmpfs when the
// kernel has CONFIG_TMPFS and no root= was given to it.
const (
	ramfsMagic = 0x858458f6
	tmpfsMagic = 0x01021994
)

// testFlag lets the boot run outside an initramfs, for a test harness
// that gives it a private mount namespace; it is refused in the host's
// mount namespace.
const testFlag = "--test-private-namespace"

// action is what the guard lets cloudroot-init do.
type action int

const (
	actBoot    action = iota // run the boot
	actUsage                 // print usage, exit 0
	actVersion               // print the version, exit 0
	actRefuse                // print why, exit 1, touch nothing
)

// where is what the guard knows of the place cloudroot-init runs in.
type where struct {
	PID    int
	RootFS int64    // statfs("/").Type
	Args   []string // os.Args[1:]
	// OwnMntNS and InitMntNS are the targets of /proc/self/ns/mnt and
	// /proc/1/ns/mnt ("" when unreadable).
	OwnMntNS, InitMntNS string
}

// guard decides, before anything is mounted, whether cloudroot-init may
// boot. PID 1 on an initramfs root (ramfs or tmpfs) boots, whatever its
// arguments: the kernel hands init the command line words it does not
// know, and PID 1 exiting is a kernel panic. Anywhere else --help/-h and
// --version print and exit 0; the test flag boots only in a mount
// namespace that is not PID 1's; everything else is refused — run by hand
// on a live system, the early mounts would hide the host's /run and /tmp.
func guard(w where) (action, string) {
	initramfs := w.RootFS == ramfsMagic || w.RootFS == tmpfsMagic
	if w.PID == 1 && initramfs {
		return actBoot, ""
	}
	for _, a := range w.Args {
		switch a {
		case "-h", "-help", "--help":
			return actUsage, ""
		case "-version", "--version":
			return actVersion, ""
		}
	}
	if slices.Contains(w.Args, testFlag) {
		if w.OwnMntNS == "" || w.InitMntNS == "" || w.OwnMntNS == w.InitMntNS {
			return actRefuse, testFlag + " needs a private mount namespace (unshare -m); this is PID 1's"
		}
		return actBoot, ""
	}
	if w.PID != 1 {
		return actRefuse, fmt.Sprintf("not PID 1 (pid %d): cloudroot-init is the initramfs's /init and would mount over this system's /run and /tmp", w.PID)
	}
	return actRefuse, fmt.Sprintf("PID 1 but / is not an initramfs (filesystem type %#x): refusing to mount over it", w.RootFS)
}

const usage = `usage: cloudroot-init [--help | --version]

cloudroot-init is the /init (PID 1) of cloudroot's initramfs: it mounts the
early filesystems, finds the root, provisions it the way cloud-init's
init-local and init stages do, and switch_roots into the target's init.
It runs only as PID 1 of an initramfs; anywhere else it prints this and
does nothing. ` + testFlag + ` runs the boot outside an initramfs
for a test harness, only in a private mount namespace (unshare -m).
`
