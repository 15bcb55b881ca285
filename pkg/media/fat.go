package media

import (
	"encoding/binary"
	"io/fs"

	"github.com/diskfs/go-diskfs/filesystem/fat12"
)

// FAT: the boot sector and the table are read here; go-diskfs's fat12
// package (whose FileSystem serves FAT16 and FAT32 too) reads directories
// and files over the table built here. go-diskfs's own FAT readers size
// the table from the boot sector unchecked (a 4 GiB allocation) and walk
// chains without loop detection (a chain through itself grows a slice
// until the process dies); neither is reached.

// bpb is what the boot sector says, checked.
type bpb struct {
	bits        int   // 12, 16 or 32
	sectorSize  int64 // bytes
	cluster     int64 // bytes per cluster
	reserved    int64 // sectors
	fats        int64
	fatSectors  int64
	rootEntries int64 // FAT12/16 fixed root directory
	rootCluster uint32
	total       int64 // sectors
	clusters    int64 // data clusters
	dataStart   int64 // bytes
	rootDirOff  int64 // bytes (FAT12/16)
	raw         []byte
}

func isPow2(n int64) bool { return n > 0 && n&(n-1) == 0 }

// parseBPB recognises a FAT boot sector (as blkid does: an OEM or FAT
// type string, or the 0x55AA mark) and reads its geometry. ok is false
// for anything that is not FAT; geometry that is FAT but impossible is
// refused later, by openFAT.
func parseBPB(b []byte) (bpb, bool) {
	if len(b) < 512 {
		return bpb{}, false
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
	if !named && (b[510] != 0x55 || b[511] != 0xAA || string(b[0x36:0x3e]) == "JFS     " || string(b[0x36:0x3e]) == "HPFS    ") {
		return bpb{}, false
	}
	media := b[21]
	p := bpb{
		sectorSize:  int64(binary.LittleEndian.Uint16(b[11:])),
		reserved:    int64(binary.LittleEndian.Uint16(b[14:])),
		fats:        int64(b[16]),
		rootEntries: int64(binary.LittleEndian.Uint16(b[17:])),
		total:       int64(binary.LittleEndian.Uint16(b[19:])),
		fatSectors:  int64(binary.LittleEndian.Uint16(b[22:])),
		raw:         b[:512],
	}
	spc := int64(b[13])
	if p.fats == 0 || p.reserved == 0 || !(media >= 0xf8 || media == 0xf0) ||
		!isPow2(spc) || !isPow2(p.sectorSize) || p.sectorSize < 512 || p.sectorSize > 4096 {
		return bpb{}, false
	}
	p.cluster = spc * p.sectorSize
	if p.total == 0 {
		p.total = int64(binary.LittleEndian.Uint32(b[32:]))
	}
	if p.fatSectors == 0 {
		p.fatSectors = int64(binary.LittleEndian.Uint32(b[36:]))
		p.bits = 32
		p.rootCluster = binary.LittleEndian.Uint32(b[44:])
	}
	rootSectors := (p.rootEntries*32 + p.sectorSize - 1) / p.sectorSize
	if p.bits == 32 {
		rootSectors = 0
	}
	p.rootDirOff = (p.reserved + p.fats*p.fatSectors) * p.sectorSize
	p.dataStart = p.rootDirOff + rootSectors*p.sectorSize
	data := p.total - p.reserved - p.fats*p.fatSectors - rootSectors
	if data < 0 {
		return bpb{}, false
	}
	p.clusters = data / spc
	if p.bits == 0 {
		switch {
		case p.clusters < 4085:
			p.bits = 12
		case p.clusters < 65525:
			p.bits = 16
		default:
			return bpb{}, false
		}
	}
	return p, true
}

// fatTable is the decoded FAT: go-diskfs's fat12.FATTable over values
// checked to hold no loop. Read-only.
type fatTable struct {
	bits   int
	values []uint32 // index: cluster; 0 and 1 hold end-of-chain
	root   uint32
	size   uint32
}

var _ fat12.FATTable = (*fatTable)(nil)

func (t *fatTable) eoc() uint32 {
	switch t.bits {
	case 12:
		return 0xFFF
	case 16:
		return 0xFFFF
	}
	return 0x0FFFFFFF
}

func (t *fatTable) ClusterValue(n uint32) uint32 {
	if int64(n) >= int64(len(t.values)) {
		return t.eoc()
	}
	return t.values[n]
}
func (t *fatTable) SetCluster(uint32, uint32) {} // read-only
func (t *fatTable) IsEOC(v uint32) bool {
	switch t.bits {
	case 12:
		return v >= 0xFF8 && v <= 0xFFF
	case 16:
		return v >= 0xFFF8 && v <= 0xFFFF
	}
	return v&0x0FFFFFF8 == 0x0FFFFFF8
}
func (t *fatTable) EOCMarker() uint32      { return t.eoc() }
func (t *fatTable) UnusedMarker() uint32   { return 0 }
func (t *fatTable) MaxCluster() uint32     { return uint32(len(t.values) - 1) }
func (t *fatTable) FATID() uint32          { return t.values[0] }
func (t *fatTable) RootDirCluster() uint32 { return t.root }
func (t *fatTable) Size() uint32           { return t.size }
func (t *fatTable) FromBytes([]byte)       {}
func (t *fatTable) Bytes() []byte          { return nil }

// next is the cluster after c in a chain, or 0 when the chain ends there
// (end mark, free, bad or out of range: go-diskfs stops or fails on each).
func (t *fatTable) next(c uint32) uint32 {
	v := t.ClusterValue(c)
	if v < 2 || v > t.MaxCluster() || t.IsEOC(v) {
		return 0
	}
	return v
}

// decodeFAT decodes the first FAT copy.
func decodeFAT(raw []byte, p bpb) *fatTable {
	n := p.clusters + 2
	t := &fatTable{bits: p.bits, values: make([]uint32, n), root: p.rootCluster, size: uint32(len(raw))}
	for i := int64(2); i < n; i++ {
		switch p.bits {
		case 12:
			off := i * 3 / 2
			v := uint32(binary.LittleEndian.Uint16(raw[off:]))
			if i&1 == 1 {
				v >>= 4
			}
			t.values[i] = v & 0xFFF
		case 16:
			t.values[i] = uint32(binary.LittleEndian.Uint16(raw[i*2:]))
		default:
			t.values[i] = binary.LittleEndian.Uint32(raw[i*4:]) & 0x0FFFFFFF
		}
	}
	t.values[0], t.values[1] = t.eoc(), t.eoc()
	return t
}

// checkLoops fails when any chain in the table comes back on itself.
// Linear: each cluster is entered once and finished once.
func (t *fatTable) checkLoops() error {
	const (
		open = 1 // on the walk in progress
		done = 2
	)
	state := make([]uint8, len(t.values))
	for start := uint32(2); int(start) < len(t.values); start++ {
		if state[start] != 0 {
			continue
		}
		c := start
		for c != 0 && state[c] == 0 {
			state[c] = open
			c = t.next(c)
		}
		if c != 0 && state[c] == open {
			return corrupt("FAT cluster chain from cluster %d loops at cluster %d", start, c)
		}
		for c := start; c != 0 && state[c] == open; c = t.next(c) {
			state[c] = done
		}
	}
	return nil
}

// chainBytes is the bytes of the chain from c, or -1 past limit.
func (t *fatTable) chainBytes(c uint32, cluster, limit int64) int64 {
	var n int64
	for ; c != 0; c = t.next(c) {
		n += cluster
		if n > limit {
			return -1
		}
	}
	return n
}

// openFAT checks the volume's geometry and table, walks its directories,
// and opens it with go-diskfs over the checked table.
func openFAT(dev *device, p bpb, lim Limits) (fs.FS, error) {
	bytesPerEntry := map[int]int64{12: 3, 16: 4, 32: 8} // per two entries
	fatBytes := p.fatSectors * p.sectorSize
	switch {
	case p.clusters < 1:
		return nil, corrupt("FAT volume without clusters")
	case p.clusters > lim.Clusters:
		return nil, corrupt("FAT volume of %d clusters, more than %d", p.clusters, lim.Clusters)
	case p.total*p.sectorSize > dev.size:
		return nil, corrupt("FAT volume of %d bytes on a device of %d", p.total*p.sectorSize, dev.size)
	case fatBytes*2 < (p.clusters+2)*bytesPerEntry[p.bits]:
		return nil, corrupt("FAT of %d bytes cannot hold %d clusters", fatBytes, p.clusters)
	case p.bits != 32 && p.rootEntries*32 > lim.Dir:
		return nil, corrupt("FAT root directory of %d entries, more than %d bytes", p.rootEntries, lim.Dir)
	case p.bits == 32 && p.rootEntries != 0:
		return nil, corrupt("FAT32 volume with a fixed root directory")
	}
	// The table needs the entries of the clusters only, not the whole FAT.
	need := min(fatBytes, ((p.clusters+2)*bytesPerEntry[p.bits]+1)/2+1)
	raw, err := dev.readFull(p.reserved*p.sectorSize, int(need))
	if err != nil {
		return nil, corrupt("reading the FAT: %v", err)
	}
	t := decodeFAT(raw, p)
	if err := t.checkLoops(); err != nil {
		return nil, err
	}
	if p.bits == 32 && t.next(p.rootCluster) == 0 && (p.rootCluster < 2 || p.rootCluster > t.MaxCluster() || t.ClusterValue(p.rootCluster) == 0) {
		return nil, corrupt("FAT32 root directory at cluster %d is not allocated", p.rootCluster)
	}
	if err := walkFAT(dev, p, t, lim); err != nil {
		return nil, err
	}
	var ebpb *fat12.Dos40EBPB
	rootEntries := 0
	if p.bits != 32 {
		rootEntries = int(p.rootEntries)
		if ebpb, err = fat12.Dos40EBPBFromBytesOnly(p.raw[11:]); err != nil {
			ebpb = nil // used for the label only; never read here
		}
	}
	fatStart := uint64(p.reserved * p.sectorSize)
	return fat12.NewFileSystem(dev, ebpb, t, uint32(p.dataStart), int(p.cluster), dev.size, 0,
		p.rootDirOff, rootEntries, fatStart, fatStart+uint64(fatBytes)), nil
}

// walkFAT reads every directory go-diskfs could read — the root, then each
// entry it parses as a subdirectory — and checks their size, depth and
// number of entries. Entries are parsed as go-diskfs parses them (stop at
// a 0 byte, skip deleted and long-name slots).
func walkFAT(dev *device, p bpb, t *fatTable, lim Limits) error {
	type dir struct {
		cluster uint32 // 0: the FAT12/16 fixed root
		depth   int
	}
	queue := []dir{{cluster: 0}}
	if p.bits == 32 {
		queue[0].cluster = p.rootCluster
	}
	seen := map[uint32]bool{queue[0].cluster: true}
	nodes := 0
	for len(queue) > 0 {
		d := queue[0]
		queue = queue[1:]
		var b []byte
		if d.cluster == 0 {
			var err error
			if b, err = dev.readFull(p.rootDirOff, int(p.rootEntries*32)); err != nil {
				return corrupt("reading the root directory: %v", err)
			}
		} else {
			n := t.chainBytes(d.cluster, p.cluster, lim.Dir)
			if n < 0 {
				return corrupt("FAT directory at cluster %d larger than %d bytes", d.cluster, lim.Dir)
			}
			b = make([]byte, 0, n)
			for c := d.cluster; c != 0; c = t.next(c) {
				part, err := dev.readFull(p.dataStart+int64(c-2)*p.cluster, int(p.cluster))
				if err != nil {
					return corrupt("reading directory cluster %d: %v", c, err)
				}
				b = append(b, part...)
			}
		}
		longName := false // a long-name slot since the last entry
		for i := 0; i+32 <= len(b); i += 32 {
			e := b[i : i+32]
			if e[0] == 0 {
				break
			}
			if e[0] == 0xE5 {
				continue
			}
			if e[11] == 0x0F {
				longName = true
				continue
			}
			named := longName
			longName = false
			if nodes++; nodes > lim.Nodes {
				return corrupt("FAT volume with more than %d directory entries", lim.Nodes)
			}
			if e[11]&0x10 == 0 {
				continue
			}
			c := uint32(binary.LittleEndian.Uint16(e[26:])) | uint32(binary.LittleEndian.Uint16(e[20:]))<<16
			root := p.bits != 32 && c == 0 // go-diskfs reads cluster 0 as the fixed root
			if !root && (c < 2 || c > t.MaxCluster() || t.ClusterValue(c) == 0) {
				continue // go-diskfs refuses it, or reads nothing
			}
			if seen[c] {
				// "." and ".." name a directory again (and go-diskfs
				// never lists or looks them up); any other entry naming
				// one, a dot entry with a long name included, would make
				// it its own descendant.
				if n := string(e[:11]); !named && (n == ".          " || n == "..         ") {
					continue
				}
				return corrupt("FAT directory at cluster %d linked twice", c)
			}
			if d.depth+1 > lim.Depth {
				return corrupt("FAT directories nested deeper than %d", lim.Depth)
			}
			seen[c] = true
			queue = append(queue, dir{cluster: c, depth: d.depth + 1})
		}
	}
	return nil
}
