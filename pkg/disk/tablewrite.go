package disk

// New partition tables for disk_setup: a conventional GPT (protective MBR,
// 92-byte headers, 128 entries of 128 bytes, backup at the end) or an MBR
// with up to four primary partitions. Writing a table replaces whatever
// table was there: an MBR write also wipes both GPT headers, a GPT write
// overwrites sector 0 with the protective MBR.

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"io"
	"strconv"
	"strings"
	"sync"
	"unicode/utf16"
)

// NewPartition is one partition of a table to write. Start and Size are in
// sectors.
type NewPartition struct {
	Start, Size int64
	// Type is a GPT type GUID or sgdisk code ("8300"), or an MBR type in
	// hex ("83", "0x82"). "" is Linux filesystem (GPT 8300, MBR 83).
	Type string
	Name string // GPT partition name
	// GUID is the GPT unique partition GUID ("" = random).
	GUID     string
	Bootable bool // MBR active flag
}

// End is the partition's last sector (inclusive).
func (p NewPartition) End() int64 { return p.Start + p.Size - 1 }

// NewTable is a partition table to write.
type NewTable struct {
	Type       string // "gpt" or "dos" ("mbr" accepted)
	SectorSize int    // 0: the device's
	// DiskID is the GPT disk GUID or the MBR signature in hex ("" = random).
	DiskID     string
	Partitions []NewPartition
}

const (
	gptEntries   = 128
	gptEntrySize = 128
)

// GPTTypes maps sgdisk's short type codes (cloud-init's disk_setup layout
// uses them) to type GUIDs.
var GPTTypes = sync.OnceValue(func() map[string]string {
	return map[string]string{
		"8300": "0FC63DAF-8483-4772-8E79-3D69D8477DE4", // Linux filesystem
		"8200": "0657FD6D-A4AB-43C4-84E5-0933C84B4F4F", // Linux swap
		"8302": "933AC7E1-2EB4-4F13-B844-0E14E2AEF915", // Linux /home
		"8304": "4F68BCE3-E8CD-4DB1-96E7-FBCAF984B709", // Linux x86-64 root
		"8305": "B921B045-1DF0-41C3-AF44-4C6F280D3FAE", // Linux ARM64 root
		"8e00": "E6D6D379-F507-44C2-A23C-238F2A3DF928", // Linux LVM
		"fd00": "A19D880F-05FC-4D3B-A006-743F0F84911E", // Linux RAID
		"ef00": "C12A7328-F81F-11D2-BA4B-00A0C93EC93B", // EFI system
		"ef02": "21686148-6449-6E6F-744E-656564454649", // BIOS boot
		"0700": "EBD0A0A2-B9E5-4433-87C0-68B6B72699C7", // Microsoft basic data
		"a504": "516E7CB4-6ECF-11D6-8FF8-00022D09712B", // FreeBSD ZFS
	}
})

// GPTTypeGUID resolves a layout type to a GPT type GUID.
func GPTTypeGUID(t string) (string, error) {
	t = strings.TrimSpace(t)
	if t == "" {
		return GPTTypes()["8300"], nil
	}
	code := strings.TrimPrefix(strings.ToLower(t), "0x")
	if len(code) <= 2 {
		// An MBR code, as gdisk reads one: 82 is 8200.
		code = strings.Repeat("0", 2-len(code)) + code + "00"
	}
	if g, ok := GPTTypes()[code]; ok {
		return g, nil
	}
	if _, err := parseGUID(t); err == nil {
		return strings.ToUpper(t), nil
	}
	return "", fmt.Errorf("GPT partition type %q: not a GUID or a known sgdisk code", t)
}

// MBRType resolves a layout type to an MBR type byte. Plain numbers are
// hex, as sfdisk reads them (cloud-init's 82 is swap, 0x82).
func MBRType(t string) (byte, error) {
	t = strings.TrimSpace(t)
	if t == "" {
		return 0x83, nil
	}
	n, err := strconv.ParseUint(strings.TrimPrefix(strings.ToLower(t), "0x"), 16, 8)
	if err != nil || n == 0 {
		return 0, fmt.Errorf("MBR partition type %q: not a hex byte", t)
	}
	return byte(n), nil
}

