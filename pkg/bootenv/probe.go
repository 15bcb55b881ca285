package bootenv

// Superblock probing, pure: everything reads from an io.ReaderAt. The
// results follow `blkid -p -o export` (util-linux libblkid), which is the
// yardstick the tests compare against:
//
//   - TYPE, LABEL and UUID are spelled as blkid spells them: ext UUIDs
//     lowercase 8-4-4-4-12, FAT serials "ABCD-1234", ISO9660 UUIDs made from
//     the volume's modification (else creation) date, "2026-11-22-08-36-48-00".
//   - Labels lose trailing white space. A FAT label comes from the root
//     directory's volume-label entry when there is one, else from the boot
//     sector; "NO NAME" means none. An ISO9660 label merges the Joliet name
//     with the primary descriptor's, as blkid does.
//   - Containers (LUKS, LVM2 PV, md RAID member: probe_stacked.go) are
//     tried first, then filesystems in a fixed order (ISO9660, ext*, XFS,
//     btrfs, swap, FAT); the first match wins; unlike blkid -p we don't report
//     ambiguous leftovers of older filesystems.

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf16"
)

// FS is what a superblock says about a filesystem.
type FS struct {
	Type    string `json:"type"` // ext4, ext3, ext2, jbd, iso9660, vfat, swap, xfs, btrfs
	Label   string `json:"label,omitempty"`
	UUID    string `json:"uuid,omitempty"`
	Version string `json:"version,omitempty"` // blkid's VERSION where we know it: FAT12/FAT16/FAT32, "1.0" (ext), "Joliet Extension"
}

// Sentinel errors for callers to branch on.
var (
	ErrNoFilesystem = errors.New("no known filesystem")
	ErrNoTable      = errors.New("no partition table")
)

// errNoMatch means "this prober doesn't recognize the data" (including data
// too short to hold the structure); other errors are I/O errors.
var errNoMatch = errors.New("no match")

// dev bounds reads to a device of known size (size <= 0: unknown).
type dev struct {
	r    io.ReaderAt
	size int64
}

func (d dev) read(off int64, n int) ([]byte, error) {
	if off < 0 || n <= 0 || n > 64<<20 {
		return nil, errNoMatch
	}
	if d.size > 0 && (off > d.size || int64(n) > d.size-off) {
		return nil, errNoMatch
	}
	buf := make([]byte, n)
	m, err := d.r.ReadAt(buf, off)
	if m == n {
		return buf, nil
	}
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, errNoMatch
	}
	return nil, fmt.Errorf("reading %d bytes at offset %d: %w", n, off, err)
}

type prober struct {
	name string
	fn   func(dev) (FS, error)
}

// probers run in this order; the first match wins.
var probers = []prober{
	// Containers first: an md 1.0 RAID1 member also shows the filesystem
	// it mirrors at offset 0, and must not be mounted as one.
	{"luks", probeLUKS},
	{"lvm2", probeLVM},
	{"md", probeMD},
	{"iso9660", probeISO9660},
	{"ext", probeExt},
	{"xfs", probeXFS},
	{"btrfs", probeBtrfs},
	{"swap", probeSwap},
	{"vfat", probeFAT},
}

// Probe identifies the filesystem on r, a device or image of size bytes
// (size <= 0 when unknown). It returns ErrNoFilesystem when nothing matches
// and the joined I/O errors when reading failed.
func Probe(r io.ReaderAt, size int64) (FS, error) {
	d := dev{r: r, size: size}
	var errs []error
	for _, p := range probers {
		fs, err := p.fn(d)
		if err == nil {
			return fs, nil
		}
		if !errors.Is(err, errNoMatch) {
			errs = append(errs, fmt.Errorf("probing %s: %w", p.name, err))
		}
	}
	if len(errs) > 0 {
		return FS{}, errors.Join(errs...)
	}
	return FS{}, ErrNoFilesystem
}

var (
	le16 = binary.LittleEndian.Uint16
	le32 = binary.LittleEndian.Uint32
	le64 = binary.LittleEndian.Uint64
	be32 = binary.BigEndian.Uint32
)

