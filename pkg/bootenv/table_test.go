package bootenv

import (
	"bytes"
	"encoding/binary"
	"errors"
	"github.com/cloudroot/cloudroot/pkg/internal/golden"
	"hash/crc32"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

type tableCase struct {
	name    string
	size    int64
	build   func(t *testing.T, img string)
	noTable bool
}

const gptScript = `label: gpt
label-id: 3B1D9C52-1E4A-4F0B-9C3E-7A5D2B8E6F10
start=2048, size=8192, type=0FC63DAF-8483-4772-8E79-3D69D8477DE4, name="root", uuid=0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F0
size=4096, type=C12A7328-F81F-11D2-BA4B-00A0C93EC93B, name="EFI System é", uuid=11223344-5566-7788-99AA-BBCCDDEEFF00
size=2048, type=0657FD6D-A4AB-43C4-84E5-0933C84B4F4F
`

const dosScript = `label: dos
label-id: 0x5eed1234
start=2048, size=4096, type=83, bootable
size=4096, type=82
size=16384, type=5
size=2048, type=83
size=2048, type=c
`

var tableCases = []tableCase{
	{name: "gpt", size: 16 << 20, build: func(t *testing.T, img string) {
		run(t, gptScript, "sfdisk", "-q", img)
	}},
	{name: "gpt-backup", size: 16 << 20, build: func(t *testing.T, img string) {
		// A spoiled primary header: the backup at the last LBA answers.
		run(t, gptScript, "sfdisk", "-q", img)
		patch(t, img, 512+8, []byte{0xff, 0xff})
	}},
	{name: "gpt-empty", size: 4 << 20, build: func(t *testing.T, img string) {
		run(t, "label: gpt\nlabel-id: 3B1D9C52-1E4A-4F0B-9C3E-7A5D2B8E6F10\n", "sfdisk", "-q", img)
	}},
	{name: "dos", size: 16 << 20, build: func(t *testing.T, img string) {
		run(t, dosScript, "sfdisk", "-q", img)
	}},
	{name: "fat-not-table", size: 2 << 20, noTable: true, build: func(t *testing.T, img string) {
		run(t, "", "mkfs.vfat", "-n", "CIDATA", "-i", "1234abcd", img)
	}},
}

// partx lists the partitions as libblkid sees them.
func partx(t *testing.T, img string) []Partition {
	t.Helper()
	out := run(t, "", "partx", "-g", "-o", "NR,START,END,TYPE,UUID,NAME", "-P", img)
	var parts []Partition
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line == "" {
			continue
		}
		kv := parseKV(line)
		nr, _ := strconv.Atoi(kv["NR"])
		start, _ := strconv.ParseInt(kv["START"], 10, 64)
		end, _ := strconv.ParseInt(kv["END"], 10, 64)
		parts = append(parts, Partition{Number: nr, FirstLBA: start, LastLBA: end, Type: kv["TYPE"], UUID: kv["UUID"], Name: kv["NAME"]})
	}
	return parts
}

