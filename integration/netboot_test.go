package integration

// Network boot (issue #16): the VM has no kernel given to QEMU and no root
// disk. SeaBIOS runs the virtio NIC's iPXE ROM (Debian's ipxe-qemu), which
// gets DHCP from QEMU's user network and the boot file (an iPXE script)
// from its TFTP server; the script loads the kernel and the initramfs over
// HTTP from a server on 127.0.0.1 reached through guestfwd, as a lab's
// iPXE would from its provisioning server. The seed and the images come
// from that server too.

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/cloudroot/cloudroot/integration/harness"
	"github.com/cloudroot/cloudroot/pkg/bootenv"
	"github.com/cloudroot/cloudroot/pkg/imdsserve"
)

const netbootIP = harness.NetbootIP

// netbootTimeout bounds one network boot: the ROM, two HTTP downloads
// through slirp and a boot under TCG on a loaded host.
const netbootTimeout = 420 * time.Second

// netbootUserData is applied in every network-boot test: a user, a file
// and a command whose output says what the booted system sees.
const netbootUserData = `#cloud-config
users:
  - name: pxeuser
    uid: 4242
    shell: /bin/sh
write_files:
  - path: /etc/pxe-marker
    content: "provisioned over the network\n"
runcmd:
  - echo "PXE-RUNCMD uid=$(id -u pxeuser) marker=$(cat /etc/pxe-marker) rootfs=$(awk '$2=="/"{t=$3} END{print t}' /proc/mounts)" | tee /dev/console
`

// pxeLab is a harness.PXELab for one test.
type pxeLab struct {
	t   *testing.T
	a   harness.Artifacts
	lab *harness.PXELab
	srv *harness.FileServer
	mem int // MiB; 0: 1024
}

// newPXELab serves files plus the kernel and initramfs and writes the iPXE
// script booting them with cmdline (and cloudroot.test.poweroff).
func newPXELab(t *testing.T, files map[string][]byte, cmdline []string) *pxeLab {
	t.Helper()
	a := artifacts(t)
	if _, err := harness.PXEROM(harness.NICVirtio); err != nil {
		t.Skip(err)
	}
	lab, err := harness.NewPXELab(t.TempDir(), a.Vmlinuz, a.Initramfs, files, append([]string{"cloudroot.test.poweroff"}, cmdline...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lab.Close() })
	return &pxeLab{t: t, a: a, lab: lab, srv: lab.Server}
}

// boot runs one network boot with disk (may be "") attached and fwd
// forwarded besides the lab's server.
func (l *pxeLab) boot(name, disk string, fwd ...harness.GuestFwd) *harness.Run {
	l.t.Helper()
	o := l.lab.Options()
	o.Disk, o.Timeout, o.Memory = disk, netbootTimeout, cmp.Or(l.mem, 1024)
	o.GuestFwd = append(o.GuestFwd, fwd...)
	return runBoot(l.t, l.a, name, o)
}

// runBoot boots o, logging the console to the test and to
// build/integration/<name>.log.
func runBoot(t *testing.T, a harness.Artifacts, name string, o harness.BootOptions) *harness.Run {
	t.Helper()
	logDir := filepath.Join(a.Dir, "integration")
	if err := os.MkdirAll(logDir, 0o755); err == nil {
		o.ConsoleLog = filepath.Join(logDir, name+".log")
	}
	lw := harness.NewLineWriter(func(s string) { t.Logf("%s", s) })
	o.Output = lw
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r, err := harness.Boot(ctx, o)
	lw.Flush()
	if err != nil {
		t.Fatalf("boot: %v", err)
	}
	t.Logf("%s: %s; console log %s", name, r.Summary(), o.ConsoleLog)
	return r
}

// seedFiles is a NoCloud seed served at /seed/.
func seedFiles(iid string) map[string][]byte {
	return map[string][]byte{
		"/seed/meta-data": []byte("instance-id: " + iid + "\nlocal-hostname: pxe-node\n"),
		"/seed/user-data": []byte(netbootUserData),
	}
}

