package integration

// Disks (issue 6) in QEMU: growpart + resizefs of the root in the
// initramfs, disk_setup/fs_setup/mounts on a second disk, and a second disk
// holding data that must be left alone. The disks are inspected afterwards
// on the host: the GPT with pkg/bootenv, filesystems with bootenv.Probe and
// debugfs.

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/cloudroot/cloudroot/integration/harness"
	"github.com/cloudroot/cloudroot/pkg/bootenv"
	"github.com/cloudroot/cloudroot/pkg/stages"
)

// pageSize is the guest's page size: resize2fs and mkfs round a
// filesystem's size down to a multiple of it.
const pageSize = 4096

// GPT partition type GUIDs (lowercase, as bootenv reports them).
const (
	gptLinuxFS   = "0fc63daf-8483-4772-8e79-3d69d8477de4"
	gptLinuxSwap = "0657fd6d-a4ab-43c4-84e5-0933c84b4f4f"
)

// diskSeed is a NoCloud seed: meta-data and a #cloud-config user-data with
// body after its header.
func diskSeed(iid, body string) map[string][]byte {
	return map[string][]byte{
		"meta-data": meta(iid, "disks"),
		"user-data": []byte("#cloud-config\n" + body),
	}
}

// table reads the partition table of a disk image.
func table(t *testing.T, p string) bootenv.Table {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	tab, err := bootenv.ProbeTable(f, fi.Size(), 512)
	if err != nil {
		t.Fatalf("partition table of %s: %v", p, err)
	}
	return tab
}

