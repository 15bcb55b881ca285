// Package udf reads files from a UDF filesystem (ECMA-167 / OSTA UDF
// 1.02–2.60) held in an io.ReaderAt, the format of Azure's provisioning
// DVD, without a kernel driver or a mount.
//
// Contract:
//   - Read-only and pure: everything comes from the io.ReaderAt; a Reader
//     is safe for concurrent use.
//   - Supported: the Volume Recognition Sequence (NSR02/NSR03), the Anchor
//     Volume Descriptor Pointer at sector 256 for block sizes 2048, 512,
//     1024 and 4096, the Main Volume Descriptor Sequence (partition and
//     logical volume descriptors, pointers to continuations), type 1
//     partition maps, sparable partitions read as type 1 (no remapping),
//     UDF 2.50 metadata partitions, File Entries and Extended File
//     Entries with short, long, extended or embedded allocation
//     descriptors and allocation extent continuations, and OSTA CS0 file
//     names (8- and 16-bit).
//   - Not supported: virtual partitions (VAT, CD-R multisession), strategy
//     4096 ICB chains, named streams. Such volumes fail with an error.
//   - Every structure is bounds-checked and every loop bounded, so
//     arbitrary bytes give an error, never a panic or a hang; files are
//     limited to MaxFileSize, directories to MaxDirSize.
package udf

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"
	"time"
	"unicode/utf16"
)

// ErrNotUDF means the volume has no UDF recognition sequence or anchor.
var ErrNotUDF = errors.New("not a UDF volume")

// MaxFileSize bounds a file read.
const MaxFileSize = 64 << 20

// MaxDirSize bounds a directory read (as pkg/media bounds ISO9660 and FAT
// directories): a directory's entries take more memory than its bytes.
const MaxDirSize = 1 << 20

// Descriptor tag identifiers.
const (
	tagPVD  = 1
	tagAVDP = 2
	tagVDP  = 3
	tagPD   = 5
	tagLVD  = 6
	tagTD   = 8
	tagFSD  = 256
	tagFID  = 257
	tagAED  = 258
	tagFE   = 261
	tagEFE  = 266
)

const (
	vrsStart       = 32768
	anchorSector   = 256
	maxVDSDescs    = 512
	maxVDPHops     = 16
	maxExtents     = 4096
	maxAEDHops     = 256
	maxPathDepth   = 64
	fileTypeDir    = 4
	charDirectory  = 0x02
	charDeleted    = 0x04
	charParent     = 0x08
	adShort        = 0
	adLong         = 1
	adExtended     = 2
	adEmbedded     = 3
	extentRecorded = 0
	extentNextAD   = 3
)

// lbAddr is a logical block in a partition (by reference number).
type lbAddr struct {
	block uint32
	part  uint16
}

// extent is a run of bytes at a logical block, of a recording type.
type extent struct {
	length uint32
	kind   uint8
	at     lbAddr
}

type partition struct {
	start, length uint32 // physical sectors, from the partition descriptor
	// meta, for a metadata partition, are the metadata file's extents in
	// the physical partition.
	meta     []extent
	metadata bool
}

// Reader is an opened UDF volume. It implements fs.FS.
type Reader struct {
	r     io.ReaderAt
	size  int64
	bs    int64
	parts []partition
	root  lbAddr
	label string
}

var _ fs.FS = (*Reader)(nil)

// Label is the logical volume identifier (what blkid reports as LABEL).
func (u *Reader) Label() string { return u.label }

