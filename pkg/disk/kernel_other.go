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

func zeroRange(f *os.File, off, n int64) error { return writeZeros(f, off, n) }

// nextData says all of [pos, limit) is data (no SEEK_DATA here).
func nextData(f *os.File, pos, limit int64) (start, end int64, err error) {
	return pos, limit, nil
}

func makePartitionNode(path string) (bool, error) { return false, nil }
