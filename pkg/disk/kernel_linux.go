package disk

import (
	"errors"
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

func blockSectorSize(f *os.File) (int, error) {
	return unix.IoctlGetInt(int(f.Fd()), unix.BLKSSZGET)
}

// TellKernel makes the kernel's view of partition pno on the block device
// d match the table just written: BLKPG_RESIZE_PARTITION (works while the
// partition is mounted), falling back to re-reading the whole table
// (BLKRRPART, which fails with EBUSY when a partition is in use). start and
// length are in bytes. An image file needs nothing.
func TellKernel(d *File, pno int, start, length int64) error {
	if !d.IsBlockDevice() {
		return nil
	}
	if err := blkpgResize(d.Fd(), pno, start, length); err != nil {
		rerr := rereadTable(d.Fd())
		if rerr == nil {
			return nil
		}
		return fmt.Errorf("telling the kernel about %s partition %d: %w", d.Path(), pno, errors.Join(
			fmt.Errorf("BLKPG resize: %w", err), fmt.Errorf("BLKRRPART: %w", rerr)))
	}
	return nil
}

// RereadTable asks the kernel to re-read d's partition table (BLKRRPART);
// used after a new table is written to a disk none of whose partitions is
// in use.
func RereadTable(d *File) error {
	if !d.IsBlockDevice() {
		return nil
	}
	if err := rereadTable(d.Fd()); err != nil {
		return fmt.Errorf("re-reading the partition table of %s: %w", d.Path(), err)
	}
	return nil
}

func blkpgResize(fd uintptr, pno int, start, length int64) error {
	p := unix.BlkpgPartition{Start: start, Length: length, Pno: int32(pno)}
	arg := unix.BlkpgIoctlArg{
		Op:      unix.BLKPG_RESIZE_PARTITION,
		Datalen: int32(unsafe.Sizeof(p)),
		Data:    (*byte)(unsafe.Pointer(&p)),
	}
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, fd, unix.BLKPG, uintptr(unsafe.Pointer(&arg)))
	if errno != 0 {
		return errno
	}
	return nil
}

func rereadTable(fd uintptr) error {
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, fd, unix.BLKRRPART, 0)
	if errno != 0 {
		return errno
	}
	return nil
}

// lockDevice takes an exclusive BSD lock on the device node (released on
// close), which udev honours.
func lockDevice(d *File) error {
	return unix.Flock(int(d.Fd()), unix.LOCK_EX)
}

// AnnounceTable tells the kernel about a table just written to the block
// device d: BLKRRPART, else (a kernel without that table parser, or a busy
// disk) BLKPG_ADD_PARTITION for each partition, as partx --add does.
func AnnounceTable(d *File, t NewTable) error {
	if !d.IsBlockDevice() {
		return nil
	}
	rerr := rereadTable(d.Fd())
	if rerr == nil {
		return nil
	}
	ss := int64(d.SectorSize())
	if t.SectorSize != 0 {
		ss = int64(t.SectorSize)
	}
	var errs []error
	for i, p := range t.Partitions {
		part := unix.BlkpgPartition{Start: p.Start * ss, Length: p.Size * ss, Pno: int32(i + 1)}
		arg := unix.BlkpgIoctlArg{Op: unix.BLKPG_ADD_PARTITION, Datalen: int32(unsafe.Sizeof(part)), Data: (*byte)(unsafe.Pointer(&part))}
		if _, _, errno := unix.Syscall(unix.SYS_IOCTL, d.Fd(), unix.BLKPG, uintptr(unsafe.Pointer(&arg))); errno != 0 && errno != unix.EBUSY {
			errs = append(errs, fmt.Errorf("BLKPG add partition %d: %w", i+1, errno))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("telling the kernel about %s's new table: %w", d.Path(), errors.Join(append([]error{fmt.Errorf("BLKRRPART: %w", rerr)}, errs...)...))
	}
	return nil
}