// cString cuts b at the first NUL and trims trailing white space, like
// blkid_probe_set_label.
func cString(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return strings.TrimRight(string(b), " \t\n\v\f\r")
}

// uuidString formats 16 bytes as 8-4-4-4-12 lowercase hex; all-zero gives "".
func uuidString(b []byte) string {
	if len(b) != 16 || isZero(b) {
		return ""
	}
	h := hex.EncodeToString(b)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// guidString formats a mixed-endian GUID (GPT, EFI) lowercase.
func guidString(b []byte) string {
	if len(b) != 16 {
		return ""
	}
	var s [16]byte
	s[0], s[1], s[2], s[3] = b[3], b[2], b[1], b[0]
	s[4], s[5] = b[5], b[4]
	s[6], s[7] = b[7], b[6]
	copy(s[8:], b[8:])
	h := hex.EncodeToString(s[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

func isZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// ext2/3/4: superblock at 1024.
const (
	extMagic             = 0xEF53
	extCompatHasJournal  = 0x0004
	extIncompatJournal   = 0x0008 // external journal device
	ext3IncompatSupp     = 0x0002 | 0x0004 | 0x0010
	ext3RoCompatSupp     = 0x0001 | 0x0002 | 0x0004
	extSuperblockOffset  = 1024
	extSuperblockReadLen = 264
)

func probeExt(d dev) (FS, error) {
	sb, err := d.read(extSuperblockOffset, extSuperblockReadLen)
	if err != nil {
		return FS{}, err
	}
	if le16(sb[56:]) != extMagic {
		return FS{}, errNoMatch
	}
	compat, incompat, roCompat := le32(sb[92:]), le32(sb[96:]), le32(sb[100:])
	fs := FS{
		Label:   cString(sb[120:136]),
		UUID:    uuidString(sb[104:120]),
		Version: fmt.Sprintf("%d.%d", le32(sb[76:]), le16(sb[62:])),
	}
	switch {
	case incompat&extIncompatJournal != 0:
		fs.Type = "jbd"
	case incompat&^ext3IncompatSupp != 0 || roCompat&^ext3RoCompatSupp != 0:
		// A feature ext3 doesn't know (extents, 64bit, flex_bg, huge_file,
		// metadata_csum…): ext4, with or without a journal.
		fs.Type = "ext4"
	case compat&extCompatHasJournal != 0:
		fs.Type = "ext3"
	default:
		fs.Type = "ext2"
	}
	return fs, nil
}

// ISO9660: volume descriptors from 32 KiB, 2 KiB apart.
const (
	isoFirstDescriptor = 0x8000
	isoSectorSize      = 0x800
	isoMaxDescriptors  = 16
	isoDescriptorLen   = 881 // through the modification date
)

func probeISO9660(d dev) (FS, error) {
	var pvd, joliet []byte
	for i := 0; i < isoMaxDescriptors && (pvd == nil || joliet == nil); i++ {
		desc, err := d.read(isoFirstDescriptor+int64(i)*isoSectorSize, isoDescriptorLen)
		if err != nil {
			if errors.Is(err, errNoMatch) {
				break
			}
			return FS{}, err
		}
		if string(desc[1:6]) != "CD001" || desc[0] == 0xff {
			break
		}
		switch desc[0] {
		case 1:
			if pvd == nil {
				pvd = desc
			}
		case 2:
			esc := string(desc[88:91])
			if joliet == nil && (esc == "%/@" || esc == "%/C" || esc == "%/E") {
				joliet = desc
			}
		}
	}
	if pvd == nil {
		return FS{}, errNoMatch
	}
	fs := FS{Type: "iso9660"}
	// Modification date first, then creation date (both 16 digits + offset).
	if uuid, decided := isoDateUUID(pvd[830:847]); decided {
		fs.UUID = uuid
	} else {
		fs.UUID, _ = isoDateUUID(pvd[813:830])
	}
	volID := pvd[40:72]
	if joliet != nil {
		fs.Version = "Joliet Extension"
		if merged, ok := mergeJoliet(joliet[40:72], volID); ok {
			fs.Label = utf16Label(merged)
		} else {
			fs.Label = utf16Label(beUnits(joliet[40:72]))
		}
	} else {
		fs.Label = cString(volID)
	}
	return fs, nil
}

// isoDateUUID formats an ISO9660 date as blkid's UUID. decided is false
// when the date is unset (all '0' digits and zero offset), so the caller
// tries the next date; an all-NUL date decides on no UUID, as in blkid.
func isoDateUUID(date []byte) (uuid string, decided bool) {
	digits, offset := date[:16], date[16]
	if bytes.Count(digits, []byte{'0'}) == 16 && offset == 0 {
		return "", false
	}
	if isZero(digits) {
		return "", true
	}
	var b strings.Builder
	for i, c := range digits {
		switch i {
		case 4, 6, 8, 10, 12, 14:
			b.WriteByte('-')
		}
		b.WriteByte(c)
	}
	return b.String(), true
}

func beUnits(b []byte) []uint16 {
	out := make([]uint16, 0, len(b)/2)
	for i := 0; i+1 < len(b); i += 2 {
		out = append(out, uint16(b[i])<<8|uint16(b[i+1]))
	}
	return out
}

func utf16Label(units []uint16) string {
	for i, u := range units {
		if u == 0 {
			units = units[:i]
			break
		}
	}
	return strings.TrimRight(string(utf16.Decode(units)), " \t\n\v\f\r")
}

// mergeJoliet rebuilds a label from the Joliet volume id (UTF-16BE, at most
// 16 characters) and the primary one (a restricted ASCII set, up to 32, '_'
// for what it can't hold): where the Joliet name is a prefix of the ASCII
// one, ignoring case and '_', take Joliet's characters and then the ASCII
// tail. ok is false when they disagree. This is libblkid's rule.
func mergeJoliet(joliet, ascii []byte) ([]uint16, bool) {
	n := min(len(joliet), len(ascii))
	out := make([]uint16, 0, n)
	u, a := 0, 0
	for ; u+1 < n && a < n; u, a = u+2, a+1 {
		hi := joliet[u]
		if hi >= 0xD8 && hi <= 0xDB && u+3 < n && joliet[u+2] >= 0xDC && joliet[u+2] <= 0xDF {
			out = append(out, uint16(joliet[u])<<8|uint16(joliet[u+1]))
			u += 2
		}
		jhi, jlo, ac := joliet[u], joliet[u+1], ascii[a]
		switch {
		case ac == '_':
			out = append(out, uint16(jhi)<<8|uint16(jlo))
		case jhi == 0 && jlo == '_':
			out = append(out, uint16(ac))
		case jhi == 0 && asciiUpper(ac) == asciiUpper(jlo):
			if ac >= 'A' && ac <= 'Z' {
				out = append(out, uint16(jlo))
			} else {
				out = append(out, uint16(ac))
			}
		default:
			return nil, false
		}
	}
	for ; a < n; a++ {
		out = append(out, uint16(ascii[a]))
	}
	return out, true
}

func asciiUpper(c byte) byte {
	if c >= 'a' && c <= 'z' {
		return c - 'a' + 'A'
	}
	return c
}

// XFS: big-endian superblock at 0.
func probeXFS(d dev) (FS, error) {
	sb, err := d.read(0, 120)
	if err != nil {
		return FS{}, err
	}
	if string(sb[0:4]) != "XFSB" {
		return FS{}, errNoMatch
	}
	bs := be32(sb[4:])
	if bs < 512 || bs > 65536 || bs&(bs-1) != 0 {
		return FS{}, errNoMatch
	}
	return FS{Type: "xfs", UUID: uuidString(sb[32:48]), Label: cString(sb[108:120])}, nil
}

// btrfs: superblock at 64 KiB.
func probeBtrfs(d dev) (FS, error) {
	const off = 0x10000
	sb, err := d.read(off, 0x12b+256)
	if err != nil {
		return FS{}, err
	}
	if string(sb[0x40:0x48]) != "_BHRfS_M" {
		return FS{}, errNoMatch
	}
	return FS{Type: "btrfs", UUID: uuidString(sb[0x20:0x30]), Label: cString(sb[0x12b : 0x12b+256])}, nil
}

// swap: signature in the last 10 bytes of the first page; the v1 header
// (label, UUID) sits at 1024.
func probeSwap(d dev) (FS, error) {
	for _, page := range []int64{4096, 8192, 16384, 32768, 65536} {
		sig, err := d.read(page-10, 10)
		if err != nil {
			if errors.Is(err, errNoMatch) {
				break
			}
			return FS{}, err
		}
		switch string(sig) {
		case "SWAP-SPACE":
			return FS{Type: "swap", Version: "0"}, nil
		case "SWAPSPACE2":
			hdr, err := d.read(1024, 44)
			if err != nil {
				return FS{}, err
			}
			if le32(hdr[0:]) != 1 {
				return FS{}, errNoMatch
			}
			return FS{Type: "swap", Version: "1", UUID: uuidString(hdr[12:28]), Label: cString(hdr[28:44])}, nil
		}
	}
	return FS{}, errNoMatch
}

// FAT.
const (
	fatNoName       = "NO NAME    "
	fat12Max        = 0xFF4
	fat16Max        = 0xFFF4
	fat32Max        = 0x0FFFFFF6
	fatDirEntrySize = 32
	fatAttrVolumeID = 0x08
	fatAttrDir      = 0x10
	fatAttrLongName = 0x0F
	fatAttrMask     = 0x3F
	fatMaxDirBytes  = 1 << 20 // bound on root-directory bytes scanned for the label
	fatMaxChain     = 100     // bound on FAT32 root-directory clusters followed
)

// fatBPB is the part of a FAT boot sector we use.
type fatBPB struct {
	sectorSize   int64
	clusterSize  int64 // sectors per cluster
	reserved     int64
	fats         int64
	rootEntries  int64
	fatLength16  int64
	fatLength32  int64
	rootCluster  uint32
	clusterCount int64
}

// parseFATBootSector validates a boot sector the way blkid does and returns
// the BPB, or errNoMatch.
func parseFATBootSector(b []byte) (fatBPB, error) {
	if len(b) < 512 {
		return fatBPB{}, errNoMatch
	}
	named := false
	for _, m := range []struct {
		off int
		s   string
	}{{0x52, "MSWIN"}, {0x52, "FAT32   "}, {0x36, "MSDOS"}, {0x36, "FAT16   "}, {0x36, "FAT12   "}, {0x36, "FAT     "}} {
		if string(b[m.off:m.off+len(m.s)]) == m.s {
			named = true
			break
		}
	}
	sig := b[510] == 0x55 && b[511] == 0xAA
	if !named {
		// Only the jump instruction or the 0x55AA mark: need the mark, and
		// rule out the FAT-like pseudo headers of JFS and HPFS.
		if !sig || string(b[0x36:0x3e]) == "JFS     " || string(b[0x36:0x3e]) == "HPFS    " {
			return fatBPB{}, errNoMatch
		}
	}
	p := fatBPB{
		sectorSize:  int64(le16(b[11:])),
		clusterSize: int64(b[13]),
		reserved:    int64(le16(b[14:])),
		fats:        int64(b[16]),
		rootEntries: int64(le16(b[17:])),
		fatLength16: int64(le16(b[22:])),
		fatLength32: int64(le32(b[36:])),
		rootCluster: le32(b[44:]),
	}
	media := b[21]
	if p.fats == 0 || p.reserved == 0 || !(media >= 0xf8 || media == 0xf0) {
		return fatBPB{}, errNoMatch
	}
	if !isPow2(p.clusterSize) || !isPow2(p.sectorSize) || p.sectorSize < 512 || p.sectorSize > 4096 {
		return fatBPB{}, errNoMatch
	}
	sectors := int64(le16(b[19:]))
	if sectors == 0 {
		sectors = int64(le32(b[32:]))
	}
	fatLength := p.fatLength16
	if fatLength == 0 {
		fatLength = p.fatLength32
	}
	dirSectors := (p.rootEntries*fatDirEntrySize + p.sectorSize - 1) / p.sectorSize
	data := sectors - (p.reserved + fatLength*p.fats + dirSectors)
	if data < 0 {
		return fatBPB{}, errNoMatch
	}
	p.clusterCount = data / p.clusterSize
	maxCount := int64(fat32Max)
	if p.fatLength16 != 0 {
		maxCount = fat16Max
	}
	if p.clusterCount > maxCount {
		return fatBPB{}, errNoMatch
	}
	return p, nil
}

func isPow2(n int64) bool { return n > 0 && n&(n-1) == 0 }

func probeFAT(d dev) (FS, error) {
	b, err := d.read(0, 512)
	if err != nil {
		return FS{}, err
	}
	p, err := parseFATBootSector(b)
	if err != nil {
		return FS{}, err
	}
	fs := FS{Type: "vfat"}
	var bootLabel, serial []byte
	var dirLabel []byte
	switch {
	case p.fatLength16 != 0:
		bootLabel, serial = b[43:54], b[39:43]
		fs.Version = "FAT16"
		if p.clusterCount < fat12Max {
			fs.Version = "FAT12"
		}
		rootStart := (p.reserved + p.fatLength16*p.fats) * p.sectorSize
		dirLabel, err = fatSearchLabel(d, rootStart, min(p.rootEntries, fatMaxDirBytes/fatDirEntrySize))
		if err != nil {
			return FS{}, err
		}
	case p.fatLength32 != 0:
		bootLabel, serial = b[71:82], b[67:71]
		fs.Version = "FAT32"
		dirLabel, err = fatSearchLabel32(d, p)
		if err != nil {
			return FS{}, err
		}
	default:
		return FS{}, errNoMatch
	}
	label := dirLabel
	if label == nil || string(label) == fatNoName {
		label = bootLabel
	}
	if string(label) != fatNoName {
		fs.Label = cString(label)
	}
	fs.UUID = fmt.Sprintf("%02X%02X-%02X%02X", serial[3], serial[2], serial[1], serial[0])
	return fs, nil
}

// fatSearchLabel scans n directory entries at off for the volume label.
func fatSearchLabel(d dev, off, n int64) ([]byte, error) {
	if n <= 0 {
		return nil, nil
	}
	buf, err := d.read(off, int(n*fatDirEntrySize))
	if err != nil {
		if errors.Is(err, errNoMatch) {
			return nil, nil // truncated image: fall back to the boot sector
		}
		return nil, err
	}
	for i := int64(0); i < n; i++ {
		e := buf[i*fatDirEntrySize : (i+1)*fatDirEntrySize]
		attr := e[11]
		if e[0] == 0x00 {
			break
		}
		if e[0] == 0xE5 || le16(e[20:]) != 0 || le16(e[26:]) != 0 || attr&fatAttrMask == fatAttrLongName {
			continue
		}
		if attr&(fatAttrVolumeID|fatAttrDir) == fatAttrVolumeID {
			name := bytes.Clone(e[:11])
			if name[0] == 0x05 {
				name[0] = 0xE5
			}
			return name, nil
		}
	}
	return nil, nil
}

// fatSearchLabel32 follows the FAT32 root directory's cluster chain.
func fatSearchLabel32(d dev, p fatBPB) ([]byte, error) {
	clusterBytes := p.clusterSize * p.sectorSize
	if clusterBytes > fatMaxDirBytes {
		return nil, nil
	}
	dataStart := p.reserved + p.fatLength32*p.fats
	entries := p.fatLength32 * p.sectorSize / 4
	next := int64(p.rootCluster)
	for loop := 0; next >= 2 && next < entries && loop < fatMaxChain; loop++ {
		off := (dataStart + (next-2)*p.clusterSize) * p.sectorSize
		label, err := fatSearchLabel(d, off, clusterBytes/fatDirEntrySize)
		if err != nil || label != nil {
			return label, err
		}
		ent, err := d.read(p.reserved*p.sectorSize+next*4, 4)
		if err != nil {
			if errors.Is(err, errNoMatch) {
				return nil, nil
			}
			return nil, err
		}
		next = int64(le32(ent) & 0x0FFFFFFF)
	}
	return nil, nil
}
