package disk

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// Device is what Grow and the table writers work on: a block device, an
// image file, or memory in tests.
type Device interface {
	io.ReaderAt
	io.WriterAt
	// Size is the device's size in bytes.
	Size() int64
}

// SectorSizer is implemented by devices that know their logical block size.
type SectorSizer interface {
	SectorSize() int
}

// Syncer is implemented by devices whose writes can be made durable.
type Syncer interface {
	Sync() error
}

// DefaultSectorSize is the logical block size assumed for image files and
// devices that don't say.
const DefaultSectorSize = 512

// File is a Device backed by an open file: a block device or an image.
type File struct {
	f          *os.File
	path       string
	size       int64
	sectorSize int
	block      bool
}

var _ Device = (*File)(nil)

// Open opens path (a block device or an image file) read-only, or
// read-write when writable is set. The size comes from seeking to the end,
// which works for both; the sector size of a block device from the kernel
// (BLKSSZGET), DefaultSectorSize otherwise.
func Open(path string, writable bool) (*File, error) {
	flag := os.O_RDONLY
	if writable {
		flag = os.O_RDWR
	}
	f, err := os.OpenFile(path, flag, 0)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", path, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("stat %s: %w", path, err)
	}
	d := &File{f: f, path: path, sectorSize: DefaultSectorSize, block: fi.Mode()&os.ModeDevice != 0 && fi.Mode()&os.ModeCharDevice == 0}
	if fi.Mode().IsDir() {
		f.Close()
		return nil, fmt.Errorf("opening %s: is a directory", path)
	}
	size, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("size of %s: %w", path, err)
	}
	d.size = size
	if d.block {
		if ss, err := blockSectorSize(f); err == nil && ss > 0 {
			d.sectorSize = ss
		}
	}
	return d, nil
}

// Path is the path the device was opened with.
func (d *File) Path() string { return d.path }

// Size is the device size in bytes at open time.
func (d *File) Size() int64 { return d.size }

// SectorSize is the logical block size.
func (d *File) SectorSize() int { return d.sectorSize }

// IsBlockDevice reports whether the file is a block device node.
func (d *File) IsBlockDevice() bool { return d.block }

// ReadAt reads from the device.
func (d *File) ReadAt(p []byte, off int64) (int, error) { return d.f.ReadAt(p, off) }

// WriteAt writes to the device.
func (d *File) WriteAt(p []byte, off int64) (int, error) { return d.f.WriteAt(p, off) }

// Sync flushes writes to the device.
func (d *File) Sync() error { return d.f.Sync() }

// Fd is the file descriptor (for ioctls).
func (d *File) Fd() uintptr { return d.f.Fd() }

// Close closes the device.
func (d *File) Close() error { return d.f.Close() }

// readFull reads exactly len(p) bytes at off; a short read is an error.
func readFull(d io.ReaderAt, p []byte, off int64) error {
	n, err := d.ReadAt(p, off)
	if n == len(p) {
		return nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("reading %d bytes at offset %d: %w", len(p), off, err)
}

// writeFull writes p at off; a short write is an error.
func writeFull(d io.WriterAt, p []byte, off int64) error {
	n, err := d.WriteAt(p, off)
	if err != nil {
		return fmt.Errorf("writing %d bytes at offset %d: %w", len(p), off, err)
	}
	if n != len(p) {
		return fmt.Errorf("writing %d bytes at offset %d: short write (%d)", len(p), off, n)
	}
	return nil
}

func syncDevice(d Device) error {
	if s, ok := d.(Syncer); ok {
		return s.Sync()
	}
	return nil
}

func sectorSizeOf(d Device, override int) (int, error) {
	ss := override
	if ss == 0 {
		if s, ok := d.(SectorSizer); ok {
			ss = s.SectorSize()
		}
	}
	if ss == 0 {
		ss = DefaultSectorSize
	}
	if ss < 512 || ss > 65536 || ss&(ss-1) != 0 {
		return 0, fmt.Errorf("sector size %d: not a power of two in [512, 65536]", ss)
	}
	return ss, nil
}