// parseGUID turns "0FC63DAF-8483-4772-8E79-3D69D8477DE4" into its mixed-
// endian on-disk form.
func parseGUID(s string) ([]byte, error) {
	h := strings.ReplaceAll(s, "-", "")
	if len(h) != 32 || len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return nil, fmt.Errorf("GUID %q: not 8-4-4-4-12 hex", s)
	}
	raw, err := hex.DecodeString(h)
	if err != nil {
		return nil, fmt.Errorf("GUID %q: %w", s, err)
	}
	b := make([]byte, 16)
	b[0], b[1], b[2], b[3] = raw[3], raw[2], raw[1], raw[0]
	b[4], b[5] = raw[5], raw[4]
	b[6], b[7] = raw[7], raw[6]
	copy(b[8:], raw[8:])
	return b, nil
}

func randomGUID(r io.Reader) ([]byte, error) {
	b := make([]byte, 16)
	if _, err := io.ReadFull(r, b); err != nil {
		return nil, fmt.Errorf("random GUID: %w", err)
	}
	b[7] = b[7]&0x0f | 0x40 // version 4 (mixed-endian: byte 7 is the high byte of time_hi)
	b[8] = b[8]&0x3f | 0x80
	return b, nil
}

// GPTUsable returns the first and last usable LBAs of a conventional GPT on
// a disk of the given size.
func GPTUsable(size int64, ss int) (first, last int64) {
	entrySectors := int64((gptEntries*gptEntrySize + ss - 1) / ss)
	sectors := size / int64(ss)
	first = 2 + entrySectors
	last = sectors - 2 - entrySectors
	return
}

// WriteTable writes t to d, replacing any table. rnd supplies GUIDs and
// signatures (nil: crypto/rand).
func WriteTable(d Device, t NewTable, rnd io.Reader) error {
	if rnd == nil {
		rnd = rand.Reader
	}
	ss, err := sectorSizeOf(d, t.SectorSize)
	if err != nil {
		return err
	}
	switch strings.ToLower(t.Type) {
	case "gpt":
		return writeNewGPT(d, t, ss, rnd)
	case "dos", "mbr", "msdos":
		return writeNewMBR(d, t, ss, rnd)
	}
	return fmt.Errorf("table type %q: want gpt or mbr", t.Type)
}

func checkOverlaps(parts []NewPartition, first, last int64) error {
	for i, p := range parts {
		if p.Size <= 0 || p.Start < first || p.End() > last {
			return fmt.Errorf("partition %d (sectors %d-%d) is outside the usable %d-%d", i+1, p.Start, p.End(), first, last)
		}
		for j, q := range parts[:i] {
			if p.Start <= q.End() && q.Start <= p.End() {
				return fmt.Errorf("partitions %d and %d overlap", j+1, i+1)
			}
		}
	}
	return nil
}

func writeNewGPT(d Device, t NewTable, ss int, rnd io.Reader) error {
	sectors := d.Size() / int64(ss)
	first, last := GPTUsable(d.Size(), ss)
	if last <= first {
		return fmt.Errorf("disk of %d sectors is too small for a GPT", sectors)
	}
	if len(t.Partitions) > gptEntries {
		return fmt.Errorf("%d partitions: GPT holds %d", len(t.Partitions), gptEntries)
	}
	if err := checkOverlaps(t.Partitions, first, last); err != nil {
		return err
	}
	entries := make([]byte, gptEntries*gptEntrySize)
	for i, p := range t.Partitions {
		e := entries[i*gptEntrySize : (i+1)*gptEntrySize]
		tg, err := GPTTypeGUID(p.Type)
		if err != nil {
			return fmt.Errorf("partition %d: %w", i+1, err)
		}
		tb, _ := parseGUID(tg)
		copy(e[0:16], tb)
		var ub []byte
		if p.GUID != "" {
			if ub, err = parseGUID(p.GUID); err != nil {
				return fmt.Errorf("partition %d: %w", i+1, err)
			}
		} else if ub, err = randomGUID(rnd); err != nil {
			return err
		}
		copy(e[16:32], ub)
		binary.LittleEndian.PutUint64(e[32:], uint64(p.Start))
		binary.LittleEndian.PutUint64(e[40:], uint64(p.End()))
		name := utf16.Encode([]rune(p.Name))
		if len(name) > 36 {
			return fmt.Errorf("partition %d: name %q longer than 36 UTF-16 units", i+1, p.Name)
		}
		for j, u := range name {
			binary.LittleEndian.PutUint16(e[56+2*j:], u)
		}
	}
	var disk []byte
	var err error
	if t.DiskID != "" {
		if disk, err = parseGUID(t.DiskID); err != nil {
			return fmt.Errorf("disk GUID: %w", err)
		}
	} else if disk, err = randomGUID(rnd); err != nil {
		return err
	}
	h := make([]byte, ss)
	copy(h[0:8], gptSignature)
	binary.LittleEndian.PutUint32(h[8:], 0x00010000)
	binary.LittleEndian.PutUint32(h[12:], gptMinHeader)
	binary.LittleEndian.PutUint64(h[40:], uint64(first))
	copy(h[56:72], disk)
	binary.LittleEndian.PutUint32(h[80:], gptEntries)
	binary.LittleEndian.PutUint32(h[84:], gptEntrySize)
	g := &gptTable{ss: ss, header: h, hsize: gptMinHeader, firstUse: first, entriesLBA: 2,
		nEntries: gptEntries, entrySize: gptEntrySize, entries: entries}
	// Sector 0: a protective MBR, keeping any boot code in bytes 0-439.
	mbr := make([]byte, 512)
	if err := readFull(d, mbr, 0); err != nil {
		return err
	}
	clear(mbr[440:510])
	e := mbr[446:462]
	e[2] = 0x02 // CHS 0/0/2
	e[4] = mbrProtective
	putCHS(e[5:8], sectors-1)
	binary.LittleEndian.PutUint32(e[8:], 1)
	binary.LittleEndian.PutUint32(e[12:], uint32(min(sectors-1, 0xffffffff)))
	mbr[510], mbr[511] = 0x55, 0xaa
	if err := g.write(d, sectors); err != nil {
		return err
	}
	if err := writeFull(d, mbr, 0); err != nil {
		return fmt.Errorf("writing protective MBR: %w", err)
	}
	return syncDevice(d)
}

