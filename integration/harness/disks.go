package harness

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"regexp"
	"strconv"
)

// FSStats is what debugfs `stats` says about an ext2/3/4 filesystem's size.
type FSStats struct {
	Label      string
	BlockCount int64
	BlockSize  int64
}

// Size is BlockCount × BlockSize in bytes.
func (s FSStats) Size() int64 { return s.BlockCount * s.BlockSize }

var (
	reBlockCount = regexp.MustCompile(`(?m)^Block count:\s+(\d+)`)
	reBlockSize  = regexp.MustCompile(`(?m)^Block size:\s+(\d+)`)
	reVolName    = regexp.MustCompile(`(?m)^Filesystem volume name:\s+(.*)$`)
)

// Stats reads the filesystem's superblock with debugfs `stats -h`.
func (im *Image) Stats() (FSStats, error) {
	out, err := im.debugfs("/", "stats -h")
	if err != nil {
		return FSStats{}, err
	}
	return parseStats(string(out))
}

func parseStats(out string) (FSStats, error) {
	var s FSStats
	c, b := reBlockCount.FindStringSubmatch(out), reBlockSize.FindStringSubmatch(out)
	if c == nil || b == nil {
		return s, fmt.Errorf("debugfs stats: no block count or block size in %q", firstLine(out))
	}
	s.BlockCount, _ = strconv.ParseInt(c[1], 10, 64)
	s.BlockSize, _ = strconv.ParseInt(b[1], 10, 64)
	if m := reVolName.FindStringSubmatch(out); m != nil && m[1] != "<none>" {
		s.Label = m[1]
	}
	return s, nil
}

// Fsck runs `e2fsck -f -n` on the filesystem (read-only) and returns its
// output; a filesystem with errors is an error.
func (im *Image) Fsck() (string, error) {
	out, errb, err := runTool(context.Background(), nil, nil, "e2fsck", "-f", "-n", im.spec())
	if err != nil {
		return string(out) + string(errb), err
	}
	return string(out) + string(errb), nil
}

// GPTHeader is the fixed part of a GPT header (LBA 1 or its backup).
type GPTHeader struct {
	// Valid is set when the signature and the header CRC check out.
	Valid          bool
	MyLBA          int64
	AlternateLBA   int64
	FirstUsableLBA int64
	LastUsableLBA  int64
	EntriesLBA     int64
	NumEntries     uint32
	EntrySize      uint32
}

// ReadGPTHeader reads the GPT header at lba of a disk image with 512-byte
// sectors.
func ReadGPTHeader(p string, lba int64) (GPTHeader, error) {
	f, err := os.Open(p)
	if err != nil {
		return GPTHeader{}, err
	}
	defer f.Close()
	b := make([]byte, 512)
	if _, err := f.ReadAt(b, lba*512); err != nil && !errors.Is(err, io.EOF) {
		return GPTHeader{}, fmt.Errorf("reading LBA %d of %s: %w", lba, p, err)
	}
	return parseGPTHeader(b), nil
}

func parseGPTHeader(b []byte) GPTHeader {
	le32, le64 := binary.LittleEndian.Uint32, binary.LittleEndian.Uint64
	h := GPTHeader{
		MyLBA:          int64(le64(b[24:])),
		AlternateLBA:   int64(le64(b[32:])),
		FirstUsableLBA: int64(le64(b[40:])),
		LastUsableLBA:  int64(le64(b[48:])),
		EntriesLBA:     int64(le64(b[72:])),
		NumEntries:     le32(b[80:]),
		EntrySize:      le32(b[84:]),
	}
	size := le32(b[12:])
	if string(b[:8]) == "EFI PART" && size >= 92 && size <= 512 {
		hdr := append([]byte(nil), b[:size]...)
		want := le32(hdr[16:])
		copy(hdr[16:20], []byte{0, 0, 0, 0})
		h.Valid = crc32.ChecksumIEEE(hdr) == want
	}
	return h
}

// MakeExt4Image writes a bare ext4 filesystem of sizeMiB labelled label,
// filled from the directory src (mkfs.ext4 -d), replacing p.
func MakeExt4Image(p, label, src string, sizeMiB int) error {
	_ = os.Remove(p)
	args := []string{"-q", "-F", "-L", label, "-E", "root_owner=0:0"}
	if src != "" {
		args = append(args, "-d", src)
	}
	args = append(args, p, strconv.Itoa(sizeMiB)+"M")
	if _, _, err := runTool(context.Background(), nil, nil, "mkfs.ext4", args...); err != nil {
		return fmt.Errorf("making ext4 image: %w", err)
	}
	return nil
}
