//go:build !linux

package disk

import (
	"errors"
	"os"
)

func blockSectorSize(f *os.File) (int, error) { return 0, errors.ErrUnsupported }

// TellKernel updates the kernel's partition table; only Linux is supported,
// image files need nothing.
func TellKernel(d *File, pno int, start, length int64) error {
	if !d.IsBlockDevice() {
		return nil
	}
	return errors.ErrUnsupported
}

// RereadTable asks the kernel to re-read the partition table.
func RereadTable(d *File) error {
	if !d.IsBlockDevice() {
		return nil
	}
	return errors.ErrUnsupported
}

func lockDevice(d *File) error { return nil }

// AnnounceTable tells the kernel about a new table (Linux only).
func AnnounceTable(d *File, t NewTable) error {
	if !d.IsBlockDevice() {
		return nil
	}
	return errors.ErrUnsupported
}