func writeNewMBR(d Device, t NewTable, ss int, rnd io.Reader) error {
	sectors := d.Size() / int64(ss)
	if len(t.Partitions) > 4 {
		return fmt.Errorf("%d partitions: MBR holds 4 primary partitions (use gpt)", len(t.Partitions))
	}
	if err := checkOverlaps(t.Partitions, 1, min(sectors-1, mbrMaxLBA)); err != nil {
		return err
	}
	mbr := make([]byte, 512)
	if err := readFull(d, mbr, 0); err != nil {
		return err
	}
	clear(mbr[440:510])
	if t.DiskID != "" {
		sig, err := strconv.ParseUint(strings.TrimPrefix(strings.ToLower(t.DiskID), "0x"), 16, 32)
		if err != nil {
			return fmt.Errorf("MBR disk signature %q: %w", t.DiskID, err)
		}
		binary.LittleEndian.PutUint32(mbr[440:], uint32(sig))
	} else if _, err := io.ReadFull(rnd, mbr[440:444]); err != nil {
		return fmt.Errorf("random disk signature: %w", err)
	}
	for i, p := range t.Partitions {
		typ, err := MBRType(p.Type)
		if err != nil {
			return fmt.Errorf("partition %d: %w", i+1, err)
		}
		e := mbr[446+16*i : 446+16*(i+1)]
		if p.Bootable {
			e[0] = 0x80
		}
		putCHS(e[1:4], p.Start)
		e[4] = typ
		putCHS(e[5:8], p.End())
		binary.LittleEndian.PutUint32(e[8:], uint32(p.Start))
		binary.LittleEndian.PutUint32(e[12:], uint32(p.Size))
	}
	mbr[510], mbr[511] = 0x55, 0xaa
	// Wipe GPT headers a previous table may have left.
	zero := make([]byte, ss)
	for _, lba := range []int64{1, sectors - 1} {
		b := make([]byte, 8)
		if lba > 0 && readFull(d, b, lba*int64(ss)) == nil && string(b) == gptSignature {
			if err := writeFull(d, zero, lba*int64(ss)); err != nil {
				return fmt.Errorf("wiping the old GPT header at LBA %d: %w", lba, err)
			}
		}
	}
	if err := writeFull(d, mbr, 0); err != nil {
		return fmt.Errorf("writing MBR: %w", err)
	}
	return syncDevice(d)
}

// gptCRCOK is used by tests and the fuzzer to check headers we wrote.
func gptCRCOK(h []byte, hsize int) bool {
	c := append([]byte(nil), h[:hsize]...)
	clear(c[16:20])
	return crc32.ChecksumIEEE(c) == le32(h[16:])
}
