package disk

// MBR ("dos") tables: four primary slots in sector 0. Growing edits one
// 16-byte slot; new tables (disk_setup) hold primary partitions only.

import (
	"encoding/binary"
	"fmt"
)

const (
	mbrMaxLBA = 0xffffffff // start and size are 32-bit sector counts
	// gptTailSectors is what growpart leaves free at the end of an MBR
	// disk (a backup GPT: 32 sectors of entries and a header) so the disk
	// can be converted to GPT later without shrinking a partition.
	gptTailSectors = 33
)

type mbrSlot struct {
	index int // 1-4
	boot  byte
	typ   byte
	start int64
	count int64
}

func (s mbrSlot) last() int64 { return s.start + s.count - 1 }

func isExtended(t byte) bool { return t == 0x05 || t == 0x0f || t == 0x85 }

// readMBR parses sector 0: ok is false when it is not an MBR (no 0x55AA,
// a bad boot flag) or is a protective MBR.
func readMBR(d Device) (slots []mbrSlot, protective bool, ok bool, err error) {
	b := make([]byte, 512)
	if err := readFull(d, b, 0); err != nil {
		return nil, false, false, err
	}
	if b[510] != 0x55 || b[511] != 0xaa {
		return nil, false, false, nil
	}
	for i := 0; i < 4; i++ {
		e := b[446+16*i : 446+16*(i+1)]
		if e[0] != 0 && e[0] != 0x80 {
			return nil, false, false, nil
		}
		s := mbrSlot{index: i + 1, boot: e[0], typ: e[4], start: int64(le32(e[8:])), count: int64(le32(e[12:]))}
		if s.typ == mbrProtective {
			protective = true
		}
		if s.typ != 0 && s.count != 0 {
			slots = append(slots, s)
		}
	}
	return slots, protective, true, nil
}

// putCHS writes the CHS form of lba in the BIOS 255-head, 63-sector
// geometry, saturating at cylinder 1023 (0xFE 0xFF 0xFF), as fdisk does.
func putCHS(b []byte, lba int64) {
	const heads, spt = 255, 63
	c := lba / (heads * spt)
	if c > 1023 || lba < 0 {
		b[0], b[1], b[2] = 0xfe, 0xff, 0xff
		return
	}
	h := (lba / spt) % heads
	s := lba%spt + 1
	b[0] = byte(h)
	b[1] = byte(s) | byte((c>>2)&0xc0)
	b[2] = byte(c)
}

// writeMBRSlot rewrites slot s (1-4) of sector 0 with the entry's start and
// size, keeping its boot flag and type.
func writeMBRSlot(d Device, s mbrSlot) error {
	if s.start > mbrMaxLBA || s.count > mbrMaxLBA || s.start < 0 || s.count < 0 {
		return fmt.Errorf("MBR partition %d: start %d size %d do not fit 32 bits", s.index, s.start, s.count)
	}
	e := make([]byte, 16)
	e[0] = s.boot
	putCHS(e[1:4], s.start)
	e[4] = s.typ
	putCHS(e[5:8], s.last())
	binary.LittleEndian.PutUint32(e[8:], uint32(s.start))
	binary.LittleEndian.PutUint32(e[12:], uint32(s.count))
	return writeFull(d, e, int64(446+16*(s.index-1)))
}
