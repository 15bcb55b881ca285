package disk

// Grow is cloud-utils' growpart (bin/growpart, sfdisk path) on a Device.
//
// Rules, as growpart applies them:
//   - The start never moves. The new end (inclusive) is one sector before
//     the nearest partition starting after the old end, else the last
//     usable LBA: for GPT the one left by a backup table relocated to the
//     disk's end (so a disk that grew gets its backup header moved); for MBR
//     the disk's last sector minus 33 (room for a future GPT backup), capped
//     so start and size fit MBR's 32-bit fields (2 TiB with 512-byte sectors).
//   - No end alignment: growpart writes the maximum end as is.
//   - When the end would not move, or move by less than the fudge (1 MiB by
//     default), nothing is written: NOCHANGE.
//   - MBR: primary partitions only; a logical or extended partition is an
//     error (growpart would edit the extended container's chain).
//   - Dry run computes the same result and writes nothing.

import (
	"errors"
	"fmt"
	"log/slog"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
)

// DefaultFudge is growpart's default: a partition that could grow by less
// than this many bytes is left alone.
const DefaultFudge = 1 << 20

// ErrNoPartition means the table has no partition with that number.
var ErrNoPartition = errors.New("no such partition")

// GrowOptions tune Grow. The zero value is growpart's defaults.
type GrowOptions struct {
	// DryRun computes the change without writing.
	DryRun bool
	// Fudge in bytes: 0 means DefaultFudge, negative means none.
	Fudge int64
	// SectorSize overrides the device's logical block size (0: ask the
	// device, else 512; for GPT on an image 4096 is tried too).
	SectorSize int
	// Name is the device's name for logs and errors (default: File.Path).
	Name string
	// Log receives one line per destructive step (nil: none).
	Log *slog.Logger
	// NoKernelUpdate stops GrowPath from telling the kernel (growpart's
	// --update off).
	NoKernelUpdate bool
}

// Result is what Grow did (or would do). LBAs are in SectorSize units and
// ends are inclusive, as growpart prints them.
type Result struct {
	Table      string `json:"table"` // "gpt" or "dos"
	SectorSize int    `json:"sectorSize"`
	Partition  int    `json:"partition"`
	OldStart   int64  `json:"oldStart"`
	OldEnd     int64  `json:"oldEnd"`
	NewEnd     int64  `json:"newEnd"`
	// Changed is set when the partition was (or, dry, would be) grown.
	Changed bool `json:"changed"`
	// Reason says why not, in growpart's words.
	Reason string `json:"reason,omitempty"`
	// BackupMoved is set when the GPT backup was (or would be) relocated to
	// the end of the disk.
	BackupMoved bool `json:"backupMoved,omitempty"`
}

// OldSize and NewSize are in sectors.
func (r Result) OldSize() int64 { return r.OldEnd - r.OldStart + 1 }
func (r Result) NewSize() int64 { return r.NewEnd - r.OldStart + 1 }

// Info is growpart's change description:
// "partition=1 start=2048 old: size=… end=… new: size=… end=…".
func (r Result) Info() string {
	return fmt.Sprintf("partition=%d start=%d old: size=%d end=%d new: size=%d end=%d",
		r.Partition, r.OldStart, r.OldSize(), r.OldEnd, r.NewSize(), r.NewEnd)
}

func deviceName(d Device, o GrowOptions) string {
	if o.Name != "" {
		return o.Name
	}
	if f, ok := d.(*File); ok {
		return f.Path()
	}
	return "disk"
}