// Open reads the volume structure of the UDF filesystem in r (size bytes;
// 0 or less means unknown).
func Open(r io.ReaderAt, size int64) (*Reader, error) {
	u := &Reader{r: r, size: size}
	if !u.recognised() {
		return nil, ErrNotUDF
	}
	var anchor []byte
	for _, bs := range []int64{2048, 512, 1024, 4096} {
		b, err := u.readAt(anchorSector*bs, int(bs))
		if err != nil {
			continue
		}
		if id, ok := tag(b, anchorSector); ok && id == tagAVDP {
			u.bs, anchor = bs, b
			break
		}
	}
	if anchor == nil {
		return nil, fmt.Errorf("%w: no anchor volume descriptor at sector %d", ErrNotUDF, anchorSector)
	}
	if err := u.readVDS(le32(anchor[16:]), le32(anchor[20:])); err != nil {
		return nil, err
	}
	return u, nil
}

// recognised looks for NSR02/NSR03 in the volume recognition sequence.
func (u *Reader) recognised() bool {
	for i := range int64(64) {
		b, err := u.readAt(vrsStart+i*2048, 7)
		if err != nil {
			return false
		}
		switch string(b[1:6]) {
		case "NSR02", "NSR03":
			return true
		case "BEA01", "CD001", "CDW02", "BOOT2", "TEA01":
			continue
		}
		if b[1] == 0 {
			// The sequence ended (an empty descriptor).
			return false
		}
	}
	return false
}