func sha256Hex(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

// squashRootfs is the suite's root image as a squashfs.
func squashRootfs(t *testing.T, a harness.Artifacts) []byte {
	t.Helper()
	if miss := harness.HaveTools("mksquashfs", "debugfs"); miss != nil {
		msg := fmt.Sprintf("netboot tools missing: %v (scripts/deps.sh)", miss)
		if os.Getenv(EnvIntegration) == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	p, err := harness.SquashRootfs(a.Rootfs, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestNetbootLiveSquashfs (issue #16 a): PXE → iPXE → cloudroot → the
// suite's root as a squashfs over HTTP, verified against its .sha256,
// under an overlayfs in RAM → user-data applied → power-off.
func TestNetbootLiveSquashfs(t *testing.T) {
	t.Parallel()
	a := artifacts(t)
	sq := squashRootfs(t, a)
	files := seedFiles("iid-pxe-live")
	files["/rootfs.squashfs"] = sq
	files["/rootfs.squashfs.sha256"] = []byte(sha256Hex(sq) + "  rootfs.squashfs\n")
	l := newPXELab(t, files, []string{
		"root=live:http://" + netbootIP + "/rootfs.squashfs",
		"ds=nocloud;s=http://" + netbootIP + "/seed/",
	})
	r := l.boot("TestNetbootLiveSquashfs", "")
	wantPoweredOff(t, r)
	wantConsole(t, r,
		"boot interface from BOOTIF=",
		"downloaded http://"+netbootIP+"/rootfs.squashfs",
		"live root checksum ok (sha256 "+sha256Hex(sq)+")",
		"PXE-RUNCMD uid=4242 marker=provisioned over the network rootfs=overlay",
	)
	if n := l.srv.Count("/rootfs.squashfs.sha256"); n != 1 {
		t.Errorf("the .sha256 was fetched %d times, want 1", n)
	}
	t.Logf("squashfs %d MiB; requests %v", len(sq)>>20, l.srv.Counts())
}

func zstdBytes(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := zstd.NewWriter(&buf, zstd.WithEncoderLevel(zstd.SpeedFastest))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// netbootDiskSize is the empty disk image-to-disk writes on: twice the
// suite's 256 MiB root image, so growpart has room.
const netbootDiskSize = 512 << 20

// TestNetbootImageToDisk (issue #16 b): PXE → cloudroot writes the suite's
// root image (zstd, .sha256 next to it) onto an empty virtio disk → the
// root partition is grown and provisioned in the same boot → a second
// boot from that disk alone (kernel and initramfs given to QEMU as in the
// suite's other tests, no network, no seed) comes up provisioned.
func TestNetbootImageToDisk(t *testing.T) {
	t.Parallel()
	a := artifacts(t)
	raw, err := os.ReadFile(a.Rootfs)
	if err != nil {
		t.Fatal(err)
	}
	img := zstdBytes(t, raw)
	files := seedFiles("iid-pxe-disk")
	files["/rootfs.img.zst"] = img
	files["/rootfs.img.zst.sha256"] = []byte(sha256Hex(img) + "  rootfs.img.zst\n")
	l := newPXELab(t, files, []string{
		"root=LABEL=cloudimg-rootfs",
		"cloudroot.image=http://" + netbootIP + "/rootfs.img.zst",
		"cloudroot.image-target=/dev/vda",
		"ds=nocloud;s=http://" + netbootIP + "/seed/",
	})
	disk := emptyDisk(t, filepath.Join(t.TempDir(), "empty.img"), netbootDiskSize)
	r := l.boot("TestNetbootImageToDisk", disk)
	wantPoweredOff(t, r)
	wantConsole(t, r,
		"image checksum ok (sha256 "+sha256Hex(img)+")",
		"image written: 256 MiB to /dev/vda",
		"PXE-RUNCMD uid=4242 marker=provisioned over the network rootfs=ext4",
	)
	d := diskOf(t, disk)
	d.wantContent("/etc/pxe-marker", "provisioned over the network\n")
	d.wantContains("/etc/passwd", "pxeuser:x:4242:")
	d.wantContains("/var/lib/cloud/seed/nocloud/meta-data", `"instance-id":"iid-pxe-disk"`)
	d.wantMode("/var/lib/cloud/seed/nocloud/user-data", 0o600, 0, 0)
	if part := partition1(t, disk); part.Size < 400<<20 {
		t.Errorf("root partition is %d MiB after the first boot, want it grown to the %d MiB disk", part.Size>>20, netbootDiskSize>>20)
	}

	// Second boot: the disk alone.
	r2 := runBoot(t, a, "TestNetbootImageToDisk-boot2", harness.BootOptions{
		Kernel: a.Kernel, Initramfs: a.Initramfs, Disk: disk,
		Append:  []string{"cloudroot.test.poweroff"},
		Timeout: bootTimeout * 2,
	})
	wantPoweredOff(t, r2)
	// The seed was kept in the written root (/var/lib/cloud/seed/nocloud):
	// the same instance is found without the network.
	// ds-identify finds it, and the instance is the cached one.
	wantConsole(t, r2, `detect decision=enabled reason="found NoCloud"`, "restored from checked cache: DataSourceNoCloud",
		"cloudroot-rootfs: final stage rc=0", "cloudroot-rootfs| status: done")
	if strings.Contains(r2.Console, "PXE-RUNCMD") {
		t.Error("runcmd ran again on the second boot (per-instance)")
	}
	d = diskOf(t, disk)
	d.wantContent("/etc/pxe-marker", "provisioned over the network\n")
	d.wantContains("/var/lib/cloud/data/instance-id", "iid-pxe-disk")

	// Third boot: PXE again with the same command line, as a machine whose
	// firmware tries the network first does: the disk is not empty, so it
	// is left alone and the installed root boots.
	before := l.srv.Count("/rootfs.img.zst")
	r3 := l.boot("TestNetbootImageToDisk-boot3", disk)
	wantPoweredOff(t, r3)
	wantConsole(t, r3, "not writing the image: /dev/vda (data at byte", "cloudroot-rootfs| status: done")
	if strings.Contains(r3.Console, "PXE-RUNCMD") {
		t.Error("runcmd ran again on the third boot (same instance)")
	}
	if n := l.srv.Count("/rootfs.img.zst") - before; n != 0 {
		t.Errorf("the image was downloaded %d time(s) for a disk that is not empty", n)
	}
}

// TestNetbootInstallFromSeed: the installer flow: the command line says
// only cloudroot.image=seed and where the seed is; the image and its
// target come from the seed's cloud-config (`cloudroot: {image:,
// image-target:}`), are written, and the same boot provisions the root.
func TestNetbootInstallFromSeed(t *testing.T) {
	t.Parallel()
	a := artifacts(t)
	raw, err := os.ReadFile(a.Rootfs)
	if err != nil {
		t.Fatal(err)
	}
	img := zstdBytes(t, raw)
	files := seedFiles("iid-pxe-installer")
	files["/seed/user-data"] = []byte(netbootUserData + "cloudroot:\n  image: http://" + netbootIP + "/rootfs.img.zst\n  image-target: /dev/vda\n  image-sha256: " + sha256Hex(img) + "\n")
	files["/rootfs.img.zst"] = img
	l := newPXELab(t, files, []string{
		"root=LABEL=cloudimg-rootfs",
		"cloudroot.image=seed",
		"ds=nocloud;s=http://" + netbootIP + "/seed/",
	})
	disk := emptyDisk(t, filepath.Join(t.TempDir(), "empty.img"), netbootDiskSize)
	r := l.boot("TestNetbootInstallFromSeed", disk)
	wantPoweredOff(t, r)
	wantConsole(t, r,
		"writing image http://"+netbootIP+"/rootfs.img.zst to /dev/vda",
		"image written: 256 MiB to /dev/vda",
		"PXE-RUNCMD uid=4242 marker=provisioned over the network rootfs=ext4",
		"cloudroot-rootfs| status: done",
	)
	if n := l.srv.Count("/rootfs.img.zst.sha256"); n != 0 {
		t.Errorf("the .sha256 was fetched although the cloud-config gave the checksum")
	}
	d := diskOf(t, disk)
	d.wantContains("/etc/passwd", "pxeuser:x:4242:")
}

// TestNetbootImageBadChecksum (issue #16 c): an image whose .sha256 does
// not match leaves the empty disk untouched and the console says why.
func TestNetbootImageBadChecksum(t *testing.T) {
	t.Parallel()
	a := artifacts(t)
	raw, err := os.ReadFile(a.Rootfs)
	if err != nil {
		t.Fatal(err)
	}
	img := zstdBytes(t, raw)
	bad := sha256Hex([]byte("not the image"))
	files := seedFiles("iid-pxe-bad")
	files["/rootfs.img.zst"] = img
	files["/rootfs.img.zst.sha256"] = []byte(bad + "  rootfs.img.zst\n")
	l := newPXELab(t, files, []string{
		"root=LABEL=cloudimg-rootfs", "cloudroot.rootwait=2",
		"cloudroot.image=http://" + netbootIP + "/rootfs.img.zst",
		"cloudroot.image-target=/dev/vda",
	})
	disk := emptyDisk(t, filepath.Join(t.TempDir(), "empty.img"), netbootDiskSize)
	r := l.boot("TestNetbootImageBadChecksum", disk)
	wantExited(t, r)
	wantConsole(t, r, "IMAGE NOT WRITTEN", "expected "+bad, "the disk was not touched")
	f, err := os.Open(disk)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	empty, why, err := emptyAll(f)
	if err != nil {
		t.Fatal(err)
	}
	if !empty {
		t.Errorf("the disk was written to: %s", why)
	}
}

// TestNetbootLiveEc2Metadata: the metadata comes from an EC2-compatible
// service at an address given on the command line, as Tinkerbell's Hegel
// serves it (API 2009-04-04 on port 50061, no IMDSv2 token, no AWS DMI):
// `ds=ec2;metadata_urls=http://…:50061`; the root is a live squashfs; a
// site configuration comes from cloud-config-url=.
func TestNetbootLiveEc2Metadata(t *testing.T) {
	t.Parallel()
	a := artifacts(t)
	sq := squashRootfs(t, a)
	const (
		hegelIP = "169.254.0.101"
		ver     = "2009-04-04"
		iid     = "hegel-node-7"
	)
	tree := writeTree(t, map[string]string{
		ver + "/meta-data/instance-id":    iid,
		ver + "/meta-data/local-hostname": "bm-node-7",
		ver + "/meta-data/hostname":       "bm-node-7",
		ver + "/user-data":                netbootUserData,
	})
	srv, run := startIMDS(t, imdsserve.CloudEC2, tree, false)
	files := map[string][]byte{
		"/rootfs.squashfs":        sq,
		"/rootfs.squashfs.sha256": []byte(sha256Hex(sq) + "\n"),
		// System configuration from cloud-config-url= (cloud-init's
		// 91_kernel_cmdline_url.cfg): the final message says it was used.
		"/site.cfg": []byte("#cloud-config\nfinal_message: \"PXE-SITE-CFG final message from the site configuration\"\n"),
	}
	l := newPXELab(t, files, []string{
		"root=live:http://" + netbootIP + "/rootfs.squashfs",
		"ds=ec2;metadata_urls=http://" + hegelIP + ":50061",
		"cloud-config-url=http://" + netbootIP + "/site.cfg",
	})
	r := l.boot("TestNetbootLiveEc2Metadata", "", harness.GuestFwd{GuestIP: hegelIP, GuestPort: 50061, HostPort: run.Port()})
	t.Logf("metadata requests:\n%s", srv.Log())
	wantPoweredOff(t, r)
	wantConsole(t, r,
		"datasource configuration from the kernel command line",
		"PXE-RUNCMD uid=4242 marker=provisioned over the network rootfs=overlay",
		"cloudroot-rootfs| status: done",
		"wrote cloud-config data from cloud-config-url='http://"+netbootIP+"/site.cfg' to /etc/cloud/cloud.cfg.d/91_kernel_cmdline_url.cfg",
		"PXE-SITE-CFG final message from the site configuration",
	)
	wantConsoleMatch(t, r, `found datasource datasource="?DataSourceEc2.* instance_id=`+iid)
	if srv.Count("GET", "/"+ver+"/meta-data/instance-id") == 0 {
		t.Errorf("the metadata service was not asked for the instance-id")
	}
}

// TestNetbootLiveTooLittleRAM: a live root that would not leave enough
// RAM free is refused before it is stored, with a console message saying
// how much is missing, and the machine powers off (cloudroot.onfail).
func TestNetbootLiveTooLittleRAM(t *testing.T) {
	t.Parallel()
	a := artifacts(t)
	sq := squashRootfs(t, a)
	files := map[string][]byte{"/rootfs.squashfs": sq}
	l := newPXELab(t, files, []string{
		"root=live:http://" + netbootIP + "/rootfs.squashfs", "cloudroot.live-sha256=" + sha256Hex(sq),
	})
	l.mem = 192
	r := l.boot("TestNetbootLiveTooLittleRAM", "")
	wantPoweredOff(t, r)
	wantConsoleMatch(t, r, `FATAL: cannot mount the root filesystem: live root http://`+netbootIP+`/rootfs.squashfs: the live root is \d+ MiB but only \d+ MiB of RAM is available \(192 MiB must stay free\): give the machine at least \d+ MiB more RAM`)
	if strings.Contains(r.Console, "downloaded http://"+netbootIP+"/rootfs.squashfs") {
		t.Error("the image was downloaded although it did not fit")
	}
}

// emptyAll reads the whole disk and reports the first non-zero byte.
func emptyAll(f *os.File) (bool, string, error) {
	buf := make([]byte, 4<<20)
	var off int64
	for {
		n, err := f.ReadAt(buf, off)
		if i := bytes.IndexFunc(buf[:n], func(r rune) bool { return r != 0 }); i >= 0 {
			return false, fmt.Sprintf("data at byte %d", off+int64(i)), nil
		}
		off += int64(n)
		if err != nil {
			return true, "", nil
		}
	}
}

func diskOf(t *testing.T, p string) *disk {
	t.Helper()
	im, err := harness.OpenImage(p)
	if err != nil {
		t.Fatal(err)
	}
	return &disk{t: t, im: im}
}

func partition1(t *testing.T, p string) bootenv.Partition {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, _ := f.Stat()
	tab, err := bootenv.ProbeTable(f, fi.Size(), 0)
	if err != nil {
		t.Fatal(err)
	}
	part, ok := tab.Partition(1)
	if !ok {
		t.Fatal("no partition 1")
	}
	return part
}