// Grow grows partition partNum of d as far as it can go.
func Grow(d Device, partNum int, o GrowOptions) (Result, error) {
	name := deviceName(d, o)
	wrap := func(err error) error { return fmt.Errorf("growing %s partition %d: %w", name, partNum, err) }
	if partNum < 1 {
		return Result{}, wrap(fmt.Errorf("partition number %d: %w", partNum, ErrNoPartition))
	}
	ss, err := sectorSizeOf(d, o.SectorSize)
	if err != nil {
		return Result{}, wrap(err)
	}
	slots, protective, isMBR, err := readMBR(d)
	if err != nil {
		return Result{}, wrap(fmt.Errorf("reading MBR: %w", err))
	}
	if isMBR && !protective {
		// bootenv tells a FAT boot sector (which also ends in 0x55AA) from
		// an MBR.
		if tab, err := bootenv.ProbeTable(d, d.Size(), ss); err != nil || tab.Type != "dos" {
			return Result{}, wrap(errors.Join(ErrNoTable, err))
		}
		r, err := growMBR(d, slots, ss, partNum, o, name)
		if err != nil {
			return r, wrap(err)
		}
		return r, nil
	}
	sizes := []int{ss}
	if o.SectorSize == 0 && ss == DefaultSectorSize {
		if _, ok := d.(SectorSizer); !ok || !isBlock(d) {
			sizes = append(sizes, 4096)
		}
	}
	var errs []error
	for _, s := range sizes {
		g, err := readGPT(d, s)
		if err != nil {
			errs = append(errs, fmt.Errorf("GPT with %d-byte sectors: %w", s, err))
			continue
		}
		r, err := growGPT(d, g, partNum, o, name)
		if err != nil {
			return r, wrap(err)
		}
		return r, nil
	}
	return Result{}, wrap(errors.Join(append([]error{ErrNoTable}, errs...)...))
}

func isBlock(d Device) bool {
	f, ok := d.(*File)
	return ok && f.IsBlockDevice()
}

func fudgeSectors(o GrowOptions, ss int) int64 {
	switch {
	case o.Fudge == 0:
		return DefaultFudge / int64(ss)
	case o.Fudge < 0:
		return 0
	}
	return o.Fudge / int64(ss)
}

// decide applies growpart's no-change rules; it reports whether to grow.
func decide(r *Result, maxEnd int64, o GrowOptions) bool {
	fudge := fudgeSectors(o, r.SectorSize)
	switch {
	case maxEnd <= r.OldEnd:
		r.NewEnd = r.OldEnd
		r.Reason = fmt.Sprintf("partition %d is size %d. it cannot be grown", r.Partition, r.OldSize())
		return false
	case r.OldEnd+fudge > maxEnd:
		r.NewEnd = r.OldEnd
		r.Reason = fmt.Sprintf("partition %d could only be grown by %d [fudge=%d]", r.Partition, maxEnd-r.OldEnd, fudge)
		return false
	}
	r.NewEnd = maxEnd
	r.Changed = true
	return true
}

