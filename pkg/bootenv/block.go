package bootenv

// Block devices as the initramfs sees them without udev: sysfs for the
// list, the device nodes for superblocks and partition tables.
//
// Contract:
//   - List walks <SysRoot>/class/block: `dev` (major:minor), `size` (512-byte
//     sectors whatever the logical block size), `partition` (present and
//     holding the number for partitions), `removable` (disks only;
//     partitions inherit it), `ro`. A partition's parent is the directory
//     its sysfs entry resolves into; where the tree has no symlinks (tests),
//     the disk whose name prefixes the partition's ("vda"+"1",
//     "nvme0n1"+"p1").
//   - ram*, zram* and zero-sized loop* devices are skipped. Everything else
//     is listed, even when its node can't be opened: an empty CD-ROM gives
//     ENOMEDIUM, recorded in Device.Err (and NoMedium) rather than failing
//     the list.
//   - Every device node <DevRoot>/<name> is opened read-only and probed for a
//     filesystem; disks are also probed for a partition table, and each
//     partition takes PARTUUID/PARTLABEL from its parent's table entry with
//     the same number.
//   - The list is sorted by name.
//   - WaitFor and Settle poll and are always bounded by their context
//     (Settle also by max); on timeout they return the last list with an
//     error wrapping the context's.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Device is one block device or partition.
type Device struct {
	Name       string `json:"name"` // vda1
	Path       string `json:"path"` // <DevRoot>/vda1
	Major      int    `json:"major"`
	Minor      int    `json:"minor"`
	Size       int64  `json:"size"` // bytes
	Partition  bool   `json:"partition,omitempty"`
	Parent     string `json:"parent,omitempty"` // the disk's Name, for partitions
	PartNumber int    `json:"partNumber,omitempty"`
	Removable  bool   `json:"removable,omitempty"`
	ReadOnly   bool   `json:"readOnly,omitempty"`

	FS        FS     `json:"fs"`
	PartUUID  string `json:"partUUID,omitempty"`  // from the parent's partition table
	PartLabel string `json:"partLabel,omitempty"` // GPT partition name
	PTType    string `json:"ptType,omitempty"`    // disks: "gpt", "dos" or ""
	// DMName is a device-mapper device's name (dm/name: "vg0-root"), which
	// /dev/mapper/<DMName> names.
	DMName string `json:"dmName,omitempty"`
	PTUUID string `json:"ptUUID,omitempty"` // disks: the table's UUID

	// Err records why the device couldn't be probed (open or read
	// failure); the other fields are still valid.
	Err      string `json:"error,omitempty"`
	NoMedium bool   `json:"noMedium,omitempty"` // the open failed with ENOMEDIUM (empty CD/floppy drive)
}

// String describes the device for logs and "root not found" messages.
func (d Device) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%d:%d, %d bytes", d.Name, d.Major, d.Minor, d.Size)
	if d.FS.Type != "" {
		fmt.Fprintf(&b, ", %s", d.FS.Type)
	}
	if d.FS.Label != "" {
		fmt.Fprintf(&b, " LABEL=%q", d.FS.Label)
	}
	if d.FS.UUID != "" {
		fmt.Fprintf(&b, " UUID=%s", d.FS.UUID)
	}
	if d.PartUUID != "" {
		fmt.Fprintf(&b, " PARTUUID=%s", d.PartUUID)
	}
	if d.PartLabel != "" {
		fmt.Fprintf(&b, " PARTLABEL=%q", d.PartLabel)
	}
	if d.PTType != "" {
		fmt.Fprintf(&b, " PTTYPE=%s", d.PTType)
	}
	if d.Err != "" {
		fmt.Fprintf(&b, ", error: %s", d.Err)
	}
	b.WriteByte(')')
	return b.String()
}

// DefaultDevRoot is where device nodes live.
const DefaultDevRoot = "/dev"

// SettlePoll is how often Settle rescans.
const SettlePoll = 20 * time.Millisecond

// Env locates sysfs and the device nodes. The zero value is the running
// system.
type Env struct {
	SysRoot string // default DefaultSysRoot
	DevRoot string // default DefaultDevRoot
}

func (e Env) sysRoot() string {
	if e.SysRoot == "" {
		return DefaultSysRoot
	}
	return e.SysRoot
}

func (e Env) devRoot() string {
	if e.DevRoot == "" {
		return DefaultDevRoot
	}
	return e.DevRoot
}

func (e Env) classDir() string { return filepath.Join(e.sysRoot(), "class", "block") }

// List enumerates and probes the block devices.
func (e Env) List() ([]Device, error) {
	devs, err := e.scan()
	if err != nil {
		return nil, err
	}
	e.probe(devs)
	return devs, nil
}

// skip reports whether a device is never a root or seed candidate.
func skip(name string, size int64) bool {
	return strings.HasPrefix(name, "ram") || strings.HasPrefix(name, "zram") ||
		(strings.HasPrefix(name, "loop") && size == 0)
}