// probePart identifies the filesystem on partition n of the image p.
func probePart(t *testing.T, p string, tab bootenv.Table, n int) bootenv.FS {
	t.Helper()
	part, ok := tab.Partition(n)
	if !ok {
		t.Errorf("%s has no partition %d", p, n)
		return bootenv.FS{}
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fs, err := bootenv.Probe(io.NewSectionReader(f, part.Start, part.Size), part.Size)
	if err != nil {
		t.Errorf("probing partition %d of %s: %v", n, p, err)
	}
	return fs
}

func fileSize(t *testing.T, p string) int64 {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// growDisk makes the disk image p extra bytes longer (a sparse tail): the
// GPT backup header is then no longer at the end of the disk.
func growDisk(t *testing.T, p string, extra int64) {
	t.Helper()
	if err := os.Truncate(p, fileSize(t, p)+extra); err != nil {
		t.Fatal(err)
	}
}

// emptyDisk creates a sparse, zeroed disk image of size bytes.
func emptyDisk(t *testing.T, p string, size int64) string {
	t.Helper()
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return p
}

// wantNoProblems fails on any error or recoverable error in status.json.
func wantNoProblems(t *testing.T, s *harness.Status) {
	t.Helper()
	wantOnlyProblems(t, s)
}

// wantOnlyProblems checks that every problem status.json records contains
// one of the expected texts.
func wantOnlyProblems(t *testing.T, s *harness.Status, expected ...string) {
	t.Helper()
	var other []string
	for _, e := range s.AllErrors() {
		if !slices.ContainsFunc(expected, func(x string) bool { return strings.Contains(e, x) }) {
			other = append(other, e)
		}
	}
	if len(other) > 0 {
		t.Errorf("status.json records problems:\n  %s", strings.Join(other, "\n  "))
	}
}

// timing returns the state file's duration of stage/module ("init/growpart"),
// or -1.
func timing(st *harness.State, name string) float64 {
	for _, tm := range st.Timings {
		if tm.Stage == name {
			return tm.Duration
		}
	}
	return -1
}

// logDiskTimings logs growpart's and resizefs' share of the boot, for
// docs/performance.md.
func logDiskTimings(t *testing.T, d *disk, r *harness.Run) {
	t.Helper()
	st, err := d.im.State()
	if err != nil {
		t.Errorf("state file: %v", err)
		return
	}
	var names []string
	for _, tm := range st.Timings {
		names = append(names, tm.Stage)
	}
	g, rs := timing(st, "init/growpart"), timing(st, "init/resizefs")
	if g < 0 || rs < 0 {
		t.Errorf("state file timings lack init/growpart (%.3f) or init/resizefs (%.3f); they are %q", g, rs, names)
		return
	}
	t.Logf("DISK TIMINGS %s: init/growpart %.3f s, init/resizefs %.3f s, together %.3f s; boot (QEMU wall) %.2f s",
		t.Name(), g, rs, g+rs, r.Elapsed.Seconds())
}

// wantGrown checks that partition 1 of the image p ends at the last usable
// LBA of the disk, with both GPT headers valid and the backup at the end,
// and that its ext4 filesystem fills it.
func wantGrown(t *testing.T, p string) {
	t.Helper()
	size := fileSize(t, p)
	lastLBA := size/512 - 1
	lastUsable := lastLBA - 33 // backup entries (32 sectors) + backup header
	tab := table(t, p)
	if tab.Type != "gpt" {
		t.Fatalf("%s: table type %q, want gpt", p, tab.Type)
	}
	part, ok := tab.Partition(1)
	if !ok {
		t.Fatalf("%s: no partition 1", p)
	}
	if part.LastLBA != lastUsable {
		t.Errorf("partition 1 ends at LBA %d, want the last usable LBA %d (disk of %d sectors); %d sectors short",
			part.LastLBA, lastUsable, size/512, lastUsable-part.LastLBA)
	}
	if part.FirstLBA != 2048 || part.Name != "cloudimg-rootfs" || part.Type != gptLinuxFS {
		t.Errorf("partition 1 = start %d, name %q, type %s; want start 2048, name cloudimg-rootfs, type %s (kept)",
			part.FirstLBA, part.Name, part.Type, gptLinuxFS)
	}
	primary, err := harness.ReadGPTHeader(p, 1)
	if err != nil {
		t.Fatal(err)
	}
	backup, err := harness.ReadGPTHeader(p, lastLBA)
	if err != nil {
		t.Fatal(err)
	}
	if !primary.Valid || primary.AlternateLBA != lastLBA || primary.LastUsableLBA != lastUsable {
		t.Errorf("primary GPT header = %+v, want valid with AlternateLBA %d and LastUsableLBA %d", primary, lastLBA, lastUsable)
	}
	if !backup.Valid || backup.MyLBA != lastLBA || backup.AlternateLBA != 1 || backup.LastUsableLBA != lastUsable {
		t.Errorf("backup GPT header at LBA %d = %+v, want valid, MyLBA %d, AlternateLBA 1", lastLBA, backup, lastLBA)
	}

	im, err := harness.OpenImage(p)
	if err != nil {
		t.Fatal(err)
	}
	st, err := im.Stats()
	if err != nil {
		t.Fatal(err)
	}
	// resize2fs rounds the size down to a multiple of the page size.
	if st.Size() > part.Size || st.Size() <= part.Size-pageSize {
		t.Errorf("ext4 is %d blocks of %d = %d bytes; partition 1 is %d bytes (%d bytes left over, want < %d)",
			st.BlockCount, st.BlockSize, st.Size(), part.Size, part.Size-st.Size(), pageSize)
	}
	if out, err := im.Fsck(); err != nil {
		t.Errorf("e2fsck -fn on the grown root: %v\n%s", err, out)
	}
}

// wantGrowLogged checks cloud-init.log and the console tell of the growth:
// cc_growpart's "'/' resized: changed (...)" line, which is what cloud-init
// logs for a CHANGED result (it does not log growpart's own "CHANGED:
// partition=1 ..." output), and the resize.
func wantGrowLogged(t *testing.T, d *disk, r *harness.Run) {
	t.Helper()
	log := d.read("/var/log/cloud-init.log")
	for _, re := range []string{
		`'/' resized: changed \(/dev/vda, 1\) from \d+ to \d+`,
		`growing partition"? .*device=/dev/vda partition=1 table=gpt start=2048 old_end=\d+ new_end=\d+`,
		`Resized root filesystem \(type=ext4, val=true\)`,
	} {
		if !regexp.MustCompile(re).MatchString(log) {
			t.Errorf("/var/log/cloud-init.log does not match %s; its growpart/resizefs lines:\n%s", re, grepLines(log, "growpart", "resizefs"))
		}
		if !regexp.MustCompile(re).MatchString(r.Console) {
			t.Errorf("the console does not match %s", re)
		}
	}
	// The kernel's side of the online resize.
	if !regexp.MustCompile(`EXT4-fs \(vda1\): resized filesystem to \d+`).MatchString(r.Console) {
		t.Errorf("the console has no `EXT4-fs (vda1): resized filesystem to N`")
	}
}

// grepLines returns the lines of text holding any of subs.
func grepLines(text string, subs ...string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		for _, s := range subs {
			if strings.Contains(l, s) {
				out = append(out, l)
				break
			}
		}
	}
	return strings.Join(out, "\n")
}

// TestGrowRoot: a root disk larger than its partition is grown by growpart
// and resizefs in the initramfs (default config); with growpart off it is
// left alone.
func TestGrowRoot(t *testing.T) {
	t.Parallel()
	// Subtests share nothing but the build artifacts.
	t.Run("truncated", func(t *testing.T) {
		// The disk gets 512 MiB of sparse tail: the backup GPT header sits
		// in the middle of the disk now and growpart must move it.
		v := newVM(t)
		growDisk(t, v.disk, 512<<20)
		seed := v.seed(diskSeed("iid-grow-001", "hostname: grown\n"), harness.SeedISO)
		r := v.boot(harness.BootOptions{Seed: seed, SeedKind: harness.SeedCDROMSCSI, Append: []string{"cloudroot.test.poweroff"}})
		wantPoweredOff(t, r)
		wantGrown(t, v.disk)
		d := v.image()
		s := d.status()
		d.wantStagesDone(s, true)
		wantNoProblems(t, s)
		wantGrowLogged(t, d, r)
		logDiskTimings(t, d, r)

		// Second boot: nothing left to grow.
		before := table(t, v.disk)
		r = v.boot(harness.BootOptions{Seed: seed, SeedKind: harness.SeedCDROMSCSI, Append: []string{"cloudroot.test.poweroff"}})
		wantPoweredOff(t, r)
		if after := table(t, v.disk); fmt.Sprint(after) != fmt.Sprint(before) {
			t.Errorf("the second boot changed the table:\n before %+v\n after  %+v", before, after)
		}
		d = v.image()
		wantNoProblems(t, d.status())
		logDiskTimings(t, d, r)
	})

	t.Run("small-partition", func(t *testing.T) {
		// mkrootfs.sh with ROOTFS_PART_MB: a 384 MiB disk whose partition
		// is 128 MiB, the backup GPT already at the end.
		a := artifacts(t)
		root, err := harness.RepoRoot()
		if err != nil {
			t.Fatal(err)
		}
		v := &vm{t: t, a: a, dir: t.TempDir()}
		v.disk = filepath.Join(v.dir, "disk.img")
		cmd := exec.Command("bash", filepath.Join(root, "scripts", "mkrootfs.sh"), v.disk)
		cmd.Env = append(os.Environ(), "AGENT="+a.Agent, "FRONT="+a.Front, "ROOTFS_SIZE_MB=384", "ROOTFS_PART_MB=128")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("mkrootfs.sh: %v\n%s", err, out)
		}
		if p, _ := table(t, v.disk).Partition(1); p.Size != 128<<20 {
			t.Fatalf("mkrootfs.sh made partition 1 of %d bytes, want 128 MiB", p.Size)
		}
		seed := v.seed(diskSeed("iid-grow-002", "hostname: grown\n"), harness.SeedISO)
		r := v.boot(harness.BootOptions{Seed: seed, SeedKind: harness.SeedCDROMSCSI, Append: []string{"cloudroot.test.poweroff"}})
		wantPoweredOff(t, r)
		wantGrown(t, v.disk)
		d := v.image()
		s := d.status()
		d.wantStagesDone(s, true)
		wantNoProblems(t, s)
		wantGrowLogged(t, d, r)
		logDiskTimings(t, d, r)
	})

	t.Run("mode-off", func(t *testing.T) {
		v := newVM(t)
		growDisk(t, v.disk, 512<<20)
		before := table(t, v.disk)
		im, err := harness.OpenImage(v.disk)
		if err != nil {
			t.Fatal(err)
		}
		fsBefore, err := im.Stats()
		if err != nil {
			t.Fatal(err)
		}
		seed := v.seed(diskSeed("iid-grow-off-001", "growpart:\n  mode: 'off'\n"), harness.SeedISO)
		r := v.boot(harness.BootOptions{Seed: seed, SeedKind: harness.SeedCDROMSCSI, Append: []string{"cloudroot.test.poweroff"}})
		wantPoweredOff(t, r)
		after := table(t, v.disk)
		b1, _ := before.Partition(1)
		a1, _ := after.Partition(1)
		if a1 != b1 {
			t.Errorf("growpart mode off changed partition 1:\n before %+v\n after  %+v", b1, a1)
		}
		d := v.image()
		if fsAfter, err := d.im.Stats(); err != nil {
			t.Error(err)
		} else if fsAfter.BlockCount != fsBefore.BlockCount {
			t.Errorf("the root filesystem went from %d to %d blocks with growpart off", fsBefore.BlockCount, fsAfter.BlockCount)
		}
		if strings.Contains(r.Console, "CHANGED: partition=") {
			t.Errorf("the console shows a growpart CHANGED line with mode off")
		}
		s := d.status()
		d.wantStagesDone(s, true)
		wantNoProblems(t, s)
	})
}

