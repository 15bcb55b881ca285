package disk

// Root-needing resize tests: the first-boot path (a mounted filesystem on a
// GPT partition of a disk that grew → GrowPath with the kernel told via
// BLKPG → the filesystem's Resizer run through a target.Root on "/") on a
// loop device backed by a sparse image in t.TempDir(), for XFS and btrfs.
// ext4 online is TestGrowLoopMountedExt4 (root_linux_test.go), ext4
// offline TestResizeOfflineExt4. Each test skips with the reason when it
// is not root, a tool is missing or the kernel lacks the filesystem; loop
// devices are detached and mounts undone in t.Cleanup on every path, and
// mounts are made in a private mount namespace when one can be had.

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/cloudroot/cloudroot/pkg/target"
)

// privateMounts moves the test's goroutine, locked to its OS thread, into
// a new mount namespace with every mount private, so mounts the test makes
// are invisible to the host and vanish with the thread even if a cleanup
// is missed. The thread is never unlocked: when the test goroutine ends
// the runtime discards it, namespace and all. Commands started from the
// test (os/exec forks from the calling thread) run in the same namespace.
// If unsharing is refused the test goes on in the host's namespace; its
// mounts are under t.TempDir() and undone in t.Cleanup either way.
func privateMounts(t *testing.T) {
	t.Helper()
	runtime.LockOSThread()
	if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
		runtime.UnlockOSThread()
		t.Logf("no private mount namespace (unshare: %v); mounting in the host's", err)
		return
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		// The namespace exists but mounts would propagate back: don't use
		// it. Leaving the thread locked makes the runtime drop it.
		t.Fatalf("making mounts private in the new namespace: %v", err)
	}
}

// needFS skips unless the running kernel knows the filesystem type (built
// in or a module already loaded).
func needFS(t *testing.T, fstype string) {
	t.Helper()
	b, err := os.ReadFile("/proc/filesystems")
	if err != nil {
		t.Skipf("reading /proc/filesystems: %v", err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) > 0 && f[len(f)-1] == fstype {
			return
		}
	}
	t.Skipf("the kernel has no %s (not in /proc/filesystems)", fstype)
}

// grownMount is one filesystem mounted from a loop partition whose disk
// and partition have just been grown.
type grownMount struct {
	part, mnt string
	grow      Result
	before    unix.Statfs_t
}

// mountAndGrow lays out a sparse image of diskBefore bytes with one GPT
// partition of partBytes at 1 MiB, attaches it, makes a filesystem with
// mkfs (the partition node is appended), mounts it under t.TempDir(), then
// grows the image to diskAfter, tells the loop driver (LOOP_SET_CAPACITY)
// and grows the partition with GrowPath as growpart does at boot.
func mountAndGrow(t *testing.T, fstype string, diskBefore, partBytes, diskAfter int64, mkfs ...string) grownMount {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: loop devices and mount")
	}
	needFS(t, fstype)
	needTools(t, "losetup", "partx", "sfdisk", mkfs[0])
	privateMounts(t)

	img := sfdiskImage(t, diskBefore, "label: gpt\nstart=2048, size="+strconvFormat(partBytes/512)+", type="+linuxGUID+"\n")
	dev := loopImage(t, img)
	part := partNode(t, dev, 1)
	run(t, "", append(mkfs, part)...)

	mnt := filepath.Join(t.TempDir(), "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount(part, mnt, fstype, 0, ""); err != nil {
		t.Skipf("mount -t %s %s: %v", fstype, part, err)
	}
	// Registered after loopImage's detach, so it runs before it.
	t.Cleanup(func() {
		if err := unix.Unmount(mnt, 0); err != nil {
			t.Logf("unmount %s: %v; detaching lazily", mnt, err)
			unix.Unmount(mnt, unix.MNT_DETACH)
		}
	})

	g := grownMount{part: part, mnt: mnt}
	if err := unix.Statfs(mnt, &g.before); err != nil {
		t.Fatal(err)
	}
	resize(t, img, diskAfter)
	run(t, "", "losetup", "-c", dev) // the "cloud" grows the disk
	r, err := GrowPath(dev, 1, GrowOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Changed || r.NewEnd != diskAfter/512-34 {
		t.Fatalf("grow: %+v", r)
	}
	if got := sysSize(t, filepath.Base(part)); got != r.NewSize() {
		t.Fatalf("kernel sees partition size %d sectors, want %d", got, r.NewSize())
	}
	g.grow = r
	return g
}

