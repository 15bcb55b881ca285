package harness

import (
	"encoding/binary"
	"hash/crc32"
	"strings"
	"testing"
)

func TestArgsExtraDisks(t *testing.T) {
	o := BootOptions{Kernel: "/k", Initramfs: "/i", Disk: "/root.img", ExtraDisks: []string{"/b.img", "/c,1.img"}}
	args, err := o.Args()
	if err != nil {
		t.Fatal(err)
	}
	line := strings.Join(args, " ")
	root := strings.Index(line, "file=/root.img,if=virtio")
	b := strings.Index(line, "file=/b.img,if=virtio,format=raw")
	c := strings.Index(line, "file=/c,,1.img,if=virtio,format=raw")
	if root < 0 || b < 0 || c < 0 || !(root < b && b < c) {
		t.Errorf("want the root disk, then /b.img, then /c,1.img as virtio drives:\n%s", line)
	}
}

func TestParseStats(t *testing.T) {
	out := "Filesystem volume name:   data\nBlock count:              65536\nBlock size:               4096\n"
	s, err := parseStats(out)
	if err != nil {
		t.Fatal(err)
	}
	if s.Label != "data" || s.BlockCount != 65536 || s.BlockSize != 4096 || s.Size() != 256<<20 {
		t.Errorf("parseStats = %+v", s)
	}
	if _, err := parseStats("nothing"); err == nil {
		t.Error("parseStats accepted output without sizes")
	}
}

func TestParseGPTHeader(t *testing.T) {
	b := make([]byte, 512)
	copy(b, "EFI PART")
	binary.LittleEndian.PutUint32(b[8:], 0x00010000)
	binary.LittleEndian.PutUint32(b[12:], 92)
	binary.LittleEndian.PutUint64(b[24:], 1)
	binary.LittleEndian.PutUint64(b[32:], 1000)
	binary.LittleEndian.PutUint64(b[40:], 34)
	binary.LittleEndian.PutUint64(b[48:], 966)
	binary.LittleEndian.PutUint64(b[72:], 2)
	binary.LittleEndian.PutUint32(b[80:], 128)
	binary.LittleEndian.PutUint32(b[84:], 128)
	binary.LittleEndian.PutUint32(b[16:], crc32.ChecksumIEEE(b[:92]))
	h := parseGPTHeader(b)
	want := GPTHeader{Valid: true, MyLBA: 1, AlternateLBA: 1000, FirstUsableLBA: 34, LastUsableLBA: 966, EntriesLBA: 2, NumEntries: 128, EntrySize: 128}
	if h != want {
		t.Errorf("parseGPTHeader = %+v, want %+v", h, want)
	}
	b[100] = 1 // outside the header: still valid
	if !parseGPTHeader(b).Valid {
		t.Error("a byte past the header size broke the CRC")
	}
	b[60] = 1
	if parseGPTHeader(b).Valid {
		t.Error("a corrupted header is valid")
	}
}
