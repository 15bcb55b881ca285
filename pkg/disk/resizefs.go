package disk

// Filesystem resizers: which command grows a filesystem of a given type to
// fill its (already grown) device, online. Commands run through a Runner —
// in cloudroot a target.Root, so in the initramfs the target's own tools
// run chrooted in /sysroot (with /dev, /proc and /sys bound in), in the
// agent they run on /, and tests record them.

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/target"
)

// Runner runs a command; *target.Root is one.
type Runner interface {
	Run(ctx context.Context, cmd target.Cmd) error
}

var _ Runner = (*target.Root)(nil)

// ErrUnsupportedFS means no resizer knows the filesystem type.
var ErrUnsupportedFS = errors.New("unsupported filesystem")

// Resizer grows one kind of filesystem.
type Resizer interface {
	// Command is the argv that grows the filesystem on device, mounted at
	// mountpoint (both as seen where the command runs).
	Command(device, mountpoint string) []string
}

// Ext grows ext2/3/4 with resize2fs on the device (online when mounted).
type Ext struct{}

// XFS grows XFS with xfs_growfs on the mount point (XFS only grows mounted).
type XFS struct{}

// Btrfs grows btrfs with `btrfs filesystem resize max` on the mount point.
type Btrfs struct{}

func (Ext) Command(device, _ string) []string     { return []string{"resize2fs", device} }
func (XFS) Command(_, mountpoint string) []string { return []string{"xfs_growfs", mountpoint} }
func (Btrfs) Command(_, mountpoint string) []string {
	return []string{"btrfs", "filesystem", "resize", "max", mountpoint}
}

var (
	_ Resizer = Ext{}
	_ Resizer = XFS{}
	_ Resizer = Btrfs{}
)

// ResizerFor picks the resizer for a filesystem type (blkid's TYPE or
// /proc/self/mountinfo's fstype).
func ResizerFor(fstype string) (Resizer, error) {
	switch strings.ToLower(fstype) {
	case "ext2", "ext3", "ext4", "ext4dev":
		return Ext{}, nil
	case "xfs":
		return XFS{}, nil
	case "btrfs":
		return Btrfs{}, nil
	}
	return nil, fmt.Errorf("filesystem %q: %w", fstype, ErrUnsupportedFS)
}

// ResizeFS grows the filesystem of type fstype on device, mounted at
// mountpoint, by running its resizer through run.
func ResizeFS(ctx context.Context, run Runner, fstype, device, mountpoint string, cmd target.Cmd) error {
	rz, err := ResizerFor(fstype)
	if err != nil {
		return fmt.Errorf("resizing %s on %s: %w", fstype, device, err)
	}
	cmd.Argv = rz.Command(device, mountpoint)
	if err := run.Run(ctx, cmd); err != nil {
		return fmt.Errorf("resizing %s on %s (mounted at %s): %w", fstype, device, mountpoint, err)
	}
	return nil
}
