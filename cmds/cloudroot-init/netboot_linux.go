//go:build linux

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/u-root/u-root/pkg/kmodule"
	"github.com/u-root/u-root/pkg/mount/loop"
	"golang.org/x/sys/unix"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/builtin"
	"github.com/cloudroot/cloudroot/pkg/identify"
	"github.com/cloudroot/cloudroot/pkg/imds"
	"github.com/cloudroot/cloudroot/pkg/netboot"
	"github.com/cloudroot/cloudroot/pkg/stages"
	"github.com/cloudroot/cloudroot/pkg/state"
	"github.com/cloudroot/cloudroot/pkg/target"
	"github.com/cloudroot/cloudroot/pkg/userdata"
)

// Where a live root lives: its own tmpfs under /run, so switch_root moves
// it (with the squashfs mount and the overlay's upper layer) into the
// running system, as Debian's live-boot does.
const (
	liveDir   = "/run/live"
	liveLower = liveDir + "/rootfs"
	liveRW    = liveDir + "/overlay"
)

// liveReserve is the RAM left over after a live image is in memory, for
// the kernel, the overlay's writes and the system that runs from it.
const liveReserve = 192 << 20

// bootIface waits (bounded) for the NIC BOOTIF= names and returns its name.
func (b *boot) bootIface(ctx context.Context) (string, bool) {
	mac, ok, err := b.cmdline.BootIF()
	if !ok {
		return "", false
	}
	if err != nil {
		b.log.Warn("ignoring BOOTIF=", "err", err)
		return "", false
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		if name, ok := bootenv.LinkByMAC(bootenv.NetLinks(""), mac); ok {
			b.log.Info("boot interface from BOOTIF=", "iface", name, "mac", mac.String())
			return name, true
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			b.log.Warn("no interface has the BOOTIF= MAC; trying every interface", "mac", mac.String())
			return "", false
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// fetcher is the download side of network boot, on the ephemeral
// network's client.
func (b *boot) fetcher(n *ephemeralNet) *netboot.Fetcher {
	n.mu.Lock()
	defer n.mu.Unlock()
	return &netboot.Fetcher{Client: n.Client(), Progress: b.console, Log: b.log}
}

// memAvailable is /proc/meminfo's MemAvailable in bytes (-1 unknown).
func memAvailable() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return -1
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "MemAvailable:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err == nil {
				return kb << 10
			}
		}
	}
	return -1
}

// loadModules loads filesystem and block modules shipped on demand.
func (b *boot) loadModules(names ...string) {
	p, err := kmodule.NewProber(kmodule.ProbeOpts{})
	if err != nil {
		b.log.Warn("kmodule", "err", err)
		return
	}
	for _, n := range names {
		if err := p.Probe(n, ""); err != nil && !errors.Is(err, unix.EEXIST) {
			b.log.Debug("module not loaded (built in or absent)", "module", n, "err", err)
		}
	}
}

// liveRoot makes /sysroot from root=live:…: the image is fetched into RAM
// (or opened in place), verified, mounted read-only and covered by an
// overlayfs whose upper layer is a tmpfs. Any failure is fatal, with a
// console message saying why: there is no root without it.
func (b *boot) liveRoot(ctx context.Context, n *ephemeralNet, live bootenv.LiveRoot, perr error) bootenv.RootSpec {
	spec := bootenv.RootSpec{Kind: bootenv.ByPath, Value: "live:" + live.Source()}
	spec.Init, _ = b.cmdline.Get("init")
	spec.FSType = live.FSType
	if perr != nil {
		b.fatalRoot(spec, perr)
	}
	// Seeds (a NoCloud CD) are still looked for among the block devices.
	sctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	if devs, err := (bootenv.Env{}).Settle(sctx, 200*time.Millisecond, 3*time.Second); err == nil || len(devs) > 0 {
		b.devs = devs
	}
	cancel()
	b.loadModules("loop", "overlay", live.FSType)
	var err error
	b.step("live-root", func() error {
		err = b.mountLive(ctx, n, live)
		return err
	})
	if err != nil {
		b.fatalRoot(spec, err)
	}
	b.log.Info("root device", "root", spec.String(), "fstype", live.FSType, "overlay", "tmpfs")
	return spec
}

