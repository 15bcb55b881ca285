package disk

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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
// device d: BLKRRPART (on a loop device attached without partition
// scanning, turning it on first: LO_FLAGS_PARTSCAN), then
// BLKPG_ADD_PARTITION for each partition, as partx --add does, for a
// kernel whose parsers don't read the table (or a busy disk); a partition
// the kernel already found answers EBUSY, which is fine.
func AnnounceTable(d *File, t NewTable) error {
	if !d.IsBlockDevice() {
		return nil
	}
	rerr := rereadTable(d.Fd())
	if errors.Is(rerr, unix.EINVAL) {
		// A loop device attached without partition scanning (losetup
		// without -P) refuses both BLKRRPART and BLKPG until it is on.
		if err := enablePartScan(d); err == nil {
			rerr = nil
		}
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
		if rerr != nil {
			errs = append([]error{fmt.Errorf("BLKRRPART: %w", rerr)}, errs...)
		}
		return fmt.Errorf("telling the kernel about %s's new table: %w", d.Path(), errors.Join(errs...))
	}
	return nil
}

// zeroRange makes f's [off, off+n) read as zeros: a hole punched where
// the filesystem can, zeros written where it can't.
func zeroRange(f *os.File, off, n int64) error {
	if err := unix.Fallocate(int(f.Fd()), unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, off, n); err == nil {
		return nil
	}
	return writeZeros(f, off, n)
}

// nextData is the first data extent of f at or after pos, ending at most
// at limit (SEEK_DATA/SEEK_HOLE); start >= limit when there is none. A
// filesystem without those says all of [pos, limit) is data.
func nextData(f *os.File, pos, limit int64) (start, end int64, err error) {
	fd := int(f.Fd())
	start, err = unix.Seek(fd, pos, unix.SEEK_DATA)
	switch {
	case errors.Is(err, unix.ENXIO):
		return limit, limit, nil
	case err != nil:
		return pos, limit, nil
	case start >= limit:
		return limit, limit, nil
	}
	end, err = unix.Seek(fd, start, unix.SEEK_HOLE)
	if err != nil || end > limit {
		end = limit
	}
	return start, end, nil
}

// enablePartScan turns on partition scanning of a loop device attached
// without it (losetup without -P), which makes the kernel read its table;
// ENOTTY for a device that is no loop device.
func enablePartScan(d *File) error {
	fd := int(d.Fd())
	st, err := unix.IoctlLoopGetStatus64(fd)
	if err != nil {
		return err
	}
	if st.Flags&unix.LO_FLAGS_PARTSCAN != 0 {
		return errors.New("partition scanning is already on")
	}
	st.Flags |= unix.LO_FLAGS_PARTSCAN
	return unix.IoctlLoopSetStatus64(fd, st)
}

// makePartitionNode creates the block device node path for a partition
// the kernel knows (/sys/class/block/NAME/dev) when nothing (udev,
// devtmpfs) made it; false when the kernel doesn't know it (yet).
func makePartitionNode(path string) (bool, error) {
	b, err := os.ReadFile(filepath.Join("/sys/class/block", filepath.Base(path), "dev"))
	if err != nil {
		return false, nil
	}
	var maj, mnr uint32
	if _, err := fmt.Sscanf(strings.TrimSpace(string(b)), "%d:%d", &maj, &mnr); err != nil {
		return false, fmt.Errorf("reading the device number of %s: %w", path, err)
	}
	if err := unix.Mknod(path, unix.S_IFBLK|0o660, int(unix.Mkdev(maj, mnr))); err != nil && !errors.Is(err, unix.EEXIST) {
		return false, fmt.Errorf("creating partition node %s (%d:%d): %w", path, maj, mnr, err)
	}
	return true, nil
}
