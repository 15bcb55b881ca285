// Package media reads the filesystem on a seed volume — a NoCloud cidata
// disk, a config-2 drive, an OVF, OpenNebula, RbxCloud, AltCloud, IBM or
// Azure CD-ROM — from a block device or an image file, with no kernel
// driver and no mount. Whoever launched the machine wrote the volume, so
// every byte of it is untrusted; this package is the one reader of such
// volumes, and the bounds live here, not in the datasources.
//
// The contract:
//
//   - Formats: FAT12/16/32 and ISO9660 (Rock Ridge, Joliet), read with
//     go-diskfs's directory and file code after this package has checked
//     every on-disk number go-diskfs sizes an allocation or a loop from;
//     UDF (package media/udf) when Limits.UDF is set. Nothing else:
//     go-diskfs's squashfs and ext4 readers are never reached.
//   - FAT: the boot sector must describe a volume inside the device, with
//     at most Limits.Clusters clusters; the FAT is decoded here (the
//     table go-diskfs walks is ours), every cluster chain in it must end
//     (a loop anywhere is ErrCorrupt), and every directory reachable from
//     the root is at most Limits.Dir bytes, Limits.Depth deep, with at
//     most Limits.Nodes entries in all.
//   - ISO9660: the volume descriptor set ends within 64 descriptors; the
//     path tables, every directory (found from the root of each tree and
//     from the path tables, followed once each) and every Rock Ridge
//     continuation area are at most Limits.Dir bytes, inside the device;
//     continuation chains end within 16 hops; the same node and depth
//     bounds.
//   - Every read of the device, at open and later through the returned
//     fs.FS, counts against Limits.Read bytes and Limits.Time from the
//     open; past either, reads fail with ErrBudget, so nothing that
//     reads can loop for longer.
//   - A panic in any reader, at open or in any later call through the
//     returned fs.FS, is an error wrapping ErrCorrupt and naming the
//     device: a failure of that source, never the end of the process.
package media

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	"github.com/cloudroot/cloudroot/pkg/media/udf"
)

// Errors callers may branch on.
var (
	// ErrCorrupt: the volume's structures break a bound or a reader
	// panicked on them.
	ErrCorrupt = errors.New("corrupt or hostile volume")
	// ErrBudget: the volume's read budget (bytes or time) is spent.
	ErrBudget = errors.New("volume read budget spent")
	// ErrUnknown: no supported filesystem on the volume.
	ErrUnknown = errors.New("no ISO9660, FAT or UDF filesystem")
)

// Default bounds (Limits' zero values).
const (
	// DefaultRead is the bytes one opened volume may read from its device:
	// a 64 MiB seed (datasource.MaxFileSize) read up to four times.
	DefaultRead = 256 << 20
	// DefaultTime bounds one opened volume's reads, from the open.
	DefaultTime = 30 * time.Second
	// DefaultDir bounds one directory (FAT chain or ISO9660 extent) and
	// one ISO9660 path table.
	DefaultDir = 1 << 20
	// DefaultNodes bounds the directory entries checked at open.
	DefaultNodes = 1 << 18
	// DefaultDepth bounds directory nesting.
	DefaultDepth = 64
	// DefaultClusters bounds a FAT volume's clusters (the decoded table
	// takes 4 bytes each, its check 5 more).
	DefaultClusters = 1 << 21
)

// Limits bound one opened volume. The zero value means the defaults.
type Limits struct {
	Read     int64
	Time     time.Duration
	Dir      int64
	Nodes    int
	Depth    int
	Clusters int64
	// UDF reads a volume with a UDF recognition sequence as UDF (a
	// UDF/ISO9660 hybrid as UDF), as Azure's provisioning DVD needs.
	UDF bool
}

func (l Limits) resolve() Limits {
	def := func(v *int64, d int64) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&l.Read, DefaultRead)
	def(&l.Dir, DefaultDir)
	def(&l.Clusters, DefaultClusters)
	if l.Time <= 0 {
		l.Time = DefaultTime
	}
	if l.Nodes <= 0 {
		l.Nodes = DefaultNodes
	}
	if l.Depth <= 0 {
		l.Depth = DefaultDepth
	}
	return l
}

// Open opens the filesystem on the block device or image file at path,
// read-only; close releases it.
func Open(path string, lim Limits) (fsys fs.FS, close func(), err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("open %s: %w", path, err)
	}
	size, err := f.Seek(0, io.SeekEnd) // block devices Stat as size 0
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("open %s: %w", path, err)
	}
	fsys, err = Read(f, size, path, lim)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return fsys, func() { f.Close() }, nil
}

// Read reads the filesystem in r, size bytes long; name names the device
// in errors.
func Read(r io.ReaderAt, size int64, name string, lim Limits) (fsys fs.FS, err error) {
	lim = lim.resolve()
	dev := newDevice(r, size, name, lim)
	defer func() {
		if p := recover(); p != nil {
			fsys, err = nil, fmt.Errorf("reading %s: %w: reader panicked: %v", name, ErrCorrupt, p)
		}
	}()
	var udfErr error
	if lim.UDF {
		u, err := udf.Open(dev, size)
		if err == nil {
			return &guardFS{fsys: u, name: name}, nil
		}
		if !errors.Is(err, udf.ErrNotUDF) {
			udfErr = fmt.Errorf("reading %s as UDF: %w", name, err)
		}
	}
	inner, iso, err := readDiskfs(dev, lim)
	if err != nil {
		err = fmt.Errorf("reading %s: %w", name, err)
		if udfErr != nil {
			err = errors.Join(udfErr, err)
		}
		return nil, err
	}
	g := &guardFS{fsys: inner, name: name}
	if iso {
		g.maxDir = lim.Dir
	}
	return g, nil
}

// readDiskfs recognises FAT (first, as go-diskfs does) or ISO9660, checks
// it and opens it with go-diskfs; iso says which.
func readDiskfs(dev *device, lim Limits) (fsys fs.FS, iso bool, err error) {
	boot := make([]byte, 512)
	if _, err := dev.ReadAt(boot, 0); err != nil && !errors.Is(err, io.EOF) {
		return nil, false, err
	}
	if bpb, ok := parseBPB(boot); ok {
		fsys, err := openFAT(dev, bpb, lim)
		return fsys, false, err
	}
	if isISO9660(dev) {
		fsys, err := openISO(dev, lim)
		return fsys, true, err
	}
	if err := dev.spent(); err != nil {
		return nil, false, err
	}
	return nil, false, ErrUnknown
}

// corrupt is an ErrCorrupt error saying what broke a bound; when the cause
// among a is the spent budget, it is that ErrBudget error instead.
func corrupt(format string, a ...any) error {
	msg := fmt.Sprintf(format, a...)
	for _, v := range a {
		if err, ok := v.(error); ok && errors.Is(err, ErrBudget) {
			return fmt.Errorf("%s: %w", msg, err)
		}
	}
	return fmt.Errorf("%w: %s", ErrCorrupt, msg)
}