const secondDiskUserData = `disk_setup:
  /dev/vdb:
    table_type: gpt
    layout: [[70, 83], [30, 82]]
    overwrite: false
fs_setup:
  - label: data
    filesystem: ext4
    device: /dev/vdb
    partition: 1
  - label: swap
    filesystem: swap
    device: /dev/vdb
    partition: 2
`

const secondDiskMounts = `mounts:
  - [/dev/vdb1, /data, ext4, "defaults,nofail", "0", "2"]
  - [/dev/vdb2, none, swap, sw, "0", "0"]
`

// fstabEntry finds the /etc/fstab line for device and returns its fields.
func fstabEntry(fstab, device string) []string {
	for _, l := range strings.Split(fstab, "\n") {
		if f := strings.Fields(l); len(f) >= 4 && f[0] == device {
			return f
		}
	}
	return nil
}

// TestDiskSetupSecondDisk partitions, formats and mounts an empty second
// disk.
func TestDiskSetupSecondDisk(t *testing.T) {
	t.Parallel()
	v := newVM(t)
	extra := emptyDisk(t, filepath.Join(v.dir, "vdb.img"), 256<<20)
	seed := v.seed(diskSeed("iid-disk-setup-001", secondDiskUserData+secondDiskMounts), harness.SeedISO)
	r := v.boot(harness.BootOptions{Seed: seed, SeedKind: harness.SeedCDROMSCSI, ExtraDisks: []string{extra},
		Append: []string{"cloudroot.test.poweroff"}})
	wantPoweredOff(t, r)

	tab := table(t, extra)
	if tab.Type != "gpt" || len(tab.Partitions) != 2 {
		t.Fatalf("the second disk has a %q table with %d partitions, want gpt with 2: %+v", tab.Type, len(tab.Partitions), tab)
	}
	p1, _ := tab.Partition(1)
	p2, _ := tab.Partition(2)
	if p1.Type != gptLinuxFS || p2.Type != gptLinuxSwap {
		t.Errorf("partition types %s, %s; want %s (83), %s (82)", p1.Type, p2.Type, gptLinuxFS, gptLinuxSwap)
	}
	// 70/30 of 256 MiB, 1 MiB aligned, the last one taking the rest.
	if p1.Start%(1<<20) != 0 || p2.Start%(1<<20) != 0 || p2.Start < p1.Start+p1.Size {
		t.Errorf("partitions not 1 MiB aligned or overlapping: %+v %+v", p1, p2)
	}
	if mib := p1.Size >> 20; mib < 175 || mib > 180 {
		t.Errorf("partition 1 is %d MiB, want about 70%% of 256 MiB", mib)
	}
	if fs := probePart(t, extra, tab, 1); fs.Type != "ext4" || fs.Label != "data" {
		t.Errorf("partition 1 holds %+v, want ext4 labelled data", fs)
	}
	if fs := probePart(t, extra, tab, 2); fs.Type != "swap" || fs.Label != "swap" {
		t.Errorf("partition 2 holds %+v, want swap labelled swap", fs)
	}
	data := &harness.Image{Path: extra, Offset: p1.Start}
	if st, err := data.Stats(); err != nil {
		t.Error(err)
	} else if st.Size() > p1.Size || st.Size() <= p1.Size-pageSize {
		t.Errorf("the data filesystem is %d bytes, partition 1 %d", st.Size(), p1.Size)
	}
	if out, err := data.Fsck(); err != nil {
		t.Errorf("e2fsck -fn on /dev/vdb1: %v\n%s", err, out)
	}

	d := v.image()
	fstab := d.read("/etc/fstab")
	if f := fstabEntry(fstab, "/dev/vdb1"); len(f) != 6 || f[1] != "/data" || f[2] != "ext4" ||
		!strings.Contains(f[3], "defaults,nofail") || !strings.Contains(f[3], "comment=cloudconfig") || f[4] != "0" || f[5] != "2" {
		t.Errorf("/etc/fstab has no `/dev/vdb1 /data ext4 defaults,nofail,comment=cloudconfig 0 2` line:\n%s", fstab)
	}
	if f := fstabEntry(fstab, "/dev/vdb2"); len(f) != 6 || f[1] != "none" || f[2] != "swap" ||
		!strings.Contains(f[3], "sw") || !strings.Contains(f[3], "comment=cloudconfig") {
		t.Errorf("/etc/fstab has no `/dev/vdb2 none swap sw,comment=cloudconfig 0 0` line:\n%s", fstab)
	}
	if fstabEntry(fstab, "LABEL=cloudimg-rootfs") == nil {
		t.Errorf("/etc/fstab lost the image's root line:\n%s", fstab)
	}
	// cc_mounts creates the mount points.
	if fi, err := d.im.Stat("/data"); err != nil || !fi.Mode.IsDir() {
		t.Errorf("/data is not a directory in the root (%v)", err)
	}
	s := d.status()
	d.wantStagesDone(s, true)
	// cloud-init 26.x's schema rejects integer partitions too (`type:
	// [string, integer]` under a oneOf that admits only auto/any/none) and
	// reports them as its one schema warning while the module honours
	// them: so does cloudroot (`cloud-init schema` on this user-data
	// agrees), with the details in cloud-init.log.
	wantOnlyProblems(t, s, stages.SchemaWarning)
	log, _ := d.readOpt("/var/log/cloud-init.log")
	for _, want := range []string{"fs_setup.0.partition: 1 is not of type 'string'", "fs_setup.1.partition: 2 is not of type 'string'"} {
		if !strings.Contains(log, want) {
			t.Errorf("/var/log/cloud-init.log lacks %q", want)
		}
	}
	if st, err := d.im.State(); err == nil {
		t.Logf("disk_setup took %.3f s, mounts %.3f s", timing(st, "init/disk_setup"), timing(st, "init/mounts"))
	}
}