func (b *boot) mountLive(ctx context.Context, n *ephemeralNet, live bootenv.LiveRoot) error {
	if err := os.MkdirAll(liveDir, 0o755); err != nil {
		return err
	}
	if err := unix.Mount("tmpfs", liveDir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755,size=90%"); err != nil {
		return fmt.Errorf("mount tmpfs on %s: %w", liveDir, err)
	}
	image := live.Path
	if live.URL != "" {
		if err := n.up(ctx); err != nil {
			return fmt.Errorf("live root %s needs the network: %w", live.URL, err)
		}
		f := b.fetcher(n)
		want, err := f.Expected(ctx, live.URL, live.Checksum)
		if err != nil {
			return err
		}
		image = path.Join(liveDir, "rootfs."+live.FSType)
		out, err := os.Create(image)
		if err != nil {
			return err
		}
		v := netboot.NewVerifier(want)
		avail := memAvailable()
		_, err = f.Copy(ctx, live.URL, io.MultiWriter(out, v), func(size int64) error {
			return ramCheck(size, avail)
		})
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = v.Check()
		}
		if err != nil {
			_ = os.Remove(image)
			return fmt.Errorf("live root %s: %w", live.URL, err)
		}
		if want != "" {
			fmt.Fprintf(b.console, "cloudroot-init: live root checksum ok (sha256 %s)\n", v.Sum())
		}
	} else if live.Checksum.SHA256 != "" {
		v := netboot.NewVerifier(live.Checksum.SHA256)
		if _, err := (&netboot.Fetcher{Progress: b.console}).Copy(ctx, live.Path, v, nil); err != nil {
			return err
		}
		if err := v.Check(); err != nil {
			return fmt.Errorf("live root %s: %w", live.Path, err)
		}
	}
	for _, d := range []string{liveLower, liveRW} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	if err := mountImage(image, liveLower, live.FSType); err != nil {
		return err
	}
	if err := unix.Mount("tmpfs", liveRW, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755"); err != nil {
		return fmt.Errorf("mount tmpfs on %s: %w", liveRW, err)
	}
	for _, d := range []string{liveRW + "/upper", liveRW + "/work"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	opts := "lowerdir=" + liveLower + ",upperdir=" + liveRW + "/upper,workdir=" + liveRW + "/work"
	if err := unix.Mount("overlay", sysroot, "overlay", 0, opts); err != nil {
		return fmt.Errorf("mount overlay on %s (%s): %w", sysroot, opts, err)
	}
	return nil
}

// ramCheck refuses an image that would not leave liveReserve of RAM.
func ramCheck(size, avail int64) error {
	if size < 0 || avail < 0 {
		return nil
	}
	if size+liveReserve > avail {
		return fmt.Errorf("the live root is %d MiB but only %d MiB of RAM is available (%d MiB must stay free): give the machine at least %d MiB more RAM, or write the image to disk with cloudroot.image=",
			size>>20, avail>>20, int64(liveReserve)>>20, (size+liveReserve-avail)>>20+1)
	}
	return nil
}

// mountImage mounts an image file (through a loop device) or a block
// device read-only.
func mountImage(image, dir, fstype string) error {
	fi, err := os.Stat(image)
	if err != nil {
		return err
	}
	dev := image
	if fi.Mode().IsRegular() {
		if dev, err = attachLoop(image); err != nil {
			return fmt.Errorf("loop device for %s: %w", image, err)
		}
	}
	if err := unix.Mount(dev, dir, fstype, unix.MS_RDONLY, ""); err != nil {
		return fmt.Errorf("mount %s (%s) read-only on %s: %w", dev, fstype, dir, err)
	}
	return nil
}

