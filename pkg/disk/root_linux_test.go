package disk

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cloudroot/cloudroot/pkg/target"
)

// loopImage attaches img with partition scanning and returns the loop
// device; it is detached when the test ends.
func loopImage(t *testing.T, img string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root for loop devices")
	}
	needTools(t, "losetup")
	out, err := exec.Command("losetup", "-fP", "--show", img).CombinedOutput()
	if err != nil {
		t.Skipf("losetup: %v: %s", err, out)
	}
	dev := strings.TrimSpace(string(out))
	t.Cleanup(func() { exec.Command("losetup", "-d", dev).Run() })
	return dev
}

// partNode returns a device node for partition n of the loop device: the
// kernel's /dev node when devtmpfs made one, else one made with mknod from
// sysfs (containers often lack devtmpfs).
func partNode(t *testing.T, dev string, n int) string {
	t.Helper()
	name := filepath.Base(dev) + "p" + strconv.Itoa(n)
	var mm string
	for i := 0; i < 100; i++ {
		if i == 10 {
			// No partition table parsers in this kernel: add it as partx
			// does (BLKPG).
			exec.Command("partx", "-a", dev).Run()
		}
		if b, err := os.ReadFile(filepath.Join("/sys/class/block", name, "dev")); err == nil {
			mm = strings.TrimSpace(string(b))
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if mm == "" {
		t.Skipf("the kernel shows no %s", name)
	}
	if _, err := os.Stat("/dev/" + name); err == nil {
		return "/dev/" + name
	}
	ma, mi, _ := strings.Cut(mm, ":")
	maj, _ := strconv.Atoi(ma)
	min, _ := strconv.Atoi(mi)
	p := filepath.Join(t.TempDir(), name)
	if err := unix.Mknod(p, unix.S_IFBLK|0o600, int(unix.Mkdev(uint32(maj), uint32(min)))); err != nil {
		t.Skipf("mknod %s: %v", p, err)
	}
	return p
}

func sysSize(t *testing.T, name string) int64 {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("/sys/class/block", name, "size"))
	if err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	return n
}

// TestGrowLoopMountedExt4 is the whole first-boot path on a real kernel:
// a mounted ext4 root on a disk that grew, its partition grown with the
// kernel told (BLKPG), then resize2fs online. The growing part runs
// everywhere root can use loop devices; the resize itself needs
// CAP_SYS_RESOURCE, which some sandboxes drop even for root.
func TestGrowLoopMountedExt4(t *testing.T) {
	needTools(t, "mkfs.ext4", "resize2fs")
	g := mountAndGrow(t, "ext4", 32*mib, 8*mib, 64*mib, "mkfs.ext4", "-q", "-F")
	if !hasCap(t, capSysResource) {
		t.Skip("online resize needs CAP_SYS_RESOURCE (EXT4_IOC_RESIZE_FS), which this process lacks (CapEff bit 24 in /proc/self/status)")
	}
	g.resizeOnHost(t, "ext4")
	// statfs leaves out the journal, inode tables and group descriptors.
	g.checkGrown(t, 0.75)
}

// TestGrowLoopMBR grows an unmounted MBR partition on a loop device.
func TestGrowLoopMBR(t *testing.T) {
	needTools(t, "sfdisk")
	img := sfdiskImage(t, 32*mib, "label: dos\nstart=2048, size=8192, type=83\n")
	dev := loopImage(t, img)
	partNode(t, dev, 1)
	resize(t, img, 48*mib)
	run(t, "", "losetup", "-c", dev)
	r, err := GrowPath(dev, 1, GrowOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := sysSize(t, filepath.Base(dev)+"p1"); !r.Changed || got != r.NewSize() {
		t.Errorf("grow %+v; kernel sees %d sectors", r, got)
	}
}

const capSysResource = 24

// hasCap reads the effective capability set.
func hasCap(t *testing.T, c uint) bool {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return false
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "CapEff:"); ok {
			n, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			return err == nil && n&(1<<c) != 0
		}
	}
	return false
}

// TestResizeOfflineExt4 grows a real ext4 image file with resize2fs (no
// root needed): the Ext resizer's command against the real tool.
func TestResizeOfflineExt4(t *testing.T) {
	needTools(t, "mkfs.ext4", "resize2fs", "e2fsck", "dumpe2fs")
	img := image(t, 8*mib)
	run(t, "", "mkfs.ext4", "-q", "-F", "-b", "4096", img)
	resize(t, img, 16*mib)
	run(t, "", "e2fsck", "-f", "-y", img)
	host, err := target.New("/")
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := ResizeFS(context.Background(), host, "ext4", img, "", target.Cmd{Stdout: &out, Stderr: &out}); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if d := run(t, "", "dumpe2fs", "-h", img); !strings.Contains(d, "Block count:              4096") {
		t.Errorf("dumpe2fs after resize:\n%s", d)
	}
}