// TestProbeTableTools compares ProbeTable with blkid (PTTYPE, PTUUID) and
// partx (the entries) on images made by sfdisk.
func TestProbeTableTools(t *testing.T) {
	for _, tc := range tableCases {
		t.Run(tc.name, func(t *testing.T) {
			need(t, "sfdisk", "partx", "blkid")
			img := filepath.Join(t.TempDir(), "img")
			sparseFile(t, img, tc.size)
			tc.build(t, img)
			f, err := os.Open(img)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			rec := &recorder{r: f}
			got, err := ProbeTable(rec, tc.size, 0)
			b := blkid(t, img)
			if tc.noTable {
				if !errors.Is(err, ErrNoTable) {
					t.Fatalf("ProbeTable err = %v, want ErrNoTable", err)
				}
				if b["PTTYPE"] != "" {
					t.Fatalf("blkid says PTTYPE=%s", b["PTTYPE"])
				}
				if golden.Update() {
					writeFixture(t, filepath.Join("testdata", "table", tc.name), img, rec.max, fixture{Size: tc.size})
				}
				return
			}
			if err != nil {
				t.Fatalf("ProbeTable: %v", err)
			}
			if got.Type != b["PTTYPE"] || got.UUID != b["PTUUID"] {
				t.Errorf("table %s %s, blkid says %s %s", got.Type, got.UUID, b["PTTYPE"], b["PTUUID"])
			}
			want := partx(t, img)
			var gotCmp []Partition
			for _, p := range got.Partitions {
				if p.Start != p.FirstLBA*512 || p.Size != (p.LastLBA-p.FirstLBA+1)*512 {
					t.Errorf("partition %d: bytes %d+%d disagree with LBAs %d-%d", p.Number, p.Start, p.Size, p.FirstLBA, p.LastLBA)
				}
				gotCmp = append(gotCmp, Partition{Number: p.Number, FirstLBA: p.FirstLBA, LastLBA: p.LastLBA, Type: p.Type, UUID: p.UUID, Name: p.Name})
			}
			if diff := cmp.Diff(want, gotCmp); diff != "" {
				t.Errorf("partitions vs partx (-want +got):\n%s", diff)
			}
			if golden.Update() {
				writeFixture(t, filepath.Join("testdata", "table", tc.name), img, rec.max, fixture{Size: tc.size, Table: &got})
			}
		})
	}
}