// attachLoop binds a free loop device to file, waiting (bounded) for
// devtmpfs to create the node the kernel just allocated.
func attachLoop(file string) (string, error) {
	dev, err := loop.FindDevice()
	if err != nil {
		return "", fmt.Errorf("/dev/loop-control: %w (is the loop module in the initramfs?)", err)
	}
	for i := 0; i < 100; i++ {
		if _, err = os.Stat(dev); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := loop.SetFile(dev, file); err != nil {
		return "", fmt.Errorf("%s: %w", dev, err)
	}
	return dev, nil
}

// imageStageReserve is the RAM kept free when an image is staged in RAM
// for verification before it is written.
const imageStageReserve = 256 << 20

// installImage writes cloudroot.image= to its target before the root is
// looked for: one boot from a bare disk to a provisioned machine. A
// failure is recorded and the boot goes on (the root will then not be
// found, which says so).
func (b *boot) installImage(ctx context.Context, n *ephemeralNet) error {
	if v, _ := b.cmdline.Get("cloudroot.image"); v == imageFromSeed {
		img, err := b.seedImage(ctx, n)
		if err != nil {
			return b.imageFailed(err)
		}
		return b.writeImage(ctx, n, img)
	}
	img, ok, err := b.cmdline.Image()
	if !ok {
		return nil
	}
	if err != nil {
		return b.imageFailed(err)
	}
	return b.writeImage(ctx, n, img)
}

func (b *boot) writeImage(ctx context.Context, n *ephemeralNet, img bootenv.Image) error {
	fmt.Fprintf(b.console, "cloudroot-init: writing image %s to %s\n", img.URL, img.Target)
	if netboot.IsRemote(img.URL) {
		if err := n.up(ctx); err != nil {
			return b.imageFailed(fmt.Errorf("image %s needs the network: %w", img.URL, err))
		}
	}
	// The target may still be appearing (drivers just loaded).
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(img.Target); err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	disk, err := os.OpenFile(img.Target, os.O_RDWR|unix.O_EXCL, 0)
	if err != nil {
		return b.imageFailed(fmt.Errorf("opening %s: %w", img.Target, err))
	}
	defer disk.Close()
	size, err := disk.Seek(0, io.SeekEnd)
	if err != nil {
		return b.imageFailed(fmt.Errorf("size of %s: %w", img.Target, err))
	}
	in := &netboot.Install{
		Fetcher: b.fetcher(n),
		Image:   img,
		Disk:    disk,
		Size:    size,
		Out:     b.console,
	}
	if avail := memAvailable(); avail > imageStageReserve {
		in.StageDir, in.StageMax = "/run", avail-imageStageReserve
		var fs unix.Statfs_t
		if unix.Statfs("/run", &fs) == nil {
			in.StageMax = min(in.StageMax, int64(fs.Bavail)*fs.Bsize-(16<<20))
		}
	}
	start := uptime()
	res, err := in.Run(ctx)
	b.st.Timings = append(b.st.Timings, state.Timing{Stage: "image-write", Start: start, Duration: uptime() - start})
	if errors.Is(err, netboot.ErrNotEmpty) {
		// The usual case of a machine that PXE-boots every time with the
		// same command line: the image was installed on an earlier boot.
		// The disk is left alone and the boot goes on from its root.
		fmt.Fprintf(b.console, "cloudroot-init: not writing the image: %v\n", err)
		b.log.Warn("image not written: the target is not empty", "device", img.Target)
		return nil
	}
	if err != nil {
		return b.imageFailed(err)
	}
	fmt.Fprintf(b.console, "cloudroot-init: image written: %d MiB to %s (downloaded %d MiB, sha256 %s, verified before writing: %v)\n",
		res.Bytes>>20, img.Target, res.Download>>20, res.SHA256, res.Staged)
	b.imageWritten = true
	// The kernel re-reads the new partition table; devtmpfs makes the
	// partition nodes the root is then found on.
	if err := unix.IoctlSetInt(int(disk.Fd()), unix.BLKRRPART, 0); err != nil {
		b.log.Warn("re-reading the partition table", "device", img.Target, "err", err)
	}
	return nil
}

func (b *boot) imageFailed(err error) error {
	b.imageErr = err
	fmt.Fprintf(b.console, "cloudroot-init: IMAGE NOT WRITTEN: %v\n", err)
	b.status.Get(state.StageInitLocal).Errors = append(b.status.Get(state.StageInitLocal).Errors, "image: "+err.Error())
	return fmt.Errorf("image: %w", err)
}

// kernelCmdlineURLCfg is where cloud-init writes cloud-config-url='s
// document (attempt_cmdline_url).
const kernelCmdlineURLCfg = "/etc/cloud/cloud.cfg.d/91_kernel_cmdline_url.cfg"

// cmdlineURL fetches cloud-config-url= (or the deprecated url=) and writes
// it into the target's cloud.cfg.d when it is a #cloud-config document, as
// cloud-init's attempt_cmdline_url does; anything else is logged and left.
func (b *boot) cmdlineURL(ctx context.Context, t *target.Root, n *ephemeralNet) error {
	key, u, ok := b.cmdline.CloudConfigURL()
	if !ok {
		return nil
	}
	var data []byte
	var err error
	if strings.HasPrefix(u, "file://") || strings.HasPrefix(u, "/") {
		data, err = os.ReadFile(strings.TrimPrefix(u, "file://"))
	} else {
		if err := n.up(ctx); err != nil {
			return fmt.Errorf("%s=%s: %w", key, u, err)
		}
		data, err = userdata.HTTPFetcher(n.Client(), userdata.DefaultMaxSize, 2)(ctx, u)
	}
	if err != nil {
		return fmt.Errorf("retrieving url '%s' failed: %w", u, err)
	}
	if !bytes.HasPrefix(data, []byte("#cloud-config")) {
		b.log.Warn(fmt.Sprintf("contents of '%s' did not start with b'#cloud-config'", u))
		return nil
	}
	if key == "url" {
		b.log.Warn("The kernel command line key `url` is deprecated: use `cloud-config-url`")
	}
	if err := t.WriteFile(kernelCmdlineURLCfg, data, 0o600); err != nil {
		return err
	}
	b.log.Info(fmt.Sprintf("wrote cloud-config data from %s='%s' to %s", key, u, kernelCmdlineURLCfg))
	return nil
}

// cmdlineSourceConfig merges what ds=NAME;key=value… carries beyond
// NoCloud's keys into the datasource config (stages.CmdlineSourceConfig).
func (b *boot) cmdlineSourceConfig(dsCfg map[string]any) map[string]any {
	return stages.CmdlineSourceConfig(b.cmdline, dsCfg, b.log)
}

// installedSeedDir is where an installed machine keeps the NoCloud seed it
// was provisioned from (cloud-init's local seed directory for NoCloud).
const installedSeedDir = "/var/lib/cloud/seed/nocloud"

// keepSeed copies a network NoCloud seed into the root just written by
// cloudroot.image=, so that later boots from the disk alone (no network
// boot, no ds= on their command line) find the same instance locally
// instead of ds-identify disabling cloud-init. Files are 0600: user-data
// may hold secrets. Other datasources are found again as on any cloud.
func (b *boot) keepSeed(t *target.Root, d *datasource.Data) error {
	if d == nil || d.Name != "NoCloud" || d.Mode != "net" {
		return nil
	}
	// Without seedfrom and dsmode the kept seed is a local one: found in
	// the initramfs, with no network and no redirection back to the server.
	meta := map[string]any{}
	for k, v := range d.MetaData {
		if k != "seedfrom" && k != "dsmode" {
			meta[k] = v
		}
	}
	md, err := json.Marshal(meta)
	if err != nil {
		return fmt.Errorf("meta-data: %w", err)
	}
	files := map[string][]byte{"meta-data": md, "user-data": d.UserData}
	if d.VendorData != nil {
		files["vendor-data"] = d.VendorData
	}
	if d.NetworkConfig != nil {
		nc, err := json.Marshal(d.NetworkConfig)
		if err != nil {
			return fmt.Errorf("network-config: %w", err)
		}
		files["network-config"] = nc
	}
	for name, data := range files {
		if err := t.WriteFile(installedSeedDir+"/"+name, data, 0o600); err != nil {
			return err
		}
	}
	b.log.Info("kept the NoCloud seed in the installed root", "path", installedSeedDir)
	return nil
}

// imageFromSeed as cloudroot.image= says the image request is in the
// seed's cloud-config (netboot.ConfigKey): an installer flow.
const imageFromSeed = "seed"

// seedImage reads the datasource named by ds= before any root exists and
// returns the image request in its user-data. The normal datasource
// search runs again later, on the written root, as on any boot.
func (b *boot) seedImage(ctx context.Context, n *ephemeralNet) (bootenv.Image, error) {
	var img bootenv.Image
	arg, ok := b.cmdline.DS()
	if !ok {
		return img, errors.New("cloudroot.image=seed needs the datasource on the command line (ds=nocloud;s=http://…/ or ds=ec2;metadata_urls=…)")
	}
	name := identify.NormalizeName(arg.Name)
	pol, _ := searchPolicy(b.cmdline) // findDatasource reports malformed keys
	srcs, _ := builtin.Registry().Select([]string{name})
	if len(srcs) == 0 {
		return img, fmt.Errorf("cloudroot.image=seed: datasource %q is not in this build", arg.Name)
	}
	env := datasource.Env{
		Cmdline: b.cmdline,
		DMI:     bootenv.ReadDMI(""),
		Config:  b.cmdlineSourceConfig(nil),
		Budget:  stages.DatasourceBudget,
		Policy:  &pol,
		Log:     b.log,
	}
	sctx, cancel := context.WithTimeoutCause(ctx, pol.Deadline, imds.ErrDeadline)
	defer cancel()
	d, err := srcs[0].Get(sctx, env)
	if errors.Is(err, datasource.ErrNeedNetwork) {
		if nerr := n.up(sctx); nerr != nil {
			return img, nerr
		}
		env.NetworkUp, env.HTTP, env.Lease = true, n.Client(), n.dsLease()
		d, err = srcs[0].Get(sctx, env)
	}
	if err != nil {
		return img, fmt.Errorf("reading %s for the image to install: %w", name, err)
	}
	res, err := userdata.Process(ctx, "user-data", d.UserData, userdata.Options{Fetch: n.fetch, IncludeBudget: includeBudget(b.cmdline)})
	if err != nil {
		return img, err
	}
	img, ok, err = netboot.ImageFromConfigs(res.Configs())
	if !ok && err == nil {
		err = fmt.Errorf("cloudroot.image=seed: the user-data of %s has no %s.image", d.Description(), netboot.ConfigKey)
	}
	return img, err
}