// scan reads sysfs only (no device is opened).
func (e Env) scan() ([]Device, error) {
	dir := e.classDir()
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("listing block devices: %w", err)
	}
	var devs []Device
	for _, ent := range ents {
		name := ent.Name()
		d, err := e.readSys(filepath.Join(dir, name), name)
		if err != nil {
			d.Err = err.Error()
		}
		if skip(name, d.Size) {
			continue
		}
		devs = append(devs, d)
	}
	slices.SortFunc(devs, func(a, b Device) int { return strings.Compare(a.Name, b.Name) })
	resolveParents(devs)
	return devs, nil
}

// readSys fills a Device from its sysfs directory.
func (e Env) readSys(dir, name string) (Device, error) {
	d := Device{Name: name, Path: filepath.Join(e.devRoot(), name)}
	var errs []error
	if s, err := readTrim(filepath.Join(dir, "dev")); err != nil {
		errs = append(errs, err)
	} else if maj, min, ok := parseMajMin(s); ok {
		d.Major, d.Minor = maj, min
	} else {
		errs = append(errs, fmt.Errorf("%s: bad dev %q", filepath.Join(dir, "dev"), s))
	}
	if n, err := readInt(filepath.Join(dir, "size")); err != nil {
		errs = append(errs, err)
	} else if n > 0 && n < 1<<54 {
		d.Size = n * 512
	}
	if n, err := readInt(filepath.Join(dir, "partition")); err == nil {
		d.Partition, d.PartNumber = true, int(n)
	}
	if n, err := readInt(filepath.Join(dir, "removable")); err == nil {
		d.Removable = n != 0
	}
	if dm, err := readTrim(filepath.Join(dir, "dm", "name")); err == nil {
		d.DMName = dm
	}
	if n, err := readInt(filepath.Join(dir, "ro")); err == nil {
		d.ReadOnly = n != 0
	}
	if d.Partition {
		// Real sysfs: class/block/vda1 -> ../../devices/.../block/vda/vda1.
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			parent := filepath.Dir(real)
			if _, err := os.Stat(filepath.Join(parent, "dev")); err == nil {
				d.Parent = filepath.Base(parent)
			}
		}
	}
	return d, errors.Join(errs...)
}

// resolveParents fills Parent by name for partitions whose sysfs entry had
// no symlink structure, and lets partitions inherit removable.
func resolveParents(devs []Device) {
	byName := make(map[string]int, len(devs))
	for i, d := range devs {
		byName[d.Name] = i
	}
	for i := range devs {
		d := &devs[i]
		if !d.Partition {
			continue
		}
		if d.Parent == "" {
			best := ""
			for _, c := range devs {
				if c.Partition || len(c.Name) <= len(best) || !strings.HasPrefix(d.Name, c.Name) {
					continue
				}
				rest := strings.TrimPrefix(d.Name[len(c.Name):], "p")
				if _, err := strconv.Atoi(rest); err == nil {
					best = c.Name
				}
			}
			d.Parent = best
		}
		if j, ok := byName[d.Parent]; ok && devs[j].Removable {
			d.Removable = true
		}
	}
}

func readTrim(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

func readInt(path string) (int64, error) {
	s, err := readTrim(path)
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	return n, nil
}

// probe opens every device node: tables for disks first, then filesystems,
// then partitions take their entries from the parent's table.
func (e Env) probe(devs []Device) {
	tables := make(map[string]Table)
	for i := range devs {
		d := &devs[i]
		var errs []error
		if d.Err != "" {
			errs = append(errs, errors.New(d.Err))
		}
		if err := e.probeOne(d, tables); err != nil {
			errs = append(errs, err)
			d.NoMedium = noMedium(err)
		}
		if len(errs) > 0 {
			d.Err = errors.Join(errs...).Error()
		}
	}
	for i := range devs {
		d := &devs[i]
		if !d.Partition {
			continue
		}
		if p, ok := tables[d.Parent].Partition(d.PartNumber); ok {
			d.PartUUID, d.PartLabel = p.UUID, p.Name
		}
	}
}

func (e Env) probeOne(d *Device, tables map[string]Table) error {
	f, err := os.Open(d.Path)
	if err != nil {
		return fmt.Errorf("opening %s: %w", d.Path, err)
	}
	defer f.Close()
	size := d.Size
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
		size = fi.Size() // an image file standing in for the device
	}
	var errs []error
	if !d.Partition {
		ss := 0
		if n, err := readInt(filepath.Join(e.classDir(), d.Name, "queue", "logical_block_size")); err == nil {
			ss = int(n)
		}
		t, err := ProbeTable(f, size, ss)
		switch {
		case err == nil:
			tables[d.Name] = t
			d.PTType, d.PTUUID = t.Type, t.UUID
		case !errors.Is(err, ErrNoTable):
			errs = append(errs, fmt.Errorf("reading partition table of %s: %w", d.Path, err))
		}
	}
	fs, err := Probe(f, size)
	switch {
	case err == nil:
		d.FS = fs
	case !errors.Is(err, ErrNoFilesystem):
		errs = append(errs, fmt.Errorf("probing %s: %w", d.Path, err))
	}
	return errors.Join(errs...)
}

