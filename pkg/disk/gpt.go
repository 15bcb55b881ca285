package disk

// GPT, read and rewritten in place.
//
// Why not go-diskfs's partition/gpt: its Table.Write re-serialises the whole
// table from its model. It writes a 92-byte header whatever the on-disk
// header size was, states a 128-byte entry size while sizing the array with
// the on-disk one, invents a disk GUID when it has none, and regenerates the
// protective MBR (a hybrid MBR is lost). Growing a partition needs none of
// that: we keep every byte we did not mean to change — reserved header
// bytes, entry attributes and names, unknown entry sizes — and change the
// entry's last LBA, the headers' alternate/last-usable/entries fields and
// the CRCs. For new tables (disk_setup) we write a conventional table
// (92-byte header, 128 entries of 128 bytes) ourselves too, so one encoder
// is tested against sfdisk/sgdisk.
//
// Write order: the backup entries and header go first, then the primary
// entries and header, each half synced; a crash in between leaves one
// valid copy whichever half survived (readers fall back to the backup).

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

const (
	gptSignature    = "EFI PART"
	gptMinHeader    = 92
	gptMaxEntrySize = 4096
	gptMaxEntries   = 4 << 20 // bytes of entry array we accept
	mbrProtective   = 0xee
)

// ErrNoTable means the device has no partition table we understand.
var ErrNoTable = errors.New("no partition table")

// gptTable is a GPT as found on a disk: the raw header sector and the raw
// entry array, both still valid, plus the fields we use.
type gptTable struct {
	ss         int
	header     []byte // one sector; the header occupies header[:hsize]
	hsize      int
	myLBA      int64
	alternate  int64
	firstUse   int64
	lastUse    int64
	entriesLBA int64
	nEntries   int64
	entrySize  int64
	entries    []byte
	// fromBackup is set when the primary was unusable.
	fromBackup bool
}

func le32(b []byte) uint32 { return binary.LittleEndian.Uint32(b) }
func le64(b []byte) uint64 { return binary.LittleEndian.Uint64(b) }

// parseGPTHeader checks a header sector read from lba.
func parseGPTHeader(b []byte, lba int64) (*gptTable, error) {
	if string(b[0:8]) != gptSignature {
		return nil, fmt.Errorf("no %q signature at LBA %d", gptSignature, lba)
	}
	hsize := int(le32(b[12:]))
	if hsize < gptMinHeader || hsize > len(b) {
		return nil, fmt.Errorf("header at LBA %d: size %d", lba, hsize)
	}
	h := bytes.Clone(b[:hsize])
	clear(h[16:20])
	if got, want := crc32.ChecksumIEEE(h), le32(b[16:]); got != want {
		return nil, fmt.Errorf("header at LBA %d: CRC %08x, want %08x", lba, got, want)
	}
	g := &gptTable{
		ss:         len(b),
		header:     bytes.Clone(b),
		hsize:      hsize,
		myLBA:      int64(le64(b[24:])),
		alternate:  int64(le64(b[32:])),
		firstUse:   int64(le64(b[40:])),
		lastUse:    int64(le64(b[48:])),
		entriesLBA: int64(le64(b[72:])),
		nEntries:   int64(le32(b[80:])),
		entrySize:  int64(le32(b[84:])),
	}
	if g.myLBA != lba {
		return nil, fmt.Errorf("header at LBA %d says it is at LBA %d", lba, g.myLBA)
	}
	if g.entrySize < 128 || g.entrySize > gptMaxEntrySize || g.entrySize%8 != 0 {
		return nil, fmt.Errorf("header at LBA %d: entry size %d", lba, g.entrySize)
	}
	if g.nEntries < 1 || g.nEntries*g.entrySize > gptMaxEntries {
		return nil, fmt.Errorf("header at LBA %d: %d entries", lba, g.nEntries)
	}
	if g.firstUse < 0 || g.lastUse < g.firstUse || g.entriesLBA < 0 || g.alternate < 0 {
		return nil, fmt.Errorf("header at LBA %d: usable LBAs %d-%d, entries at %d", lba, g.firstUse, g.lastUse, g.entriesLBA)
	}
	return g, nil
}

func (g *gptTable) entrySectors() int64 {
	n := g.nEntries * g.entrySize
	return (n + int64(g.ss) - 1) / int64(g.ss)
}

// readGPTAt reads and validates the header at lba and its entries.
func readGPTAt(d Device, ss int, lba, sectors int64) (*gptTable, error) {
	if lba < 1 || lba >= sectors {
		return nil, fmt.Errorf("header LBA %d outside the disk (%d sectors)", lba, sectors)
	}
	b := make([]byte, ss)
	if err := readFull(d, b, lba*int64(ss)); err != nil {
		return nil, err
	}
	g, err := parseGPTHeader(b, lba)
	if err != nil {
		return nil, err
	}
	if g.entriesLBA+g.entrySectors() > sectors || g.entriesLBA < 1 {
		return nil, fmt.Errorf("header at LBA %d: entries at LBA %d run past the disk", lba, g.entriesLBA)
	}
	e := make([]byte, g.nEntries*g.entrySize)
	if err := readFull(d, e, g.entriesLBA*int64(ss)); err != nil {
		return nil, fmt.Errorf("reading GPT entries: %w", err)
	}
	if got, want := crc32.ChecksumIEEE(e), le32(g.header[88:]); got != want {
		return nil, fmt.Errorf("header at LBA %d: entries CRC %08x, want %08x", lba, got, want)
	}
	g.entries = e
	return g, nil
}

