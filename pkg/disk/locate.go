package disk

// Finding the disk and partition behind a mount point or a device path,
// from the block device list (bootenv) and the mount table: what growpart
// and resizefs need for "/" without udev's /dev/block links.

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
)

// ErrNotFound means the mount point or device is not there.
var ErrNotFound = errors.New("not found")

// ErrNotPartition means the device is a whole disk (or a device-mapper or
// other virtual device), so there is no partition to grow.
var ErrNotPartition = errors.New("not a partition")

// Located is a block device found for a mount point or a path.
type Located struct {
	Device     string // /dev/vda1
	Disk       string // /dev/vda ("" when Device is not a partition)
	Partition  int    // 0 when Device is not a partition
	FSType     string // from the mount table, else from the superblock
	MountPoint string // host path, when found by mount point
}

// Locator answers from a snapshot of the devices and mounts.
type Locator struct {
	Devices []bootenv.Device
	Mounts  []Mount
}

func (l Locator) located(d bootenv.Device) Located {
	loc := Located{Device: d.Path, FSType: d.FS.Type}
	if d.Partition && d.Parent != "" {
		loc.Disk = filepath.Join(filepath.Dir(d.Path), d.Parent)
		loc.Partition = d.PartNumber
	}
	return loc
}

// ByMountPoint finds the device mounted at mp (a host path).
func (l Locator) ByMountPoint(mp string) (Located, error) {
	mp = filepath.Clean(mp)
	m, ok := FindMount(l.Mounts, mp)
	if !ok {
		return Located{}, fmt.Errorf("mount point %s: %w", mp, ErrNotFound)
	}
	for _, d := range l.Devices {
		if d.Major == m.Major && d.Minor == m.Minor {
			loc := l.located(d)
			loc.MountPoint = mp
			if m.FSType != "" {
				loc.FSType = m.FSType
			}
			return loc, nil
		}
	}
	return Located{MountPoint: mp, FSType: m.FSType, Device: m.Source},
		fmt.Errorf("mount point %s: device %d:%d (%s, %s) is not a known block device: %w", mp, m.Major, m.Minor, m.Source, m.FSType, ErrNotFound)
}

// ByPath finds the device at path (/dev/vda1, or a link such as
// /dev/disk/by-label/x that resolves to one). resolve follows links (nil:
// filepath.EvalSymlinks).
func (l Locator) ByPath(path string, resolve func(string) (string, error)) (Located, error) {
	if resolve == nil {
		resolve = filepath.EvalSymlinks
	}
	real := path
	if r, err := resolve(path); err == nil {
		real = r
	}
	name := filepath.Base(real)
	for _, d := range l.Devices {
		if d.Path == real || d.Path == path || d.Name == name && strings.HasPrefix(real, "/dev/") {
			loc := l.located(d)
			for _, m := range l.Mounts {
				if m.Major == d.Major && m.Minor == d.Minor {
					loc.MountPoint, loc.FSType = m.MountPoint, m.FSType
					break
				}
			}
			return loc, nil
		}
	}
	return Located{}, fmt.Errorf("device %s: %w", path, ErrNotFound)
}
