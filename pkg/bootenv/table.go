package bootenv

// Partition tables, pure: GPT and MBR ("dos") read from an io.ReaderAt.
//
//   - GPT: the primary header at LBA 1 is used when its header and entry
//     CRCs check out, else the backup header (at the primary's AlternateLBA,
//     else the last LBA). PARTUUID is the entry's unique GUID and PARTLABEL
//     its UTF-16LE name, as the kernel and blkid report them.
//   - MBR: PARTUUID is "<disk signature %08x>-<partition number %02x>", the
//     kernel's form (blkid agrees for a non-zero signature). Primary slots
//     are numbered 1-4 by position; logical partitions in an extended
//     partition's EBR chain are numbered from 5, the extended container
//     itself is listed too (as the kernel does).
//   - An MBR holding a 0xEE (protective) entry defers to GPT. A sector 0 that
//     is a FAT boot sector is a filesystem, not a table.

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"unicode/utf16"
)

// Table is a partition table.
type Table struct {
	Type       string      `json:"type"`           // "gpt" or "dos" (blkid's PTTYPE)
	UUID       string      `json:"uuid,omitempty"` // PTUUID: GPT disk GUID or MBR disk signature (%08x)
	SectorSize int         `json:"sectorSize"`
	Partitions []Partition `json:"partitions,omitempty"`
}

// Partition is one used table entry.
type Partition struct {
	Number   int    `json:"number"`          // kernel numbering: vda<Number>
	FirstLBA int64  `json:"firstLBA"`        // in Table.SectorSize units
	LastLBA  int64  `json:"lastLBA"`         // inclusive
	Start    int64  `json:"start"`           // bytes
	Size     int64  `json:"size"`            // bytes
	Type     string `json:"type"`            // GPT type GUID (lowercase) or MBR type "0x83", "0x5"
	UUID     string `json:"uuid,omitempty"`  // PARTUUID
	Name     string `json:"name,omitempty"`  // PARTLABEL (GPT only)
	Attrs    uint64 `json:"attrs,omitempty"` // GPT attribute bits; MBR: 0x80 when bootable
}

// Partition returns the entry numbered n.
func (t Table) Partition(n int) (Partition, bool) {
	for _, p := range t.Partitions {
		if p.Number == n {
			return p, true
		}
	}
	return Partition{}, false
}

const (
	gptSignature     = "EFI PART"
	gptMaxEntryBytes = 4 << 20
	mbrExtendedDOS   = 0x05
	mbrExtendedLBA   = 0x0f
	mbrExtendedLinux = 0x85
	mbrProtective    = 0xee
	mbrMaxLogical    = 128
)

// ProbeTable reads the partition table of a disk of size bytes (size <= 0:
// unknown). sectorSize is the logical block size; 0 tries 512 then 4096 for
// GPT. It returns ErrNoTable when there is none, joined with the reasons
// each candidate was rejected.
func ProbeTable(r io.ReaderAt, size int64, sectorSize int) (Table, error) {
	sizes := []int{512, 4096}
	if sectorSize != 0 {
		if sectorSize < 512 || sectorSize > 65536 || sectorSize&(sectorSize-1) != 0 {
			return Table{}, fmt.Errorf("sector size %d: not a power of two in [512, 65536]", sectorSize)
		}
		sizes = []int{sectorSize}
	}
	d := dev{r: r, size: size}
	mbr, mbrErr := readMBR(d)
	if mbrErr != nil && !errors.Is(mbrErr, errNoMatch) {
		return Table{}, fmt.Errorf("reading MBR: %w", mbrErr)
	}
	if mbr != nil && !mbr.protective() {
		return mbr.table(d, sizes[0])
	}
	var errs []error
	if mbrErr != nil {
		errs = append(errs, fmt.Errorf("MBR: %w", mbrErr))
	}
	for _, ss := range sizes {
		t, err := probeGPT(d, ss)
		if err == nil {
			return t, nil
		}
		if !errors.Is(err, errNoMatch) {
			return Table{}, fmt.Errorf("GPT with %d-byte sectors: %w", ss, err)
		}
		errs = append(errs, fmt.Errorf("GPT with %d-byte sectors: %w", ss, err))
	}
	return Table{}, errors.Join(append([]error{ErrNoTable}, errs...)...)
}

// GPT.

