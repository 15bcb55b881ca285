package media

import (
	"bytes"
	"encoding/binary"
	"io/fs"

	"github.com/diskfs/go-diskfs/filesystem/iso9660"
)

// ISO9660: go-diskfs reads the volume, after the checks here. It sizes
// allocations from on-disk numbers it does not check — the path table
// size, a directory's size (from its record, or from offset 10 of the
// block a path-table entry points at), a Rock Ridge continuation area's
// length, a relocated directory's record. Each of those numbers, wherever
// go-diskfs may find it, is checked here first; the checks look at more
// than go-diskfs reads (every primary and supplementary descriptor, every
// CE and CL pattern in a record), never less. go-diskfs also reads any
// record a path names as a directory, file or not: guardFS hands a path on
// only when each directory in it is one (maxDir).

const (
	isoBlock    = 2048 // go-diskfs's block size for a volume it reads
	isoSystem   = 16 * isoBlock
	isoMaxVDs   = 64
	isoMaxHops  = 16 // Rock Ridge continuation areas followed from one record
	isoMaxCE    = isoBlock
	isoRecMin   = 34
	isoFlagDir  = 0x02
	vdPrimary   = 1
	vdSupplemen = 2
	vdEnd       = 255
)

// isISO9660 looks for the first volume descriptor's "CD001".
func isISO9660(dev *device) bool {
	b, err := dev.readFull(isoSystem+1, 5)
	return err == nil && string(b) == "CD001"
}

// isoCheck is one volume's check in progress.
type isoCheck struct {
	dev   *device
	lim   Limits
	nodes int
	seen  map[uint32]bool // directory extents walked
	moved map[uint32]bool // relocated directory records checked
	queue []isoDir
}

type isoDir struct {
	loc, size uint32
	depth     int
}

// openISO checks the volume and opens it with go-diskfs.
func openISO(dev *device, lim Limits) (fs.FS, error) {
	c := &isoCheck{dev: dev, lim: lim, seen: map[uint32]bool{}, moved: map[uint32]bool{}}
	if err := c.descriptors(); err != nil {
		return nil, err
	}
	if err := c.walk(); err != nil {
		return nil, err
	}
	return iso9660.Read(dev, dev.size, 0, 0)
}

// descriptors checks the volume descriptor set, each primary and
// supplementary descriptor's path table, and queues their root
// directories.
func (c *isoCheck) descriptors() error {
	for i := range isoMaxVDs {
		b, err := c.dev.readFull(isoSystem+int64(i)*isoBlock, isoBlock)
		if err != nil {
			return corrupt("reading volume descriptor %d: %v", i, err)
		}
		switch b[0] {
		case vdEnd:
			return nil
		case vdPrimary, vdSupplemen:
			if err := c.pathTable(b); err != nil {
				return err
			}
			if err := c.record(b[156:156+isoRecMin], 0); err != nil {
				return err
			}
		}
	}
	return corrupt("no volume descriptor set terminator in %d descriptors", isoMaxVDs)
}

// pathTable checks a descriptor's (L) path table: its size, and the size
// go-diskfs reads at offset 10 of each directory it points at.
func (c *isoCheck) pathTable(vd []byte) error {
	size := binary.LittleEndian.Uint32(vd[132:])
	if int64(size) > c.lim.Dir {
		return corrupt("path table of %d bytes, more than %d", size, c.lim.Dir)
	}
	// go-diskfs computes the location in 32 bits, wrapping.
	loc := binary.LittleEndian.Uint32(vd[140:]) * uint32(binary.LittleEndian.Uint16(vd[128:]))
	pt, err := c.dev.readFull(int64(loc), int(size))
	if err != nil {
		return nil // go-diskfs fails too, or skips a Joliet table
	}
	for i := 0; i+8 <= len(pt); {
		n := int(pt[i])
		if n == 0 {
			break
		}
		if err := c.dirSizeAt(binary.LittleEndian.Uint32(pt[i+2:])); err != nil {
			return err
		}
		i += 8 + n + n%2
	}
	return nil
}

// dirSizeAt checks the directory size go-diskfs reads at block loc.
func (c *isoCheck) dirSizeAt(loc uint32) error {
	if loc == 0 {
		return nil
	}
	b, err := c.dev.readFull(int64(loc)*isoBlock+10, 4)
	if err != nil {
		return nil // go-diskfs fails the same read
	}
	if size := binary.LittleEndian.Uint32(b); int64(size) > c.lim.Dir {
		return corrupt("directory at block %d of %d bytes, more than %d", loc, size, c.lim.Dir)
	}
	return nil
}

