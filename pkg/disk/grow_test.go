package disk

import (
	"bytes"
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
)

const (
	mib       = 1 << 20
	linuxGUID = "0FC63DAF-8483-4772-8E79-3D69D8477DE4"
)

func growImage(t *testing.T, p string, part int, o GrowOptions) Result {
	t.Helper()
	r, err := GrowPath(p, part, o)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// checkGPT verifies a GPT image with sgdisk -v and bootenv, returning the
// table bootenv reads.
func checkGPT(t *testing.T, p string) bootenv.Table {
	t.Helper()
	if _, err := exec.LookPath("sgdisk"); err == nil {
		out := run(t, "", "sgdisk", "-v", p)
		if !strings.Contains(out, "No problems found") {
			t.Errorf("sgdisk -v %s:\n%s", p, out)
		}
	}
	return probe(t, p)
}

func probe(t *testing.T, p string) bootenv.Table {
	t.Helper()
	d, err := Open(p, false)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	tab, err := bootenv.ProbeTable(d, d.Size(), 0)
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

func sfdiskDump(t *testing.T, p string) string {
	t.Helper()
	return run(t, "", "sfdisk", "-d", p)
}

func TestGrowGPTGrownDisk(t *testing.T) {
	p := sfdiskImage(t, 32*mib, "label: gpt\nstart=2048, size=8192, type="+linuxGUID+", name=\"root\"\n")
	resize(t, p, 64*mib) // the cloud gave a bigger disk: the backup is now mid-disk
	before := readAll(t, p)

	dry := growImage(t, p, 1, GrowOptions{DryRun: true})
	if !bytes.Equal(before, readAll(t, p)) {
		t.Fatal("dry run wrote to the image")
	}
	r := growImage(t, p, 1, GrowOptions{})
	sectors := int64(64 * mib / 512)
	want := Result{Table: "gpt", SectorSize: 512, Partition: 1, OldStart: 2048, OldEnd: 10239, NewEnd: sectors - 34, Changed: true, BackupMoved: true}
	if diff := cmp.Diff(want, r); diff != "" {
		t.Errorf("Grow (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, dry); diff != "" {
		t.Errorf("dry run (-want +got):\n%s", diff)
	}
	tab := checkGPT(t, p)
	if got := tab.Partitions[0]; got.FirstLBA != 2048 || got.LastLBA != sectors-34 || got.Name != "root" {
		t.Errorf("bootenv sees %+v", got)
	}
	dump := sfdiskDump(t, p)
	for _, w := range []string{"last-lba: " + itoa(sectors-34), "start=        2048, size=      " + itoa(sectors-34-2048+1)} {
		if !strings.Contains(dump, w) {
			t.Errorf("sfdisk -d lacks %q:\n%s", w, dump)
		}
	}
	// Growing again changes nothing and writes nothing.
	after := readAll(t, p)
	r2 := growImage(t, p, 1, GrowOptions{})
	if r2.Changed || r2.Reason != "partition 1 is size "+itoa(r.NewSize())+". it cannot be grown" {
		t.Errorf("second grow: %+v", r2)
	}
	if !bytes.Equal(after, readAll(t, p)) {
		t.Error("NOCHANGE wrote to the image")
	}
}

func itoa(n int64) string { return strconvFormat(n) }

func TestGrowGPTStopsAtNextPartition(t *testing.T) {
	p := sfdiskImage(t, 64*mib, "label: gpt\nstart=2048, size=8192, type="+linuxGUID+"\nstart=40960, size=8192, type="+linuxGUID+"\n")
	r := growImage(t, p, 1, GrowOptions{})
	if !r.Changed || r.NewEnd != 40959 || r.BackupMoved {
		t.Errorf("got %+v, want end 40959 without a backup move", r)
	}
	tab := checkGPT(t, p)
	if tab.Partitions[0].LastLBA != 40959 || tab.Partitions[1].FirstLBA != 40960 {
		t.Errorf("table after grow: %+v", tab.Partitions)
	}
	// The partition behind grows to the end.
	r = growImage(t, p, 2, GrowOptions{})
	if !r.Changed || r.NewEnd != 64*mib/512-34 {
		t.Errorf("partition 2: %+v", r)
	}
	checkGPT(t, p)
}

func TestGrowGPTIntoFreeSpaceBeforeLaterPartition(t *testing.T) {
	// Partition 2 sits physically before partition 1's free space: the
	// numbering doesn't matter, positions do.
	p := sfdiskImage(t, 64*mib, "label: gpt\nstart=40960, size=8192, type="+linuxGUID+"\nstart=2048, size=8192, type="+linuxGUID+"\n")
	r := growImage(t, p, 2, GrowOptions{})
	if !r.Changed || r.OldStart != 2048 || r.NewEnd != 40959 {
		t.Errorf("got %+v", r)
	}
	checkGPT(t, p)
}

func TestGrowGPTFudge(t *testing.T) {
	// 1 MiB - 1 sector of room: below growpart's fudge.
	p := sfdiskImage(t, 64*mib, "label: gpt\nstart=2048, size=8192, type="+linuxGUID+"\nstart=12287, size=8192, type="+linuxGUID+"\n")
	r := growImage(t, p, 1, GrowOptions{})
	if r.Changed || r.Reason != "partition 1 could only be grown by 2047 [fudge=2048]" {
		t.Errorf("got %+v", r)
	}
	r = growImage(t, p, 1, GrowOptions{Fudge: -1})
	if !r.Changed || r.NewEnd != 12286 {
		t.Errorf("without fudge: %+v", r)
	}
	checkGPT(t, p)
}

func TestGrowGPTBrokenPrimary(t *testing.T) {
	p := sfdiskImage(t, 32*mib, "label: gpt\nstart=2048, size=8192, type="+linuxGUID+"\n")
	f, err := Open(p, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{0xff, 0xff}, 512+8); err != nil { // spoil the primary header
		t.Fatal(err)
	}
	f.Close()
	r := growImage(t, p, 1, GrowOptions{})
	if !r.Changed || r.NewEnd != 32*mib/512-34 || !r.BackupMoved {
		t.Errorf("got %+v", r)
	}
	checkGPT(t, p)
}

func TestGrowGPT4K(t *testing.T) {
	p := image(t, 64*mib)
	d, err := Open(p, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteTable(d, NewTable{Type: "gpt", SectorSize: 4096, Partitions: []NewPartition{{Start: 256, Size: 2048}}}, nil); err != nil {
		t.Fatal(err)
	}
	d.Close()
	resize(t, p, 128*mib)
	r := growImage(t, p, 1, GrowOptions{})
	sectors := int64(128 * mib / 4096)
	if r.SectorSize != 4096 || !r.Changed || r.NewEnd != sectors-6 || !r.BackupMoved {
		t.Errorf("got %+v, want end %d", r, sectors-6)
	}
	d, _ = Open(p, false)
	defer d.Close()
	tab, err := bootenv.ProbeTable(d, d.Size(), 4096)
	if err != nil || tab.Partitions[0].LastLBA != sectors-6 {
		t.Errorf("bootenv: %+v %v", tab, err)
	}
	g, err := readGPTAt(d, 4096, sectors-1, sectors)
	if err != nil || g.lastUse != sectors-6 {
		t.Errorf("backup header: %+v %v", g, err)
	}
}

func TestGrowMBR(t *testing.T) {
	p := sfdiskImage(t, 32*mib, "label: dos\nlabel-id: 0x1234abcd\nstart=2048, size=8192, type=83, bootable\n")
	resize(t, p, 64*mib)
	r := growImage(t, p, 1, GrowOptions{})
	sectors := int64(64 * mib / 512)
	want := Result{Table: "dos", SectorSize: 512, Partition: 1, OldStart: 2048, OldEnd: 10239, NewEnd: sectors - 34, Changed: true}
	if diff := cmp.Diff(want, r); diff != "" {
		t.Errorf("Grow (-want +got):\n%s", diff)
	}
	dump := sfdiskDump(t, p)
	if !strings.Contains(dump, "start=        2048, size=      "+itoa(sectors-34-2048+1)+", type=83, bootable") {
		t.Errorf("sfdisk -d:\n%s", dump)
	}
	if tab := probe(t, p); tab.Partitions[0].LastLBA != sectors-34 || tab.UUID != "1234abcd" {
		t.Errorf("bootenv: %+v", tab)
	}
	r = growImage(t, p, 1, GrowOptions{})
	if r.Changed {
		t.Errorf("second grow: %+v", r)
	}
}

func TestGrowMBRStopsAtNext(t *testing.T) {
	p := sfdiskImage(t, 64*mib, "label: dos\nstart=2048, size=8192, type=83\nstart=40960, size=8192, type=82\n")
	r := growImage(t, p, 1, GrowOptions{})
	if !r.Changed || r.NewEnd != 40959 {
		t.Errorf("got %+v", r)
	}
	dump := sfdiskDump(t, p)
	if !strings.Contains(dump, "size=       38912, type=83") || !strings.Contains(dump, "start=       40960, size=        8192, type=82") {
		t.Errorf("sfdisk -d:\n%s", dump)
	}
}

func TestGrowMBRExtendedBounds(t *testing.T) {
	p := sfdiskImage(t, 64*mib, "label: dos\nstart=2048, size=8192, type=83\nstart=40960, size=40960, type=5\nstart=43008, size=8192, type=83\n")
	r := growImage(t, p, 1, GrowOptions{})
	if !r.Changed || r.NewEnd != 40959 {
		t.Errorf("got %+v", r)
	}
	for _, n := range []int{2, 5} {
		if _, err := GrowPath(p, n, GrowOptions{}); !errors.Is(err, errors.ErrUnsupported) {
			t.Errorf("partition %d: err %v, want ErrUnsupported", n, err)
		}
	}
}

func TestGrowMBR2TiB(t *testing.T) {
	// A sparse 3 TiB image: MBR can address 2^32 sectors.
	p := sfdiskImage(t, 3<<40, "label: dos\nstart=2048, size=8192, type=83\n")
	r := growImage(t, p, 1, GrowOptions{DryRun: true})
	if !r.Changed || r.NewEnd != 0xffffffff {
		t.Errorf("got %+v, want end %d", r, int64(0xffffffff))
	}
}

func TestGrowErrors(t *testing.T) {
	p := sfdiskImage(t, 32*mib, "label: gpt\nstart=2048, size=8192, type="+linuxGUID+"\n")
	if _, err := GrowPath(p, 2, GrowOptions{}); !errors.Is(err, ErrNoPartition) {
		t.Errorf("missing partition: %v", err)
	} else if !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "partition 2") {
		t.Errorf("error lacks device and partition: %v", err)
	}
	empty := image(t, 8*mib)
	if _, err := GrowPath(empty, 1, GrowOptions{}); !errors.Is(err, ErrNoTable) {
		t.Errorf("no table: %v", err)
	}
	// A shrunken disk is refused.
	resize(t, p, 16*mib)
	if _, err := GrowPath(p, 1, GrowOptions{}); err == nil {
		t.Error("shrunken disk: no error")
	}
}

func TestGrowRefusesFATSuperfloppy(t *testing.T) {
	needTools(t, "mkfs.vfat")
	p := image(t, 8*mib)
	run(t, "", "mkfs.vfat", "-n", "CIDATA", p)
	before := readAll(t, p)
	for n := 1; n <= 4; n++ {
		if _, err := GrowPath(p, n, GrowOptions{Fudge: -1}); !errors.Is(err, ErrNoTable) {
			t.Errorf("partition %d: err %v, want ErrNoTable", n, err)
		}
	}
	if !bytes.Equal(before, readAll(t, p)) {
		t.Error("the FAT image was written")
	}
}