func probeGPT(d dev, ss int) (Table, error) {
	primary, perr := readGPTHeader(d, ss, 1)
	if perr == nil {
		t, err := primary.table(d, ss)
		if err == nil {
			return t, nil
		}
		perr = err
	}
	if !errors.Is(perr, errNoMatch) {
		return Table{}, perr
	}
	// The backup: where the primary says, else the device's last LBA.
	var backupLBA int64
	if primary != nil && primary.alternate > 1 {
		backupLBA = primary.alternate
	} else if d.size > 0 {
		backupLBA = d.size/int64(ss) - 1
	}
	if backupLBA <= 1 {
		return Table{}, fmt.Errorf("primary header: %w", perr)
	}
	backup, berr := readGPTHeader(d, ss, backupLBA)
	if berr == nil {
		t, err := backup.table(d, ss)
		if err == nil {
			return t, nil
		}
		berr = err
	}
	return Table{}, errors.Join(fmt.Errorf("primary header: %w", perr), fmt.Errorf("backup header at LBA %d: %w", backupLBA, berr))
}

type gptHeader struct {
	alternate               int64
	firstUsable, lastUsable int64
	diskGUID                string
	entriesLBA              int64
	entries                 int64
	entrySize               int64
	entriesCRC              uint32
}

func readGPTHeader(d dev, ss int, lba int64) (*gptHeader, error) {
	b, err := d.read(lba*int64(ss), ss)
	if err != nil {
		return nil, err
	}
	if string(b[0:8]) != gptSignature {
		return nil, fmt.Errorf("no %q signature: %w", gptSignature, errNoMatch)
	}
	hsize := int(le32(b[12:]))
	if hsize < 92 || hsize > ss {
		return nil, fmt.Errorf("header size %d: %w", hsize, errNoMatch)
	}
	want := le32(b[16:])
	h := bytes.Clone(b[:hsize])
	copy(h[16:20], []byte{0, 0, 0, 0})
	if got := crc32.ChecksumIEEE(h); got != want {
		return nil, fmt.Errorf("header CRC %08x, want %08x: %w", got, want, errNoMatch)
	}
	if my := int64(le64(b[24:])); my != lba {
		return nil, fmt.Errorf("header at LBA %d says it is at %d: %w", lba, my, errNoMatch)
	}
	g := &gptHeader{
		alternate:   int64(le64(b[32:])),
		firstUsable: int64(le64(b[40:])),
		lastUsable:  int64(le64(b[48:])),
		diskGUID:    guidString(b[56:72]),
		entriesLBA:  int64(le64(b[72:])),
		entries:     int64(le32(b[80:])),
		entrySize:   int64(le32(b[84:])),
		entriesCRC:  le32(b[88:]),
	}
	if g.entrySize < 128 || g.entrySize%8 != 0 || g.entries < 0 || g.entries*g.entrySize > gptMaxEntryBytes {
		return g, fmt.Errorf("%d entries of %d bytes: %w", g.entries, g.entrySize, errNoMatch)
	}
	return g, nil
}

func (g *gptHeader) table(d dev, ss int) (Table, error) {
	if g.entries == 0 {
		return Table{Type: "gpt", UUID: g.diskGUID, SectorSize: ss}, nil
	}
	if g.entriesLBA < 0 || g.entriesLBA > (1<<62)/int64(ss) {
		return Table{}, fmt.Errorf("entries at LBA %d: %w", g.entriesLBA, errNoMatch)
	}
	b, err := d.read(g.entriesLBA*int64(ss), int(g.entries*g.entrySize))
	if err != nil {
		return Table{}, fmt.Errorf("reading entries: %w", err)
	}
	if got := crc32.ChecksumIEEE(b); got != g.entriesCRC {
		return Table{}, fmt.Errorf("entries CRC %08x, want %08x: %w", got, g.entriesCRC, errNoMatch)
	}
	t := Table{Type: "gpt", UUID: g.diskGUID, SectorSize: ss}
	for i := int64(0); i < g.entries; i++ {
		e := b[i*g.entrySize : (i+1)*g.entrySize]
		if isZero(e[0:16]) {
			continue
		}
		first, last := int64(le64(e[32:])), int64(le64(e[40:]))
		p := Partition{
			Number:   int(i) + 1,
			FirstLBA: first,
			LastLBA:  last,
			Type:     guidString(e[0:16]),
			UUID:     guidString(e[16:32]),
			Attrs:    le64(e[48:]),
			Name:     utf16LEString(e[56:128]),
		}
		p.Start, p.Size = lbaBytes(first, last, ss)
		t.Partitions = append(t.Partitions, p)
	}
	return t, nil
}

// lbaBytes converts an inclusive LBA range to a byte offset and length,
// saturating instead of overflowing on nonsense.
func lbaBytes(first, last int64, ss int) (int64, int64) {
	const maxLBA = (1 << 62) / 65536
	if first < 0 || first > maxLBA || last < first || last > maxLBA {
		return 0, 0
	}
	return first * int64(ss), (last - first + 1) * int64(ss)
}