// resizeOnHost runs the resizer for fstype through a target.Root on "/",
// as the agent does.
func (g grownMount) resizeOnHost(t *testing.T, fstype string) {
	t.Helper()
	host, err := target.New("/")
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := ResizeFS(context.Background(), host, fstype, g.part, g.mnt, target.Cmd{Stdout: &out, Stderr: &out}); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	t.Logf("%s resizer output:\n%s", fstype, out.String())
}

// checkGrown checks statfs: the filesystem got bigger and now spans at
// least minFrac of the grown partition (the rest is metadata a filesystem
// doesn't count in f_blocks).
func (g grownMount) checkGrown(t *testing.T, minFrac float64) {
	t.Helper()
	var after unix.Statfs_t
	if err := unix.Statfs(g.mnt, &after); err != nil {
		t.Fatal(err)
	}
	partBytes := float64(g.grow.NewSize() * 512)
	got := float64(after.Blocks) * float64(after.Bsize)
	if after.Blocks <= g.before.Blocks || got < minFrac*partBytes {
		t.Errorf("statfs after resize: %d blocks of %d (%.0f bytes; before %d blocks), partition %.0f bytes",
			after.Blocks, after.Bsize, got, g.before.Blocks, partBytes)
	}
}

var xfsDataRE = regexp.MustCompile(`(?m)^data\s+=\s+bsize=(\d+)\s+blocks=(\d+)`)

// xfsDataBytes is the data section's size from xfs_info.
func xfsDataBytes(t *testing.T, mnt string) int64 {
	t.Helper()
	info := run(t, "", "xfs_info", mnt)
	m := xfsDataRE.FindStringSubmatch(info)
	if m == nil {
		t.Fatalf("no data section in xfs_info output:\n%s", info)
	}
	bs, _ := strconv.ParseInt(m[1], 10, 64)
	n, _ := strconv.ParseInt(m[2], 10, 64)
	return bs * n
}

// TestResizeLoopXFS grows a mounted XFS (xfs_growfs on the mount point)
// after its partition grew. mkfs.xfs refuses filesystems under 300 MB, so
// the partition starts at 320 MiB; the image is sparse.
func TestResizeLoopXFS(t *testing.T) {
	needTools(t, "mkfs.xfs", "xfs_growfs", "xfs_info")
	g := mountAndGrow(t, "xfs", 400*mib, 320*mib, 640*mib, "mkfs.xfs", "-q", "-f", "-K")
	before := xfsDataBytes(t, g.mnt)
	g.resizeOnHost(t, "xfs")
	after := xfsDataBytes(t, g.mnt)
	// xfs_growfs takes the whole device, up to a whole block.
	if want := g.grow.NewSize() * 512; after <= before || after > want || want-after >= 4096 {
		t.Errorf("xfs_info data section %d bytes after resize (before %d), partition %d bytes", after, before, want)
	}
	// statfs leaves out the internal log (64 MiB here) and AG headers.
	g.checkGrown(t, 0.8)
}

var btrfsDevSizeRE = regexp.MustCompile(`(?m)^\s*devid\s+1\s+size\s+(\d+)\s`)

// TestResizeLoopBtrfs grows a mounted btrfs (`btrfs filesystem resize max`
// on the mount point) after its partition grew.
func TestResizeLoopBtrfs(t *testing.T) {
	needTools(t, "mkfs.btrfs", "btrfs")
	g := mountAndGrow(t, "btrfs", 160*mib, 128*mib, 320*mib, "mkfs.btrfs", "-q", "-f", "-K")
	g.resizeOnHost(t, "btrfs")
	show := run(t, "", "btrfs", "filesystem", "show", "--raw", g.mnt)
	m := btrfsDevSizeRE.FindStringSubmatch(show)
	if m == nil {
		t.Fatalf("no devid 1 in btrfs filesystem show:\n%s", show)
	}
	got, _ := strconv.ParseInt(m[1], 10, 64)
	// btrfs rounds the device size down to its sector size (4 KiB).
	if want := g.grow.NewSize() * 512; got > want || want-got >= 4096 {
		t.Errorf("btrfs device size %d after resize, partition %d bytes:\n%s", got, want, show)
	}
	g.checkGrown(t, 0.9)
}
