package integration

import (
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cloudroot/cloudroot/integration/harness"
)

// mdDataOffset is where the mirrored data starts in each member (sectors),
// as mdadm's 1.2 default leaves room for the superblock at 4 KiB.
const mdDataOffset = 2048

// writeMDMember writes a RAID1 member image at p: an md 1.2 superblock
// (array uuid, two raid disks, this one dev), then fs at mdDataOffset.
func writeMDMember(t *testing.T, p string, fs []byte, dev int) {
	t.Helper()
	writeMDDevice(t, p, mdArray{uuid: "cloudroot-md-uu1", level: 1, disks: 2, sectors: uint64(len(fs) / 512)}, dev, fs)
}

// mdArray is what an md 1.2 superblock says of its array.
type mdArray struct {
	uuid    string // 16 bytes
	level   uint32
	layout  uint32
	chunk   uint32 // sectors; 0 for RAID1
	disks   int
	sectors uint64 // used size of each member
}

// writeMDDevice writes member dev of array a at p: the superblock at 4 KiB,
// laid out as the kernel's struct mdp_superblock_1 with its checksum
// (calc_sb_1_csum), so the md driver accepts it, then data at mdDataOffset.
// The array is clean (resync_offset is the end), so a degraded one starts.
func writeMDDevice(t *testing.T, p string, a mdArray, dev int, data []byte) {
	t.Helper()
	maxDev := a.disks
	sb := make([]byte, 256+2*maxDev)
	le := binary.LittleEndian
	le.PutUint32(sb[0:], 0xa92b4efc)
	le.PutUint32(sb[4:], 1) // major version
	copy(sb[16:32], a.uuid)
	copy(sb[32:64], "cloudroot:0")
	now := uint64(time.Now().Unix())
	le.PutUint64(sb[64:], now) // ctime
	le.PutUint32(sb[72:], a.level)
	le.PutUint32(sb[76:], a.layout)
	le.PutUint64(sb[80:], a.sectors) // size
	le.PutUint32(sb[88:], a.chunk)
	le.PutUint32(sb[92:], uint32(a.disks)) // raid_disks
	le.PutUint64(sb[128:], mdDataOffset)
	le.PutUint64(sb[136:], a.sectors)   // data_size
	le.PutUint64(sb[144:], 8)           // super_offset: 4 KiB
	le.PutUint32(sb[160:], uint32(dev)) // dev_number
	copy(sb[168:184], fmt.Sprintf("cloudroot-dev-%02d", dev))
	le.PutUint64(sb[192:], now)        // utime
	le.PutUint64(sb[200:], 1)          // events
	le.PutUint64(sb[208:], ^uint64(0)) // resync_offset: clean
	le.PutUint32(sb[220:], uint32(maxDev))
	for i := range maxDev { // dev_roles: dev i is disk i
		le.PutUint16(sb[256+2*i:], uint16(i))
	}
	var sum uint64
	i := 0
	for ; i+4 <= len(sb); i += 4 {
		sum += uint64(le.Uint32(sb[i:]))
	}
	if i+2 == len(sb) {
		sum += uint64(le.Uint16(sb[i:]))
	}
	le.PutUint32(sb[216:], uint32(sum&0xffffffff+sum>>32))
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(sb, 4096); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(data, mdDataOffset*512); err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(int64(mdDataOffset+a.sectors) * 512); err != nil {
		t.Fatal(err)
	}
}

// raid5Members lays fs out as md's RAID5 left-symmetric layout (the
// default, layout 2) over n members with chunk-byte chunks: in row r the
// parity chunk is on member n-1-r%n and the row's data chunks follow it
// round the members. It returns each member's data and the member size in
// sectors.
func raid5Members(fs []byte, n, chunk int) ([][]byte, uint64) {
	rows := (len(fs) + (n-1)*chunk - 1) / ((n - 1) * chunk)
	members := make([][]byte, n)
	for i := range members {
		members[i] = make([]byte, rows*chunk)
	}
	for r := range rows {
		pd := n - 1 - r%n
		parity := members[pd][r*chunk : (r+1)*chunk]
		for k := range n - 1 {
			d := (pd + 1 + k) % n
			dst := members[d][r*chunk : (r+1)*chunk]
			if off := (r*(n-1) + k) * chunk; off < len(fs) {
				copy(dst, fs[off:min(off+chunk, len(fs))])
			}
			for j := range dst {
				parity[j] ^= dst[j]
			}
		}
	}
	return members, uint64(rows * chunk / 512)
}