func (u *Reader) readAt(off int64, n int) ([]byte, error) {
	if off < 0 || n < 0 || (u.size > 0 && off+int64(n) > u.size) {
		return nil, fmt.Errorf("udf: read of %d bytes at %d beyond the volume", n, off)
	}
	b := make([]byte, n)
	if got, err := u.r.ReadAt(b, off); got < n {
		if err == nil {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("udf: reading %d bytes at %d: %w", n, off, err)
	}
	return b, nil
}

func le16(b []byte) uint16 { return binary.LittleEndian.Uint16(b) }
func le32(b []byte) uint32 { return binary.LittleEndian.Uint32(b) }
func le64(b []byte) uint64 { return binary.LittleEndian.Uint64(b) }

// tag checks a descriptor tag (its checksum, and its location when loc is
// not negative) and returns the identifier.
func tag(b []byte, loc int64) (uint16, bool) {
	if len(b) < 16 {
		return 0, false
	}
	var sum byte
	for i := range 16 {
		if i != 4 {
			sum += b[i]
		}
	}
	if sum != b[4] {
		return 0, false
	}
	if loc >= 0 && int64(le32(b[12:])) != loc {
		return 0, false
	}
	return le16(b), true
}

// readVDS walks the main volume descriptor sequence.
func (u *Reader) readVDS(length, loc uint32) error {
	type pd struct{ start, length uint32 }
	pds := map[uint16]pd{}
	var lvd []byte
	descs, hops := 0, 0
	for n := uint32(0); n < length/uint32(u.bs); n++ {
		if descs++; descs > maxVDSDescs {
			return errors.New("udf: volume descriptor sequence too long")
		}
		sector := int64(loc) + int64(n)
		b, err := u.readAt(sector*u.bs, int(u.bs))
		if err != nil {
			return err
		}
		id, ok := tag(b, sector)
		if !ok {
			break
		}
		switch id {
		case tagPD:
			pds[le16(b[22:])] = pd{start: le32(b[188:]), length: le32(b[192:])}
		case tagLVD:
			lvd = b
		case tagVDP:
			if hops++; hops > maxVDPHops {
				return errors.New("udf: too many volume descriptor pointers")
			}
			length, loc, n = le32(b[20:]), le32(b[24:]), ^uint32(0) // n wraps to 0
			continue
		case tagTD:
			n = length // stop
		}
	}
	if lvd == nil {
		return errors.New("udf: no logical volume descriptor")
	}
	if bs := le32(lvd[212:]); int64(bs) != u.bs {
		return fmt.Errorf("udf: logical block size %d differs from the sector size %d", bs, u.bs)
	}
	u.label = dstring(lvd[84:212])
	fsd := longAD(lvd[248:])
	nmaps := le32(lvd[268:])
	maps := lvd[440:]
	if tl := le32(lvd[264:]); int(tl) < len(maps) {
		maps = maps[:tl]
	}
	for i := uint32(0); i < nmaps; i++ {
		if len(maps) < 2 || int(maps[1]) > len(maps) || maps[1] < 6 {
			return errors.New("udf: truncated partition map")
		}
		m := maps[:maps[1]]
		maps = maps[maps[1]:]
		switch m[0] {
		case 1:
			p, ok := pds[le16(m[4:])]
			if !ok {
				return fmt.Errorf("udf: no partition descriptor for partition %d", le16(m[4:]))
			}
			u.parts = append(u.parts, partition{start: p.start, length: p.length})
		case 2:
			if len(m) < 64 {
				return errors.New("udf: truncated type 2 partition map")
			}
			ident := strings.TrimRight(string(m[5:28]), "\x00")
			p, ok := pds[le16(m[38:])]
			if !ok {
				return fmt.Errorf("udf: no partition descriptor for partition %d", le16(m[38:]))
			}
			switch ident {
			case "*UDF Sparable Partition":
				u.parts = append(u.parts, partition{start: p.start, length: p.length})
			case "*UDF Metadata Partition":
				u.parts = append(u.parts, partition{start: p.start, length: p.length, metadata: true})
			default:
				return fmt.Errorf("udf: unsupported partition map %q", ident)
			}
		default:
			return fmt.Errorf("udf: unknown partition map type %d", m[0])
		}
	}
	// Metadata partitions: read the metadata file, whose entry is in the
	// physical partition of the same partition descriptor.
	for i, n := 0, len(u.parts); i < n; i++ {
		if !u.parts[i].metadata {
			continue
		}
		loc, ok := u.metadataFileLocation(lvd, i)
		if !ok {
			return errors.New("udf: metadata partition map not found")
		}
		u.parts = append(u.parts, partition{start: u.parts[i].start, length: u.parts[i].length})
		fe, err := u.entry(lbAddr{block: loc, part: uint16(len(u.parts) - 1)})
		if err != nil {
			return fmt.Errorf("udf: metadata file: %w", err)
		}
		if fe.adType == adEmbedded {
			return errors.New("udf: embedded metadata file")
		}
		u.parts[i].meta = fe.extents
	}
	b, err := u.block(fsd.at)
	if err != nil {
		return fmt.Errorf("udf: file set descriptor: %w", err)
	}
	if id, ok := tag(b, int64(fsd.at.block)); !ok || id != tagFSD {
		return errors.New("udf: no file set descriptor")
	}
	u.root = longAD(b[400:]).at
	return nil
}

// metadataFileLocation finds the i-th partition map of lvd (a metadata
// map) and returns its metadata file location.
func (u *Reader) metadataFileLocation(lvd []byte, i int) (uint32, bool) {
	maps := lvd[440:]
	for j := 0; len(maps) >= 2 && maps[1] >= 2 && int(maps[1]) <= len(maps); j++ {
		m := maps[:maps[1]]
		if j == i {
			if m[0] == 2 && len(m) >= 44 {
				return le32(m[40:]), true
			}
			return 0, false
		}
		maps = maps[maps[1]:]
	}
	return 0, false
}

func longAD(b []byte) extent {
	l := le32(b)
	return extent{length: l & 0x3FFFFFFF, kind: uint8(l >> 30), at: lbAddr{block: le32(b[4:]), part: le16(b[8:])}}
}

// offset is the byte offset of a logical block.
func (u *Reader) offset(a lbAddr) (int64, error) {
	if int(a.part) >= len(u.parts) {
		return 0, fmt.Errorf("udf: partition reference %d out of range", a.part)
	}
	p := u.parts[a.part]
	if !p.metadata {
		if a.block >= p.length && p.length != 0 {
			return 0, fmt.Errorf("udf: block %d beyond partition %d", a.block, a.part)
		}
		return (int64(p.start) + int64(a.block)) * u.bs, nil
	}
	off := int64(a.block) * u.bs
	for _, e := range p.meta {
		if off < int64(e.length) {
			return (int64(p.start)+int64(e.at.block))*u.bs + off, nil
		}
		off -= int64(e.length)
	}
	return 0, fmt.Errorf("udf: block %d beyond the metadata partition", a.block)
}

func (u *Reader) block(a lbAddr) ([]byte, error) {
	off, err := u.offset(a)
	if err != nil {
		return nil, err
	}
	return u.readAt(off, int(u.bs))
}

// fileEntry is what a (extended) file entry says about a file.
type fileEntry struct {
	dir      bool
	size     uint64
	mtime    time.Time
	adType   int
	embedded []byte
	extents  []extent
}

// entry reads the file entry at a.
func (u *Reader) entry(a lbAddr) (*fileEntry, error) {
	b, err := u.block(a)
	if err != nil {
		return nil, err
	}
	id, ok := tag(b, int64(a.block))
	if !ok {
		return nil, fmt.Errorf("udf: bad descriptor tag at block %d", a.block)
	}
	var base int
	var mtime []byte
	switch id {
	case tagFE:
		base, mtime = 176, b[84:96]
	case tagEFE:
		base, mtime = 216, b[92:104]
	default:
		return nil, fmt.Errorf("udf: block %d holds descriptor %d, not a file entry", a.block, id)
	}
	if st := le16(b[20:]); st != 4 {
		return nil, fmt.Errorf("udf: ICB strategy %d not supported", st)
	}
	fe := &fileEntry{
		dir:    b[27] == fileTypeDir,
		size:   le64(b[56:]),
		mtime:  timestamp(mtime),
		adType: int(le16(b[34:]) & 7),
	}
	var lea, lad uint32
	if id == tagFE {
		lea, lad = le32(b[168:]), le32(b[172:])
	} else {
		lea, lad = le32(b[208:]), le32(b[212:])
	}
	start := int64(base) + int64(lea)
	end := start + int64(lad)
	if end > int64(len(b)) {
		return nil, fmt.Errorf("udf: file entry at block %d overruns its block", a.block)
	}
	ads := b[start:end]
	if fe.size > MaxFileSize {
		return nil, fmt.Errorf("udf: file of %d bytes is larger than %d", fe.size, MaxFileSize)
	}
	if fe.adType == adEmbedded {
		if fe.size > uint64(len(ads)) {
			return nil, fmt.Errorf("udf: embedded file of %d bytes in %d", fe.size, len(ads))
		}
		fe.embedded = ads[:fe.size]
		return fe, nil
	}
	fe.extents, err = u.extents(ads, fe.adType, a.part)
	return fe, err
}

// extents decodes allocation descriptors, following continuations.
func (u *Reader) extents(ads []byte, adType int, part uint16) ([]extent, error) {
	var out []extent
	for hops := 0; ; hops++ {
		if hops > maxAEDHops {
			return nil, errors.New("udf: too many allocation extent descriptors")
		}
		var next *extent
		for len(ads) > 0 {
			var e extent
			switch adType {
			case adShort:
				if len(ads) < 8 {
					ads = nil
					continue
				}
				l := le32(ads)
				e = extent{length: l & 0x3FFFFFFF, kind: uint8(l >> 30), at: lbAddr{block: le32(ads[4:]), part: part}}
				ads = ads[8:]
			case adLong:
				if len(ads) < 16 {
					ads = nil
					continue
				}
				e = longAD(ads)
				ads = ads[16:]
			case adExtended:
				if len(ads) < 20 {
					ads = nil
					continue
				}
				l := le32(ads)
				e = extent{length: l & 0x3FFFFFFF, kind: uint8(l >> 30), at: lbAddr{block: le32(ads[12:]), part: le16(ads[16:])}}
				ads = ads[20:]
			default:
				return nil, fmt.Errorf("udf: allocation descriptor type %d", adType)
			}
			if e.length == 0 {
				ads = nil
				continue
			}
			if e.kind == extentNextAD {
				n := e
				next = &n
				ads = nil
				continue
			}
			if len(out) >= maxExtents {
				return nil, errors.New("udf: too many extents")
			}
			out = append(out, e)
		}
		if next == nil {
			return out, nil
		}
		b, err := u.block(next.at)
		if err != nil {
			return nil, err
		}
		if id, ok := tag(b, int64(next.at.block)); !ok || id != tagAED {
			return nil, errors.New("udf: bad allocation extent descriptor")
		}
		l := int64(le32(b[20:]))
		if 24+l > int64(len(b)) {
			return nil, errors.New("udf: allocation extent descriptor overruns its block")
		}
		ads = b[24 : 24+l]
		part = next.at.part
	}
}

// data reads a file's content.
func (u *Reader) data(fe *fileEntry) ([]byte, error) {
	if fe.adType == adEmbedded {
		return bytes.Clone(fe.embedded), nil
	}
	out := make([]byte, 0, fe.size)
	for _, e := range fe.extents {
		if uint64(len(out)) >= fe.size {
			break
		}
		n := min(uint64(e.length), fe.size-uint64(len(out)))
		if e.kind != extentRecorded {
			out = append(out, make([]byte, n)...)
			continue
		}
		off, err := u.offset(e.at)
		if err != nil {
			return nil, err
		}
		b, err := u.readAt(off, int(n))
		if err != nil {
			return nil, err
		}
		out = append(out, b...)
	}
	if uint64(len(out)) < fe.size {
		out = append(out, make([]byte, fe.size-uint64(len(out)))...)
	}
	return out, nil
}

// dirent is one directory entry.
type dirent struct {
	name string
	icb  lbAddr
	dir  bool
}

// readDir lists a directory's entries (not the parent, not deleted ones).
func (u *Reader) readDir(fe *fileEntry) ([]dirent, error) {
	if fe.size > MaxDirSize {
		return nil, fmt.Errorf("udf: directory of %d bytes is larger than %d", fe.size, MaxDirSize)
	}
	b, err := u.data(fe)
	if err != nil {
		return nil, err
	}
	var out []dirent
	for len(b) >= 38 {
		if id, ok := tag(b, -1); !ok || id != tagFID {
			return nil, errors.New("udf: bad file identifier descriptor")
		}
		chars, lfi := b[18], int(b[19])
		liu := int(le16(b[36:]))
		n := (38 + liu + lfi + 3) &^ 3
		if 38+liu+lfi > len(b) {
			return nil, errors.New("udf: truncated file identifier descriptor")
		}
		icb := longAD(b[20:])
		name := cs0(b[38+liu : 38+liu+lfi])
		if chars&(charParent|charDeleted) == 0 && name != "" {
			out = append(out, dirent{name: name, icb: icb.at, dir: chars&charDirectory != 0})
		}
		if n > len(b) {
			break
		}
		b = b[n:]
	}
	return out, nil
}

// cs0 decodes an OSTA CS0 compressed-unicode name.
func cs0(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	switch b[0] {
	case 8, 254:
		r := make([]rune, len(b)-1)
		for i, c := range b[1:] {
			r[i] = rune(c)
		}
		return string(r)
	case 16, 255:
		u := make([]uint16, (len(b)-1)/2)
		for i := range u {
			u[i] = uint16(b[1+2*i])<<8 | uint16(b[2+2*i])
		}
		return string(utf16.Decode(u))
	}
	return ""
}

// dstring decodes a fixed-length dstring field (its last byte is the
// used length).
func dstring(b []byte) string {
	n := int(b[len(b)-1])
	if n == 0 || n > len(b)-1 {
		return ""
	}
	return strings.TrimRight(cs0(b[:n]), " \x00")
}

// timestamp decodes an ECMA-167 timestamp (UTC offset ignored).
func timestamp(b []byte) time.Time {
	y := int(int16(le16(b[2:])))
	if y == 0 {
		return time.Time{}
	}
	return time.Date(y, time.Month(b[4]), int(b[5]), int(b[6]), int(b[7]), int(b[8]), 0, time.UTC)
}

// lookup walks name from the root.
func (u *Reader) lookup(name string) (*fileEntry, string, error) {
	fe, err := u.entry(u.root)
	if err != nil {
		return nil, "", err
	}
	if name == "." {
		return fe, ".", nil
	}
	parts := strings.Split(name, "/")
	if len(parts) > maxPathDepth {
		return nil, "", fs.ErrNotExist
	}
	for _, p := range parts {
		if !fe.dir {
			return nil, "", fs.ErrNotExist
		}
		ents, err := u.readDir(fe)
		if err != nil {
			return nil, "", err
		}
		var found *dirent
		for i := range ents {
			if ents[i].name == p {
				found = &ents[i]
				break
			}
		}
		if found == nil {
			return nil, "", fs.ErrNotExist
		}
		if fe, err = u.entry(found.icb); err != nil {
			return nil, "", err
		}
	}
	return fe, path.Base(name), nil
}

// Open implements fs.FS.
func (u *Reader) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	fe, base, err := u.lookup(name)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	info := fileInfo{name: base, size: int64(fe.size), dir: fe.dir, mtime: fe.mtime}
	if fe.dir {
		ents, err := u.readDir(fe)
		if err != nil {
			return nil, &fs.PathError{Op: "open", Path: name, Err: err}
		}
		d := &dir{info: info}
		for _, e := range ents {
			d.ents = append(d.ents, dirEntry{u: u, e: e})
		}
		return d, nil
	}
	b, err := u.data(fe)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return &file{info: info, Reader: bytes.NewReader(b)}, nil
}