func growGPT(d Device, g *gptTable, partNum int, o GrowOptions, name string) (Result, error) {
	r := Result{Table: "gpt", SectorSize: g.ss, Partition: partNum}
	sectors := d.Size() / int64(g.ss)
	if int64(partNum) > g.nEntries || isZero(g.entry(partNum)[0:16]) {
		return r, fmt.Errorf("GPT partition %d: %w", partNum, ErrNoPartition)
	}
	e := g.entry(partNum)
	r.OldStart, r.OldEnd = int64(le64(e[32:])), int64(le64(e[40:]))
	if r.OldStart < g.firstUse || r.OldEnd < r.OldStart {
		return r, fmt.Errorf("GPT partition %d spans LBAs %d-%d, outside the usable %d-%d", partNum, r.OldStart, r.OldEnd, g.firstUse, g.lastUse)
	}
	backupLBA, _, lastUsable := g.layoutAtEnd(sectors)
	if lastUsable < g.lastUse {
		// The disk is smaller than the table says: someone else's problem,
		// and not one to paper over by moving the backup inward.
		return r, fmt.Errorf("disk has %d sectors but its GPT uses LBAs up to %d (disk shrank?)", sectors, g.lastUse)
	}
	if r.OldEnd > lastUsable {
		return r, fmt.Errorf("GPT partition %d ends at LBA %d, past the last usable LBA %d", partNum, r.OldEnd, lastUsable)
	}
	maxEnd := lastUsable
	for _, u := range g.used() {
		if u.index != partNum && u.first > r.OldEnd && u.first-1 < maxEnd {
			maxEnd = u.first - 1
		}
	}
	r.BackupMoved = g.alternate != backupLBA || g.fromBackup
	if !decide(&r, maxEnd, o) {
		r.BackupMoved = false
		return r, nil
	}
	if o.DryRun {
		return r, nil
	}
	if o.Log != nil {
		o.Log.Info("growing partition", "device", name, "partition", partNum, "table", "gpt",
			"start", r.OldStart, "old_end", r.OldEnd, "new_end", r.NewEnd,
			"old_backup_lba", g.alternate, "new_backup_lba", backupLBA, "sector_size", g.ss)
	}
	putLE64(e[40:], uint64(r.NewEnd))
	if err := g.write(d, sectors); err != nil {
		return r, err
	}
	if err := fixProtectiveMBR(d, sectors); err != nil {
		return r, fmt.Errorf("updating the protective MBR: %w", err)
	}
	if err := syncDevice(d); err != nil {
		return r, fmt.Errorf("syncing: %w", err)
	}
	return r, nil
}

func growMBR(d Device, slots []mbrSlot, ss, partNum int, o GrowOptions, name string) (Result, error) {
	r := Result{Table: "dos", SectorSize: ss, Partition: partNum}
	if partNum > 4 {
		return r, fmt.Errorf("MBR partition %d is a logical partition: %w", partNum, errors.ErrUnsupported)
	}
	var p *mbrSlot
	for i := range slots {
		if slots[i].index == partNum {
			p = &slots[i]
		}
	}
	if p == nil {
		return r, fmt.Errorf("MBR partition %d: %w", partNum, ErrNoPartition)
	}
	if isExtended(p.typ) {
		return r, fmt.Errorf("MBR partition %d is an extended partition: %w", partNum, errors.ErrUnsupported)
	}
	r.OldStart, r.OldEnd = p.start, p.last()
	sectors := d.Size() / int64(ss)
	if r.OldEnd >= sectors {
		return r, fmt.Errorf("MBR partition %d ends at LBA %d, past the disk's %d sectors", partNum, r.OldEnd, sectors)
	}
	maxEnd := sectors - 1
	for _, s := range slots {
		if s.index != partNum && s.start > r.OldEnd && s.start-1 < maxEnd {
			maxEnd = s.start - 1
		}
	}
	if maxEnd > sectors-gptTailSectors-1 {
		maxEnd = sectors - gptTailSectors - 1
	}
	// start and size are 32-bit: end at the 2^32-sector boundary at most.
	maxEnd = min(maxEnd, mbrMaxLBA, p.start+mbrMaxLBA-1)
	if maxEnd > r.OldEnd && sectors > mbrMaxLBA && o.Log != nil {
		o.Log.Warn("MBR partitioned disk is larger than MBR can address; additional space will go unused", "device", name, "sectors", sectors)
	}
	if !decide(&r, maxEnd, o) || o.DryRun {
		return r, nil
	}
	if o.Log != nil {
		o.Log.Info("growing partition", "device", name, "partition", partNum, "table", "dos",
			"start", r.OldStart, "old_end", r.OldEnd, "new_end", r.NewEnd, "sector_size", ss)
	}
	p.count = r.NewEnd - p.start + 1
	if err := writeMBRSlot(d, *p); err != nil {
		return r, err
	}
	if err := syncDevice(d); err != nil {
		return r, fmt.Errorf("syncing: %w", err)
	}
	return r, nil
}

func putLE64(b []byte, v uint64) {
	for i := 0; i < 8; i++ {
		b[i] = byte(v >> (8 * i))
	}
}