// rootPartition returns the root filesystem (GPT partition 1) of the
// built rootfs image.
func rootPartition(t *testing.T, img string) []byte {
	t.Helper()
	h, err := harness.ReadGPTHeader(img, 1)
	if err != nil || !h.Valid {
		t.Fatalf("GPT of %s: %+v, %v", img, h, err)
	}
	f, err := os.Open(img)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	e := make([]byte, 128)
	if _, err := f.ReadAt(e, h.EntriesLBA*512); err != nil {
		t.Fatal(err)
	}
	first, last := int64(binary.LittleEndian.Uint64(e[32:])), int64(binary.LittleEndian.Uint64(e[40:]))
	fs := make([]byte, (last-first+1)*512)
	if _, err := io.ReadFull(io.NewSectionReader(f, first*512, int64(len(fs))), fs); err != nil {
		t.Fatal(err)
	}
	return fs
}

// TestRootMDRAID1 boots a root on an md RAID1 of two virtio disks, then
// with one member missing (degraded): cloudroot-init assembles the array
// from the members' superblocks and mounts the filesystem on /dev/md127.
func TestRootMDRAID1(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		members int
	}{{"two-members", 2}, {"degraded", 1}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			v := newVM(t)
			initrd := profileInitramfs(t, v.a, "generic")
			fs := rootPartition(t, v.a.Rootfs)
			writeMDMember(t, v.disk, fs, 0)
			var extra []string
			if tc.members == 2 {
				m1 := filepath.Join(v.dir, "member1.img")
				writeMDMember(t, m1, fs, 1)
				extra = append(extra, m1)
			}
			r := v.boot(harness.BootOptions{Timeout: hwBootTimeout, Initramfs: initrd, ExtraDisks: extra, Append: []string{"cloudroot.test.poweroff"}})
			wantPoweredOff(t, r)
			wantConsoleMatch(t, r, `md array assembled device=/dev/md127 uuid=636c6f75-6472-6f6f-742d-6d642d757531`)
			wantConsole(t, r, "root device root=LABEL=cloudimg-rootfs device=/dev/md127 fstype=ext4", "switching root")
			if tc.members == 1 && !strings.Contains(r.Console, "raid1") {
				t.Log("no raid1 kernel line about the degraded array")
			}
		})
	}
}

// lvmFixture returns a gzipped disk head (1 MiB: LVM label and metadata)
// from testdata.
func lvmFixture(t *testing.T, name string) []byte {
	t.Helper()
	zf, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer zf.Close()
	zr, err := gzip.NewReader(zf)
	if err != nil {
		t.Fatal(err)
	}
	head, err := io.ReadAll(zr)
	if err != nil || len(head) != 1<<20 {
		t.Fatalf("lvm fixture %s: %d bytes, %v", name, len(head), err)
	}
	return head
}

// writePV writes a physical volume image at p: head, then data from 1 MiB
// (the PV's pe_start), size bytes in all.
func writePV(t *testing.T, p string, head, data []byte, size int64) {
	t.Helper()
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	_, err1 := f.WriteAt(head, 0)
	_, err2 := f.WriteAt(data, 1<<20)
	err3 := f.Truncate(size)
	if err := errors.Join(err1, err2, err3, f.Close()); err != nil {
		t.Fatal(err)
	}
}