// Matches reports whether d is the device spec names. Label and PARTLABEL
// compare exactly, UUID and PARTUUID ignoring case; a path matches the
// device name under /dev, and /dev/disk/by-{label,uuid,partuuid,partlabel}
// paths match as their kind (other /dev/disk links need udev and never
// match).
func (spec RootSpec) Matches(d Device) bool {
	switch spec.Kind {
	case ByLabel:
		return d.FS.Label != "" && d.FS.Label == spec.Value
	case ByUUID:
		return d.FS.UUID != "" && strings.EqualFold(d.FS.UUID, spec.Value)
	case ByPartUUID:
		return d.PartUUID != "" && strings.EqualFold(d.PartUUID, spec.Value)
	case ByPartLabel:
		return d.PartLabel != "" && d.PartLabel == spec.Value
	case ByDevNum:
		// Major 0 is never a block device; 0:0 is what an unreadable dev
		// file leaves behind.
		return spec.Major != 0 && d.Major == spec.Major && d.Minor == spec.Minor
	case ByPath:
		if strings.HasPrefix(spec.Value, "/dev/disk/") {
			sub, err := ParseRoot(spec.Value)
			if err != nil || sub.Kind == ByPath {
				return false
			}
			return sub.Matches(d)
		}
		name, ok := strings.CutPrefix(spec.Value, "/dev/")
		if !ok {
			return spec.Value == d.Path
		}
		if dm, ok := strings.CutPrefix(name, "mapper/"); ok && d.DMName != "" {
			return dm == d.DMName
		}
		return name == d.Name
	}
	return false
}

// Find returns the first device (in list order) that spec names.
func Find(devs []Device, spec RootSpec) (Device, bool) {
	for _, d := range devs {
		if spec.Matches(d) {
			return d, true
		}
	}
	return Device{}, false
}

// SeedTypes are the filesystem types a seed volume (NoCloud cidata,
// ConfigDrive config-2) may have.
var SeedTypes = []string{"iso9660", "vfat"}

// FindLabel returns the first device with an iso9660 or vfat filesystem
// whose label is one of labels (compared exactly: pass "cidata", "CIDATA"
// for NoCloud, as ds-identify does).
func FindLabel(devs []Device, labels ...string) (Device, bool) {
	for _, d := range devs {
		if d.FS.Label == "" || !slices.Contains(SeedTypes, d.FS.Type) {
			continue
		}
		if slices.Contains(labels, d.FS.Label) {
			return d, true
		}
	}
	return Device{}, false
}

// WaitFor lists the devices every poll until cond accepts the list or ctx
// ends. It always lists at least once. On timeout it returns the last list
// (nil if none succeeded) and an error wrapping ctx's.
func (e Env) WaitFor(ctx context.Context, cond func([]Device) bool, poll time.Duration) ([]Device, error) {
	if poll <= 0 {
		poll = SettlePoll
	}
	var last []Device
	var lastErr error
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		devs, err := e.List()
		if err == nil {
			last, lastErr = devs, nil
			if cond(devs) {
				return devs, nil
			}
		} else {
			lastErr = err
		}
		timer.Reset(poll)
		select {
		case <-ctx.Done():
			werr := fmt.Errorf("waiting for block devices: %w", context.Cause(ctx))
			if lastErr != nil {
				werr = errors.Join(werr, lastErr)
			}
			return last, werr
		case <-timer.C:
		}
	}
}

// Settle waits until the set of block devices (names, numbers, sizes, flags
// as sysfs shows them) has not changed for quiet, rescanning every
// SettlePoll, then lists and probes them. It gives up after max (<= 0: only
// ctx bounds it) and then returns the current list with an error wrapping
// context.DeadlineExceeded.
func (e Env) Settle(ctx context.Context, quiet, max time.Duration) ([]Device, error) {
	if max > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, max)
		defer cancel()
	}
	var prev string
	var since time.Time
	first := true
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		now := time.Now()
		snap := e.fingerprint()
		if first || snap != prev {
			prev, since, first = snap, now, false
		}
		if now.Sub(since) >= quiet {
			return e.List()
		}
		timer.Reset(SettlePoll)
		select {
		case <-ctx.Done():
			devs, err := e.List()
			return devs, errors.Join(fmt.Errorf("settling block devices: %w", context.Cause(ctx)), err)
		case <-timer.C:
		}
	}
}

// fingerprint summarizes sysfs's view; a scan error is a state of its own.
func (e Env) fingerprint() string {
	devs, err := e.scan()
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "absent"
		}
		return "error: " + err.Error()
	}
	var b strings.Builder
	for _, d := range devs {
		fmt.Fprintf(&b, "%s %d:%d %d %t %t %s;", d.Name, d.Major, d.Minor, d.Size, d.ReadOnly, d.Removable, d.Err)
	}
	return b.String()
}
