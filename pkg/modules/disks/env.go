package disks

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
	"github.com/cloudroot/cloudroot/pkg/disk"
	"github.com/cloudroot/cloudroot/pkg/modules"
)

// DiskEnv is how the disk modules (growpart, resizefs, disk_setup, mounts)
// reach the machine's block devices, which live outside the target root.
// The zero value is the running system: sysfs and /dev for the devices,
// /proc/self/mountinfo for what is mounted where. The target's root
// directory (Context.Root.Dir(), /sysroot in the initramfs) is looked up
// in the mount table to find the root device.
type DiskEnv struct {
	// RootDevice is the block device holding the target's root
	// ("/dev/vda1"); "" finds it in the mount table.
	RootDevice string
	// Block locates sysfs and the device nodes.
	Block bootenv.Env
	// MountInfo is the mount table to read ("" = /proc/self/mountinfo).
	MountInfo string
	// Devices lists the block devices (nil: Block.List()).
	Devices func() ([]bootenv.Device, error)
	// Grow grows a partition (nil: disk.GrowPath).
	Grow func(diskPath string, part int, o disk.GrowOptions) (disk.Result, error)
	// Background runs f without waiting for it (resize_rootfs: noblock);
	// nil: a goroutine.
	Background func(f func())
	// MemTotal returns the machine's memory in bytes for swap size "auto"
	// (nil: /proc/meminfo).
	MemTotal func() (int64, error)
	// FSAvail returns the free bytes of the filesystem holding a host path
	// (nil: statfs).
	FSAvail func(hostPath string) (int64, error)
	// OpenDisk opens a disk for disk_setup (nil: disk.Open).
	OpenDisk func(path string, writable bool) (disk.Device, error)
}

func (e DiskEnv) devices() ([]bootenv.Device, error) {
	if e.Devices != nil {
		return e.Devices()
	}
	devs, err := e.Block.List()
	if errors.Is(err, fs.ErrNotExist) {
		// No sysfs (a chroot, some containers): no block device to act
		// on, as cloud-init finds none there.
		return nil, nil
	}
	return devs, err
}

func (e DiskEnv) mounts() ([]disk.Mount, error) {
	p := e.MountInfo
	if p == "" {
		p = disk.DefaultMountInfo
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, fmt.Errorf("reading the mount table: %w", err)
	}
	defer f.Close()
	return disk.ParseMountInfo(f)
}

func (e DiskEnv) locator() (disk.Locator, error) {
	devs, err := e.devices()
	if err != nil {
		return disk.Locator{}, fmt.Errorf("listing block devices: %w", err)
	}
	mounts, err := e.mounts()
	if err != nil {
		return disk.Locator{}, err
	}
	return disk.Locator{Devices: devs, Mounts: mounts}, nil
}

// locate resolves a growpart/resizefs device entry: a device path, else a
// mount point inside the target.
func (e DiskEnv) locate(c *modules.Context, l disk.Locator, entry string) (disk.Located, error) {
	if strings.HasPrefix(entry, "/dev/") {
		return l.ByPath(entry, nil)
	}
	if entry == "/" && e.RootDevice != "" {
		loc, err := l.ByPath(e.RootDevice, nil)
		if err != nil {
			return loc, err
		}
		loc.MountPoint = c.Root.Dir()
		if m, ok := disk.FindMount(l.Mounts, c.Root.Dir()); ok {
			loc.FSType = m.FSType
		}
		return loc, nil
	}
	return l.ByMountPoint(filepath.Join(c.Root.Dir(), entry))
}