// needLVM skips (fails under CLOUDROOT_INTEGRATION=1) when the build host
// has no lvm, which the Justfile packs into the generic image.
func needLVM(t *testing.T) {
	t.Helper()
	if _, err := os.Stat("/usr/sbin/lvm"); err != nil {
		msg := "the build host has no /usr/sbin/lvm, so the generic initramfs has none (just deps installs lvm2)"
		if os.Getenv(EnvIntegration) == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
}

// TestRootMDRAID5 boots a root on an md RAID5 of three members with the
// first missing (degraded): every third chunk of the filesystem is rebuilt
// from parity, so the boot proves the raid456 personality was loaded and
// the array started degraded.
func TestRootMDRAID5(t *testing.T) {
	t.Parallel()
	v := newVM(t)
	initrd := profileInitramfs(t, v.a, "generic")
	fs := rootPartition(t, v.a.Rootfs)
	const chunk = 64 << 10
	members, sectors := raid5Members(fs, 3, chunk)
	a := mdArray{uuid: "cloudroot-md-uu5", level: 5, layout: 2, chunk: chunk / 512, disks: 3, sectors: sectors}
	// Member 0 is missing: member 1 is the root disk, member 2 the next.
	writeMDDevice(t, v.disk, a, 1, members[1])
	m2 := filepath.Join(v.dir, "member2.img")
	writeMDDevice(t, m2, a, 2, members[2])
	r := v.boot(harness.BootOptions{Timeout: hwBootTimeout, Initramfs: initrd, ExtraDisks: []string{m2}, Append: []string{"cloudroot.test.poweroff"}})
	wantPoweredOff(t, r)
	wantConsoleMatch(t, r, `md array assembled device=/dev/md127 uuid=636c6f75-6472-6f6f-742d-6d642d757535`)
	wantConsoleMatch(t, r, `md/raid:md127: raid level 5 active with 2 out of 3 devices`)
	wantConsole(t, r, "root device root=LABEL=cloudimg-rootfs device=/dev/md127 fstype=ext4", "switching root")
}

// TestRootLVM boots a root on the logical volume vg0/root of a physical
// volume made by Debian's LVM tools (testdata/lvm-head.bin.gz, the disk's
// first MiB from scripts/mklvmfixture.sh; the volume's data starts at
// 1 MiB): cloudroot-init runs the image's lvm to activate vg0, mounts
// root=/dev/mapper/vg0-root and provisions it from a NoCloud seed.
func TestRootLVM(t *testing.T) {
	t.Parallel()
	v := newVM(t)
	initrd := profileInitramfs(t, v.a, "generic")
	needLVM(t)
	fs := rootPartition(t, v.a.Rootfs)
	// The PV's size in its metadata is 300 MiB.
	writePV(t, v.disk, lvmFixture(t, "lvm-head.bin.gz"), fs, 300<<20)
	ud := strings.Replace(smallUserData, "hostname: again", "hostname: lvmroot", 1)
	seed := v.seed(map[string][]byte{"meta-data": meta("iid-lvmroot", "lvmroot"), "user-data": []byte(ud)}, harness.SeedVFAT)
	r := v.boot(harness.BootOptions{Timeout: hwBootTimeout, Initramfs: initrd, Seed: seed, SeedKind: harness.SeedVirtio,
		Append: []string{"root=/dev/mapper/vg0-root", "rd.lvm.vg=vg0"}})
	wantPoweredOff(t, r)
	wantConsole(t, r, "LVM volume groups activated", "root device root=/dev/mapper/vg0-root device=/dev/dm-0 fstype=ext4",
		"instance_id=iid-lvmroot", "switching root",
		// cloud-init skips growpart on a mapped device that is not
		// encrypted; resizefs grows the filesystem to the LV (280 MiB).
		`growpart: skipping device stage=init module=growpart entry=/ device=/dev/dm-0 reason="/dev/dm-0: not a partition"`,
		`Resized root filesystem (type=ext4, val=true) stage=init module=resizefs device=/dev/dm-0`)
}

// TestRootLVMSpan boots a root on a logical volume linear across two
// virtio disks, physical volumes of one volume group made by Debian's LVM
// tools (testdata/lvm-span-head{0,1}.bin.gz from
// scripts/mklvmspanfixture.sh): vg1/root is the first disk's extents 0-39
// then the second's 0-29, so the filesystem's first 160 MiB are on vda and
// the rest on vdb; vg1/spare is two more extents of vdb. The command line
// names only vg1/root (rd.lvm.lv=), so spare must stay inactive.
func TestRootLVMSpan(t *testing.T) {
	t.Parallel()
	v := newVM(t)
	initrd := profileInitramfs(t, v.a, "generic")
	needLVM(t)
	fs := rootPartition(t, v.a.Rootfs)
	const first = 160 << 20 // root's extents on the first disk
	if len(fs) <= first {
		t.Fatalf("root filesystem is %d bytes, want more than the first disk's %d", len(fs), first)
	}
	// Each PV's size in its metadata is 200 MiB.
	writePV(t, v.disk, lvmFixture(t, "lvm-span-head0.bin.gz"), fs[:first], 200<<20)
	second := filepath.Join(v.dir, "pv1.img")
	writePV(t, second, lvmFixture(t, "lvm-span-head1.bin.gz"), fs[first:], 200<<20)
	ud := strings.Replace(smallUserData, "hostname: again", "hostname: lvmspan", 1)
	seed := v.seed(map[string][]byte{"meta-data": meta("iid-lvmspan", "lvmspan"), "user-data": []byte(ud)}, harness.SeedVFAT)
	r := v.boot(harness.BootOptions{Timeout: hwBootTimeout, Initramfs: initrd, ExtraDisks: []string{second}, Seed: seed, SeedKind: harness.SeedVirtio,
		Append: []string{"root=/dev/mapper/vg1-root", "rd.lvm.lv=vg1/root"}})
	wantPoweredOff(t, r)
	wantConsoleMatch(t, r, `LVM volume groups activated request="logical volumes vg1/root" active=vg1-root `)
	wantConsole(t, r, "root device root=/dev/mapper/vg1-root device=/dev/dm-0 fstype=ext4",
		"instance_id=iid-lvmspan", "switching root",
		`Resized root filesystem (type=ext4, val=true) stage=init module=resizefs device=/dev/dm-0`)
	if strings.Contains(r.Console, "vg1-spare") {
		t.Error("vg1/spare was activated although rd.lvm.lv= names only vg1/root")
	}
}