// record checks one directory record (rec is exactly its bytes) and
// queues it when it is a directory.
func (c *isoCheck) record(rec []byte, depth int) error {
	if len(rec) < isoRecMin {
		return nil // go-diskfs refuses it
	}
	if c.nodes++; c.nodes > c.lim.Nodes {
		return corrupt("more than %d directory records", c.lim.Nodes)
	}
	loc := binary.LittleEndian.Uint32(rec[2:])
	size := binary.LittleEndian.Uint32(rec[10:])
	if int64(loc)*isoBlock+int64(size) > c.dev.size {
		return corrupt("record at block %d of %d bytes beyond the volume's %d", loc, size, c.dev.size)
	}
	if err := c.susp(rec[isoRecMin-1:]); err != nil {
		return err
	}
	if rec[25]&isoFlagDir == 0 {
		return nil
	}
	if int64(size) > c.lim.Dir {
		return corrupt("directory at block %d of %d bytes, more than %d", loc, size, c.lim.Dir)
	}
	if c.seen[loc] {
		// "." and ".." name a directory again; any other record naming
		// one would make it its own descendant (a path that never ends).
		if rec[32] == 1 && (rec[33] == 0 || rec[33] == 1) {
			return nil
		}
		return corrupt("directory at block %d linked twice", loc)
	}
	if depth > c.lim.Depth {
		return corrupt("directories nested deeper than %d", c.lim.Depth)
	}
	c.seen[loc] = true
	c.queue = append(c.queue, isoDir{loc: loc, size: size, depth: depth})
	return nil
}

// susp checks the Rock Ridge entries go-diskfs may follow in b (a
// record's bytes, or a continuation area): continuation areas (CE) and
// relocated directories (CL), wherever their signature appears.
func (c *isoCheck) susp(b []byte) error {
	type area struct{ loc, off, n uint32 }
	seen := map[area]bool{}
	todo := []struct {
		b    []byte
		hops int
	}{{b, 0}}
	for len(todo) > 0 {
		t := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		for i := 0; i+4 <= len(t.b); i++ {
			switch {
			case bytes.HasPrefix(t.b[i:], []byte{'C', 'E', 28, 1}) && i+24 <= len(t.b):
				a := area{binary.LittleEndian.Uint32(t.b[i+4:]), binary.LittleEndian.Uint32(t.b[i+12:]), binary.LittleEndian.Uint32(t.b[i+20:])}
				if a.n > isoMaxCE {
					return corrupt("Rock Ridge continuation area of %d bytes, more than %d", a.n, isoMaxCE)
				}
				if seen[a] || t.hops+1 > isoMaxHops {
					return corrupt("Rock Ridge continuation areas loop or chain past %d (block %d)", isoMaxHops, a.loc)
				}
				seen[a] = true
				more, err := c.dev.readFull(int64(a.loc)*isoBlock+int64(a.off), int(a.n))
				if err != nil {
					continue // go-diskfs fails the same read
				}
				todo = append(todo, struct {
					b    []byte
					hops int
				}{more, t.hops + 1})
			case bytes.HasPrefix(t.b[i:], []byte{'C', 'L', 12, 1}) && i+8 <= len(t.b):
				if err := c.relocated(binary.LittleEndian.Uint32(t.b[i+4:])); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// relocated checks the record go-diskfs reads for a relocated directory
// (Rock Ridge CL) at block loc.
func (c *isoCheck) relocated(loc uint32) error {
	if c.moved[loc] {
		return nil
	}
	c.moved[loc] = true
	b, err := c.dev.readFull(int64(loc)*isoBlock, isoBlock)
	if err != nil || int(b[0]) < isoRecMin {
		return nil
	}
	rec := b[:b[0]]
	size := binary.LittleEndian.Uint32(rec[10:])
	if int64(size) > c.lim.Dir {
		return corrupt("relocated directory at block %d of %d bytes, more than %d", loc, size, c.lim.Dir)
	}
	return c.record(rec, 1)
}

// walk reads every queued directory and checks its records, as go-diskfs
// parses them (a 0 length skips to the next block).
func (c *isoCheck) walk() error {
	for len(c.queue) > 0 {
		d := c.queue[0]
		c.queue = c.queue[1:]
		b, err := c.dev.readFull(int64(d.loc)*isoBlock, int(d.size))
		if err != nil {
			continue // go-diskfs fails the same read
		}
		for i := 0; i < len(b); {
			n := int(b[i])
			if n == 0 {
				i += isoBlock - i%isoBlock
				continue
			}
			if i+n > len(b) {
				break
			}
			if err := c.record(b[i:i+n], d.depth+1); err != nil {
				return err
			}
			i += n
		}
	}
	return nil
}