func utf16LEString(b []byte) string {
	units := make([]uint16, 0, len(b)/2)
	for i := 0; i+1 < len(b); i += 2 {
		u := le16(b[i:])
		if u == 0 {
			break
		}
		units = append(units, u)
	}
	return string(utf16.Decode(units))
}

// MBR.

type mbrEntry struct {
	boot  byte
	typ   byte
	start int64 // LBA
	count int64 // sectors
}

type mbrSector struct {
	signature uint32
	entries   [4]mbrEntry
}

// readMBR parses sector 0 as an MBR, or returns errNoMatch.
func readMBR(d dev) (*mbrSector, error) {
	b, err := d.read(0, 512)
	if err != nil {
		return nil, err
	}
	m, err := parseMBR(b)
	if err != nil {
		return nil, err
	}
	if _, ferr := parseFATBootSector(b); ferr == nil {
		return nil, fmt.Errorf("sector 0 is a FAT boot sector: %w", errNoMatch)
	}
	return m, nil
}

func parseMBR(b []byte) (*mbrSector, error) {
	if b[510] != 0x55 || b[511] != 0xAA {
		return nil, fmt.Errorf("no 0x55AA boot signature: %w", errNoMatch)
	}
	m := &mbrSector{signature: le32(b[440:])}
	for i := range m.entries {
		e := b[446+16*i : 446+16*(i+1)]
		if e[0] != 0 && e[0] != 0x80 {
			return nil, fmt.Errorf("entry %d boot flag %#02x: %w", i+1, e[0], errNoMatch)
		}
		m.entries[i] = mbrEntry{boot: e[0], typ: e[4], start: int64(le32(e[8:])), count: int64(le32(e[12:]))}
	}
	return m, nil
}

func (m *mbrSector) protective() bool {
	for _, e := range m.entries {
		if e.typ == mbrProtective {
			return true
		}
	}
	return false
}

func isExtended(t byte) bool {
	return t == mbrExtendedDOS || t == mbrExtendedLBA || t == mbrExtendedLinux
}

func (m *mbrSector) partition(n int, e mbrEntry, base int64, ss int) Partition {
	first := base + e.start
	p := Partition{
		Number:   n,
		FirstLBA: first,
		LastLBA:  first + e.count - 1,
		Type:     fmt.Sprintf("0x%x", e.typ),
		UUID:     fmt.Sprintf("%08x-%02x", m.signature, n),
		Attrs:    uint64(e.boot),
	}
	p.Start, p.Size = lbaBytes(p.FirstLBA, p.LastLBA, ss)
	return p
}

func (m *mbrSector) table(d dev, ss int) (Table, error) {
	t := Table{Type: "dos", UUID: fmt.Sprintf("%08x", m.signature), SectorSize: ss}
	if m.signature == 0 {
		t.UUID = ""
	}
	var ext *mbrEntry
	for i, e := range m.entries {
		if e.typ == 0 || e.count == 0 {
			continue
		}
		t.Partitions = append(t.Partitions, m.partition(i+1, e, 0, ss))
		if isExtended(e.typ) && ext == nil {
			ext = &m.entries[i]
		}
	}
	if ext != nil {
		logical, err := m.logical(d, ext.start, ss)
		if err != nil && !errors.Is(err, errNoMatch) {
			return Table{}, fmt.Errorf("reading extended partition: %w", err)
		}
		t.Partitions = append(t.Partitions, logical...)
	}
	return t, nil
}

// logical walks the EBR chain of the extended partition at extStart.
func (m *mbrSector) logical(d dev, extStart int64, ss int) ([]Partition, error) {
	var out []Partition
	seen := map[int64]bool{}
	ebr := extStart
	for n := 5; n < 5+mbrMaxLogical; {
		if seen[ebr] || ebr <= 0 || ebr > (1<<62)/int64(ss) {
			break
		}
		seen[ebr] = true
		b, err := d.read(ebr*int64(ss), 512)
		if err != nil {
			return out, err
		}
		sec, err := parseMBR(b)
		if err != nil {
			return out, err
		}
		var next int64
		for _, e := range sec.entries[:2] {
			switch {
			case e.typ == 0 || e.count == 0:
			case isExtended(e.typ):
				if next == 0 {
					next = extStart + e.start
				}
			default:
				out = append(out, m.partition(n, e, ebr, ss))
				n++
			}
		}
		if next == 0 {
			break
		}
		ebr = next
	}
	return out, nil
}