type fileInfo struct {
	name  string
	size  int64
	dir   bool
	mtime time.Time
}

func (i fileInfo) Name() string { return i.name }
func (i fileInfo) Size() int64  { return i.size }
func (i fileInfo) Mode() fs.FileMode {
	if i.dir {
		return fs.ModeDir | 0o555
	}
	return 0o444
}
func (i fileInfo) ModTime() time.Time { return i.mtime }
func (i fileInfo) IsDir() bool        { return i.dir }
func (i fileInfo) Sys() any           { return nil }

type file struct {
	info fileInfo
	*bytes.Reader
}

func (f *file) Stat() (fs.FileInfo, error) { return f.info, nil }
func (f *file) Close() error               { return nil }

type dir struct {
	info fileInfo
	ents []dirEntry
	pos  int
}

func (d *dir) Stat() (fs.FileInfo, error) { return d.info, nil }
func (d *dir) Close() error               { return nil }
func (d *dir) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: d.info.name, Err: errors.New("is a directory")}
}

func (d *dir) ReadDir(n int) ([]fs.DirEntry, error) {
	rest := d.ents[d.pos:]
	if n > 0 && len(rest) == 0 {
		return nil, io.EOF
	}
	if n > 0 && n < len(rest) {
		rest = rest[:n]
	}
	d.pos += len(rest)
	out := make([]fs.DirEntry, len(rest))
	for i := range rest {
		out[i] = rest[i]
	}
	return out, nil
}

type dirEntry struct {
	u *Reader
	e dirent
}

func (d dirEntry) Name() string { return d.e.name }
func (d dirEntry) IsDir() bool  { return d.e.dir }
func (d dirEntry) Type() fs.FileMode {
	if d.e.dir {
		return fs.ModeDir
	}
	return 0
}

func (d dirEntry) Info() (fs.FileInfo, error) {
	fe, err := d.u.entry(d.e.icb)
	if err != nil {
		return nil, err
	}
	return fileInfo{name: d.e.name, size: int64(fe.size), dir: fe.dir, mtime: fe.mtime}, nil
}