// TestDiskWithDataLeftAlone: a second disk holding a filesystem with data
// is neither partitioned nor formatted without overwrite.
func TestDiskWithDataLeftAlone(t *testing.T) {
	t.Parallel()
	v := newVM(t)
	src := filepath.Join(v.dir, "keep-src")
	if err := os.MkdirAll(filepath.Join(src, "dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	const content = "precious data, do not format\n"
	if err := os.WriteFile(filepath.Join(src, "dir", "precious.txt"), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	extra := filepath.Join(v.dir, "vdb.img")
	if err := harness.MakeExt4Image(extra, "keep", src, 128); err != nil {
		t.Fatal(err)
	}
	seed := v.seed(diskSeed("iid-disk-keep-001", secondDiskUserData+secondDiskMounts), harness.SeedISO)
	r := v.boot(harness.BootOptions{Seed: seed, SeedKind: harness.SeedCDROMSCSI, ExtraDisks: []string{extra},
		Append: []string{"cloudroot.test.poweroff"}})
	wantPoweredOff(t, r)

	f, err := os.Open(extra)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	size := fileSize(t, extra)
	if tab, err := bootenv.ProbeTable(f, size, 512); !errors.Is(err, bootenv.ErrNoTable) {
		t.Errorf("the data disk has a partition table now (%+v, %v)", tab, err)
	}
	if fs, err := bootenv.Probe(f, size); err != nil || fs.Type != "ext4" || fs.Label != "keep" {
		t.Errorf("the data disk holds %+v (%v), want the ext4 labelled keep", fs, err)
	}
	im, err := harness.OpenImage(extra)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := im.ReadString("/dir/precious.txt"); err != nil || got != content {
		t.Errorf("/dir/precious.txt on the data disk = %q (%v), want %q", got, err, content)
	}
	if out, err := im.Fsck(); err != nil {
		t.Errorf("e2fsck -fn on the data disk: %v\n%s", err, out)
	}

	d := v.image()
	s := d.status()
	d.wantStagesDone(s, true)
	// cloud-init only logs the skipped partitioning at debug level; the
	// fs_setup entries whose partitions do not exist are warnings (there
	// mkfs fails and cc_disk_setup logs "Failed during filesystem
	// operation" with logexc, a WARNING), never errors.
	var warned []string
	for _, e := range s.AllErrors() {
		if strings.Contains(e, "/dev/vdb") {
			warned = append(warned, e)
		}
	}
	if len(warned) == 0 {
		t.Errorf("status.json has no warning about the skipped /dev/vdb filesystems; it has %q", s.AllErrors())
	}
	for _, e := range warned {
		if !strings.Contains(e, "[WARNING]") {
			t.Errorf("status.json: %q is not a warning", e)
		}
	}
	if fstab := d.read("/etc/fstab"); strings.Contains(fstab, "/data") {
		t.Logf("/etc/fstab:\n%s", fstab)
	}
}