// TestProbeTableGolden runs ProbeTable on the committed fixtures.
func TestProbeTableGolden(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join("testdata", "table", "*"))
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) == 0 {
		t.Fatal("no fixtures in testdata/table (run go test -update with the host tools)")
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			fx, img := readFixture(t, dir)
			got, err := ProbeTable(img, fx.Size, 0)
			if fx.Table == nil {
				if !errors.Is(err, ErrNoTable) {
					t.Fatalf("err = %v, want ErrNoTable", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ProbeTable: %v", err)
			}
			if diff := cmp.Diff(*fx.Table, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// buildGPT writes a minimal GPT (protective MBR, primary and backup) with
// one partition, for sector sizes the host tools can't make on a file.
func buildGPT(ss int, sectors int64, name string) []byte {
	img := make([]byte, int64(ss)*sectors)
	img[510], img[511] = 0x55, 0xAA
	img[446+4] = mbrProtective
	binary.LittleEndian.PutUint32(img[446+8:], 1)
	binary.LittleEndian.PutUint32(img[446+12:], uint32(sectors-1))

	entries := make([]byte, 128*128)
	typ := []byte{0xaf, 0x3d, 0xc6, 0x0f, 0x83, 0x84, 0x72, 0x47, 0x8e, 0x79, 0x3d, 0x69, 0xd8, 0x47, 0x7d, 0xe4}
	copy(entries[0:], typ)
	for i := 16; i < 32; i++ {
		entries[i] = byte(i)
	}
	binary.LittleEndian.PutUint64(entries[32:], 6)
	binary.LittleEndian.PutUint64(entries[40:], 9)
	for i, r := range name {
		binary.LittleEndian.PutUint16(entries[56+2*i:], uint16(r))
	}
	entrySectors := int64(len(entries) / ss)
	header := func(my, alt, entriesLBA int64) []byte {
		h := make([]byte, 92)
		copy(h, gptSignature)
		binary.LittleEndian.PutUint32(h[8:], 0x00010000)
		binary.LittleEndian.PutUint32(h[12:], 92)
		binary.LittleEndian.PutUint64(h[24:], uint64(my))
		binary.LittleEndian.PutUint64(h[32:], uint64(alt))
		binary.LittleEndian.PutUint64(h[40:], uint64(2+entrySectors))
		binary.LittleEndian.PutUint64(h[48:], uint64(sectors-2-entrySectors))
		for i := 56; i < 72; i++ {
			h[i] = 0xa0 + byte(i-56)
		}
		binary.LittleEndian.PutUint64(h[72:], uint64(entriesLBA))
		binary.LittleEndian.PutUint32(h[80:], 128)
		binary.LittleEndian.PutUint32(h[84:], 128)
		binary.LittleEndian.PutUint32(h[88:], crc32.ChecksumIEEE(entries))
		binary.LittleEndian.PutUint32(h[16:], crc32.ChecksumIEEE(h))
		return h
	}
	last := sectors - 1
	copy(img[ss:], header(1, last, 2))
	copy(img[2*int64(ss):], entries)
	copy(img[(last-entrySectors)*int64(ss):], entries)
	copy(img[last*int64(ss):], header(last, 1, last-entrySectors))
	return img
}

func TestProbeTableSectorSizes(t *testing.T) {
	want := Partition{
		Number: 1, FirstLBA: 6, LastLBA: 9, Type: "0fc63daf-8483-4772-8e79-3d69d8477de4",
		UUID: "13121110-1514-1716-1819-1a1b1c1d1e1f", Name: "root",
	}
	for _, ss := range []int{512, 4096} {
		img := buildGPT(ss, 64, "root")
		for _, hint := range []int{0, ss} {
			got, err := ProbeTable(bytes.NewReader(img), int64(len(img)), hint)
			if err != nil {
				t.Fatalf("ss %d hint %d: %v", ss, hint, err)
			}
			w := want
			w.Start, w.Size = 6*int64(ss), 4*int64(ss)
			if got.SectorSize != ss || got.UUID != "a3a2a1a0-a5a4-a7a6-a8a9-aaabacadaeaf" || len(got.Partitions) != 1 {
				t.Fatalf("ss %d hint %d: %+v", ss, hint, got)
			}
			if diff := cmp.Diff(w, got.Partitions[0]); diff != "" {
				t.Errorf("ss %d hint %d (-want +got):\n%s", ss, hint, diff)
			}
		}
		// Spoil both headers: no table, with both reasons.
		bad := bytes.Clone(img)
		bad[ss+20]++
		bad[len(bad)-ss+20]++
		_, err := ProbeTable(bytes.NewReader(bad), int64(len(bad)), ss)
		if !errors.Is(err, ErrNoTable) || !strings.Contains(err.Error(), "primary") || !strings.Contains(err.Error(), "backup") {
			t.Errorf("ss %d, both headers bad: err = %v", ss, err)
		}
	}
	if _, err := ProbeTable(bytes.NewReader(nil), 0, 1000); err == nil {
		t.Error("sector size 1000 accepted")
	}
}

func TestProbeTableEBRLoop(t *testing.T) {
	// An extended partition whose EBR points back at itself must end.
	img := make([]byte, 1<<20)
	img[510], img[511] = 0x55, 0xAA
	binary.LittleEndian.PutUint32(img[440:], 0xcafe0001)
	e := img[446:]
	e[4] = mbrExtendedLBA
	binary.LittleEndian.PutUint32(e[8:], 100)
	binary.LittleEndian.PutUint32(e[12:], 1000)
	ebr := img[100*512:]
	ebr[510], ebr[511] = 0x55, 0xAA
	ebr[446+4] = 0x83
	binary.LittleEndian.PutUint32(ebr[446+8:], 1)
	binary.LittleEndian.PutUint32(ebr[446+12:], 10)
	ebr[462+4] = mbrExtendedLBA
	binary.LittleEndian.PutUint32(ebr[462+8:], 0) // -> itself
	binary.LittleEndian.PutUint32(ebr[462+12:], 10)
	got, err := ProbeTable(bytes.NewReader(img), int64(len(img)), 512)
	if err != nil {
		t.Fatal(err)
	}
	var nums []int
	for _, p := range got.Partitions {
		nums = append(nums, p.Number)
	}
	if diff := cmp.Diff([]int{1, 5}, nums); diff != "" {
		t.Errorf("partition numbers (-want +got):\n%s", diff)
	}
	if p, _ := got.Partition(5); p.UUID != "cafe0001-05" || p.FirstLBA != 101 {
		t.Errorf("logical partition = %+v", p)
	}
}
