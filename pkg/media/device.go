package media

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync/atomic"
	"time"

	"github.com/diskfs/go-diskfs/backend"
)

// device is the volume as every reader sees it (go-diskfs's
// backend.Storage, an io.ReaderAt for UDF and the checks here): read-only,
// each read counted against the byte and time budget.
type device struct {
	r        io.ReaderAt
	size     int64
	name     string
	limit    int64
	deadline time.Time
	read     atomic.Int64
	pos      atomic.Int64
}

var _ backend.Storage = (*device)(nil)

func newDevice(r io.ReaderAt, size int64, name string, lim Limits) *device {
	return &device{r: r, size: size, name: name, limit: lim.Read, deadline: time.Now().Add(lim.Time)}
}

// spent is ErrBudget when the budget is spent, else nil.
func (d *device) spent() error {
	if n := d.read.Load(); n > d.limit {
		return fmt.Errorf("%s: %w: more than %d bytes read", d.name, ErrBudget, d.limit)
	}
	if time.Now().After(d.deadline) {
		return fmt.Errorf("%s: %w: reading for longer than allowed", d.name, ErrBudget)
	}
	return nil
}

// ReadAt reads within the device, counting the bytes asked for.
func (d *device) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("%s: read at negative offset %d", d.name, off)
	}
	if off >= d.size {
		return 0, io.EOF
	}
	want := p
	if rest := d.size - off; int64(len(want)) > rest {
		want = want[:rest]
	}
	d.read.Add(int64(len(want)))
	if err := d.spent(); err != nil {
		return 0, err
	}
	n, err := d.r.ReadAt(want, off)
	if err == nil && len(want) < len(p) {
		err = io.EOF
	}
	return n, err
}

// Read reads at the current position (fs.File, for go-diskfs).
func (d *device) Read(p []byte) (int, error) {
	n, err := d.ReadAt(p, d.pos.Load())
	d.pos.Add(int64(n))
	return n, err
}

// Seek sets the position Read reads at.
func (d *device) Seek(off int64, whence int) (int64, error) {
	switch whence {
	case io.SeekCurrent:
		off += d.pos.Load()
	case io.SeekEnd:
		off += d.size
	}
	if off < 0 {
		return 0, errors.New("seek before the start")
	}
	d.pos.Store(off)
	return off, nil
}

// Stat describes the device as a read-only file of its size.
func (d *device) Stat() (fs.FileInfo, error) { return devInfo{d}, nil }

// Close does nothing: Open's caller closes the file.
func (d *device) Close() error { return nil }

// Sys refuses: no ioctl on an untrusted volume.
func (d *device) Sys() (*os.File, error) { return nil, backend.ErrNotSuitable }

// Writable refuses: volumes are read-only.
func (d *device) Writable() (backend.WritableFile, error) {
	return nil, backend.ErrIncorrectOpenMode
}

// Path is the device's name.
func (d *device) Path() string { return d.name }

type devInfo struct{ d *device }

func (i devInfo) Name() string       { return i.d.name }
func (i devInfo) Size() int64        { return i.d.size }
func (i devInfo) Mode() fs.FileMode  { return 0o444 }
func (i devInfo) ModTime() time.Time { return time.Time{} }
func (i devInfo) IsDir() bool        { return false }
func (i devInfo) Sys() any           { return nil }

// readFull reads n bytes at off, or fails (a short read is
// io.ErrUnexpectedEOF).
func (d *device) readFull(off int64, n int) ([]byte, error) {
	b := make([]byte, n)
	got, err := d.ReadAt(b, off)
	if got == n {
		return b, nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return nil, fmt.Errorf("reading %d bytes at %d: %w", n, off, err)
}