// readGPT reads the primary GPT, else the backup (at the primary's
// alternate LBA when the primary header itself was readable, else at the
// last LBA).
func readGPT(d Device, ss int) (*gptTable, error) {
	sectors := d.Size() / int64(ss)
	g, perr := readGPTAt(d, ss, 1, sectors)
	if perr == nil {
		return g, nil
	}
	cands := []int64{sectors - 1}
	b := make([]byte, ss)
	if readFull(d, b, int64(ss)) == nil && string(b[0:8]) == gptSignature {
		if alt := int64(le64(b[32:])); alt > 1 && alt != sectors-1 {
			cands = append([]int64{alt}, cands...)
		}
	}
	errs := []error{fmt.Errorf("primary GPT: %w", perr)}
	for _, lba := range cands {
		bg, err := readGPTAt(d, ss, lba, sectors)
		if err == nil {
			bg.fromBackup = true
			return bg, nil
		}
		errs = append(errs, fmt.Errorf("backup GPT at LBA %d: %w", lba, err))
	}
	return nil, errors.Join(errs...)
}

// gptEntry is one decoded entry.
type gptEntry struct {
	index       int // 1-based
	first, last int64
}

func (g *gptTable) entry(i int) []byte {
	return g.entries[int64(i-1)*g.entrySize : int64(i)*g.entrySize]
}

func (g *gptTable) used() []gptEntry {
	var out []gptEntry
	for i := 1; int64(i) <= g.nEntries; i++ {
		e := g.entry(i)
		if isZero(e[0:16]) {
			continue
		}
		out = append(out, gptEntry{index: i, first: int64(le64(e[32:])), last: int64(le64(e[40:]))})
	}
	return out
}

func isZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// layoutAtEnd returns where the backup header, backup entries and the last
// usable LBA go on a disk of sectors sectors.
func (g *gptTable) layoutAtEnd(sectors int64) (backupLBA, backupEntries, lastUsable int64) {
	backupLBA = sectors - 1
	backupEntries = backupLBA - g.entrySectors()
	lastUsable = backupEntries - 1
	return
}

// headerFor builds the header sector for the copy at myLBA, from the table's
// header bytes with the given fields replaced and the CRCs recomputed.
func (g *gptTable) headerFor(myLBA, alternate, lastUsable, entriesLBA int64) []byte {
	h := bytes.Clone(g.header)
	binary.LittleEndian.PutUint64(h[24:], uint64(myLBA))
	binary.LittleEndian.PutUint64(h[32:], uint64(alternate))
	binary.LittleEndian.PutUint64(h[48:], uint64(lastUsable))
	binary.LittleEndian.PutUint64(h[72:], uint64(entriesLBA))
	binary.LittleEndian.PutUint32(h[88:], crc32.ChecksumIEEE(g.entries))
	clear(h[16:20])
	binary.LittleEndian.PutUint32(h[16:], crc32.ChecksumIEEE(h[:g.hsize]))
	return h
}

// primaryEntriesLBA is where the primary entry array lives: from the
// primary header when we read it, else the conventional LBA 2.
func (g *gptTable) primaryEntriesLBA() int64 {
	if g.fromBackup {
		return 2
	}
	return g.entriesLBA
}

// write writes both copies of the table for a disk of sectors sectors, with
// the backup at the end: backup half first, then the primary.
func (g *gptTable) write(d Device, sectors int64) error {
	ss := int64(g.ss)
	backupLBA, backupEntries, lastUsable := g.layoutAtEnd(sectors)
	primEntries := g.primaryEntriesLBA()
	if primEntries+g.entrySectors() > g.firstUse {
		return fmt.Errorf("primary GPT entries at LBA %d overlap the first usable LBA %d", primEntries, g.firstUse)
	}
	if err := writeFull(d, g.entries, backupEntries*ss); err != nil {
		return fmt.Errorf("writing backup GPT entries: %w", err)
	}
	if err := writeFull(d, g.headerFor(backupLBA, 1, lastUsable, backupEntries), backupLBA*ss); err != nil {
		return fmt.Errorf("writing backup GPT header: %w", err)
	}
	if err := syncDevice(d); err != nil {
		return fmt.Errorf("syncing backup GPT: %w", err)
	}
	if err := writeFull(d, g.entries, primEntries*ss); err != nil {
		return fmt.Errorf("writing primary GPT entries: %w", err)
	}
	if err := writeFull(d, g.headerFor(1, backupLBA, lastUsable, primEntries), ss); err != nil {
		return fmt.Errorf("writing primary GPT header: %w", err)
	}
	if err := syncDevice(d); err != nil {
		return fmt.Errorf("syncing primary GPT: %w", err)
	}
	return nil
}

// fixProtectiveMBR updates a pure protective MBR (one 0xEE entry, nothing
// else) to cover a disk of sectors sectors. A hybrid MBR is left alone.
func fixProtectiveMBR(d Device, sectors int64) error {
	b := make([]byte, 512)
	if err := readFull(d, b, 0); err != nil {
		return err
	}
	if b[510] != 0x55 || b[511] != 0xaa {
		return nil
	}
	slot := -1
	for i := 0; i < 4; i++ {
		e := b[446+16*i : 446+16*(i+1)]
		switch {
		case e[4] == mbrProtective && slot < 0:
			slot = i
		case e[4] != 0:
			return nil // hybrid: not ours to touch
		}
	}
	if slot < 0 {
		return nil
	}
	e := b[446+16*slot : 446+16*(slot+1)]
	want := uint32(min(sectors-1, 0xffffffff))
	if le32(e[12:]) == want {
		return nil
	}
	binary.LittleEndian.PutUint32(e[12:], want)
	putCHS(e[5:8], sectors-1)
	return writeFull(d, e, int64(446+16*slot))
}
