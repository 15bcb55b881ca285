//go:build linux

package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/u-root/u-root/pkg/kmodule"
	"github.com/u-root/u-root/pkg/mount"
	"golang.org/x/sys/unix"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
	"github.com/cloudroot/cloudroot/pkg/cilog"
	"github.com/cloudroot/cloudroot/pkg/identify"
	"github.com/cloudroot/cloudroot/pkg/modules/users"
	"github.com/cloudroot/cloudroot/pkg/netup"
	"github.com/cloudroot/cloudroot/pkg/secret"
	"github.com/cloudroot/cloudroot/pkg/stages"
	"github.com/cloudroot/cloudroot/pkg/state"
	"github.com/cloudroot/cloudroot/pkg/target"
)

// Version is stamped at build time (-ldflags -X main.Version=...).
var Version = "26.2-cloudroot"

const (
	sysroot     = "/sysroot"
	modulesLoad = "/etc/cloudroot/modules.load"
	defaultInit = "/sbin/init"
)

type boot struct {
	log     *slog.Logger
	console io.Writer
	// secrets are scrubbed from the console once the merged config is
	// known (InitOptions.Secrets), and from the logs at hand-off.
	secrets *secret.Known
	logBuf  *lockedBuffer // becomes /var/log/cloud-init.log
	outBuf  *lockedBuffer // becomes /var/log/cloud-init-output.log
	cmdline bootenv.Cmdline
	st      *state.State
	status  *state.Status
	devs    []bootenv.Device
	// entropy is the blocking kernel RNG read started after the drivers;
	// hostKeys generates SSH host keys once it returns.
	entropy      *users.EntropyWaiter
	entropyStart float64
	hostKeys     *users.HostKeyPool
	// imageWritten: cloudroot.image= was written to the disk this boot;
	// imageErr: why it was not (said again if the root is then missing).
	imageWritten bool
	imageErr     error
	// sb is the local and network stages' context (pkg/stages): this
	// boot's state, status and failed steps live there.
	sb *stages.Boot
	// nicPlan is the init stage's ifupdown-pre plan: the NICs to give
	// their booted-system names once the network is down (renameNICs).
	nicPlan *stages.IfupdownPre
}

func uptime() float64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts); err != nil {
		return 0
	}
	return float64(ts.Sec) + float64(ts.Nsec)/1e9
}

func run() error {
	ctx := context.Background()
	known := &secret.Known{}
	scrub := &secret.Writer{W: os.Stdout, Known: known}
	b := &boot{
		console: scrub,
		secrets: known,
		logBuf:  &lockedBuffer{},
		outBuf:  &lockedBuffer{},
		st:      &state.State{Created: time.Now().UTC()},
		status:  state.NewStatus(),
	}
	b.log = slog.New(slog.NewMultiHandler(
		newConsoleHandler(scrub, slog.LevelInfo, uptime),
		cilog.NewHandler(b.logBuf, cilog.Options{Level: slog.LevelDebug, Logger: "stages.py"}),
	))
	b.sb = &stages.Boot{
		Mode: stages.ModeInitramfs, Log: b.log, Out: io.MultiWriter(scrub, b.outBuf),
		Now: time.Now, Uptime: uptime, Version: Version,
		State: b.st, Status: b.status,
		ProbeLine: datasourceLine,
	}
	b.log.Info("cloudroot-init starting", "version", Version, "pid", os.Getpid())
	// A soft memory limit at half the RAM: the collector reclaims garbage
	// before the heap passes it instead of letting a large user-data's
	// transient copies pile up (an OOM kill of PID 1 is a kernel panic).
	// What the init stage needs at once is bounded separately
	// (docs/security.md, "Memory ceiling").
	var si unix.Sysinfo_t
	if err := unix.Sysinfo(&si); err == nil && si.Totalram > 0 {
		debug.SetMemoryLimit(max(int64(si.Totalram)*int64(si.Unit)/2, 64<<20))
	}
	if os.Getpid() != 1 {
		b.log.Warn("not running as PID 1: switch_root only works from PID 1")
	}

	b.step("early", b.early)
	b.step("drivers", b.loadDrivers)
	b.startEntropy()
	// The ephemeral network exists from here: network boot (a live root,
	// an image to write) may need it before the root is mounted.
	net := newEphemeralNet(b)
	var spec bootenv.RootSpec
	if live, ok, lerr := b.cmdline.LiveRoot(); ok {
		spec = b.liveRoot(ctx, net, live, lerr)
	} else {
		if b.cmdline.Has("cloudroot.image") {
			b.step("image", func() error { return b.installImage(ctx, net) })
		}
		var rootDev *bootenv.Device
		spec, rootDev = b.findRoot(ctx)
		b.step("mount-root", func() error { return b.mountRoot(spec, rootDev) })
	}

	t, err := target.New(sysroot, target.WithDeferredSync())
	if err != nil {
		b.fatalRoot(spec, fmt.Errorf("open %s: %w", sysroot, err))
	}
	// A power cut during an earlier boot may have left an account commit
	// half done: finish or undo it before anything reads the databases.
	if rc, err := t.Recover(); err != nil {
		b.log.Warn("recovering an interrupted account commit", "err", err)
	} else if !rc.Empty() {
		b.log.Warn("finished an account commit interrupted by a power cut", "rolled_forward", rc.RolledForward, "rolled_back", rc.RolledBack)
	}
	b.startHostKeys(t)
	run, _ := target.New("/", target.WithDeferredSync())

	sb := b.stageContext(t, run, net)
	data := sb.Local(ctx)
	if data != nil {
		var after []stages.NamedStep
		if b.imageWritten {
			after = append(after, stages.NamedStep{Name: "keep-seed", Run: func() error { return b.keepSeed(t, data) }})
		}
		sb.Init(ctx, data, after...)
	}
	net.down(ctx)
	b.renameNICs(run)
	b.recordEntropy()
	b.recordHostKeys()
	b.handOverUdev()
	b.step("handoff", func() error { return b.handoff(t, run) })
	b.switchRoot(t, spec)
	return nil
}

// step runs one step, timing it; an error is recorded and the boot goes on.
func (b *boot) step(name string, f func() error) { b.sb.Step(name, f) }

func (b *boot) early() error {
	var errs []error
	mounts := []struct {
		src, dst, fstype, data string
		flags                  uintptr
	}{
		{"devtmpfs", "/dev", "devtmpfs", "mode=0755", unix.MS_NOSUID},
		{"proc", "/proc", "proc", "", unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC},
		{"sysfs", "/sys", "sysfs", "", unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC},
		{"tmpfs", "/run", "tmpfs", "mode=0755", unix.MS_NOSUID | unix.MS_NODEV},
		{"tmpfs", "/tmp", "tmpfs", "mode=1777", unix.MS_NOSUID | unix.MS_NODEV},
	}
	for _, m := range mounts {
		if err := os.MkdirAll(m.dst, 0o755); err != nil {
			errs = append(errs, err)
			continue
		}
		if isMountPoint(m.dst) {
			continue
		}
		if err := unix.Mount(m.src, m.dst, m.fstype, m.flags, m.data); err != nil && !errors.Is(err, unix.EBUSY) {
			errs = append(errs, fmt.Errorf("mount %s on %s: %w", m.fstype, m.dst, err))
		}
	}
	for _, d := range []string{"/etc", sysroot, "/run/cloud-init"} {
		_ = os.MkdirAll(d, 0o755)
	}
	if raw, err := os.ReadFile("/proc/cmdline"); err == nil {
		b.cmdline = bootenv.ParseCmdline(strings.TrimSpace(string(raw)))
		b.st.Cmdline = b.cmdline.String()
	} else {
		errs = append(errs, fmt.Errorf("read /proc/cmdline: %w", err))
	}
	if id, err := os.ReadFile("/proc/sys/kernel/random/boot_id"); err == nil {
		b.st.BootID = strings.TrimSpace(string(id))
	}
	return errors.Join(errs...)
}

func isMountPoint(p string) bool {
	var st, parent unix.Stat_t
	if unix.Stat(p, &st) != nil || unix.Stat(filepath.Dir(p), &parent) != nil {
		return false
	}
	return st.Dev != parent.Dev
}

// loadDrivers loads the modules listed in /etc/cloudroot/modules.load with
// their dependencies (u-root kmodule reads modules.dep): the floor every
// boot gets; then coldplug loads what the devices in sysfs match.
func (b *boot) loadDrivers() error {
	f, err := os.Open(modulesLoad)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			b.log.Info("no driver list; relying on built-in drivers", "path", modulesLoad)
			return nil
		}
		return err
	}
	defer f.Close()
	var names []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if l != "" && !strings.HasPrefix(l, "#") {
			names = append(names, l)
		}
	}
	p, err := kmodule.NewProber(kmodule.ProbeOpts{})
	if err != nil {
		return fmt.Errorf("kmodule: %w", err)
	}
	// The Prober is safe for concurrent use: every listed module is probed
	// at once, each with its dependencies loaded first (with
	// cloudroot.async_probe, floorParams, the loads return before the
	// drivers' device probes finish).
	params := floorParams(b.cmdline)
	var (
		mu     sync.Mutex
		failed []string
		loaded int
		wg     sync.WaitGroup
	)
	for _, n := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := time.Now()
			err := p.Probe(n, params)
			mu.Lock()
			defer mu.Unlock()
			if err != nil && !errors.Is(err, unix.EEXIST) {
				failed = append(failed, n)
				b.log.Debug("module load failed", "module", n, "err", err)
				return
			}
			loaded++
			b.log.Debug("module loaded", "module", n, "duration", time.Since(start).Seconds())
		}()
	}
	wg.Wait()
	sort.Strings(failed)
	b.log.Info("drivers loaded", "count", loaded, "failed", len(failed), "params", params)
	if len(failed) > 0 {
		b.log.Info("drivers not loaded (absent hardware or not in this kernel)", "modules", strings.Join(failed, ","))
	}
	b.coldplug(p)
	return nil
}

// defaultEntropyTimeout bounds the wait for the kernel RNG before SSH host
// keys are deferred to the booted root (cloudroot.entropy_timeout=SECONDS).
const defaultEntropyTimeout = 20 * time.Second

// startEntropy starts one blocking getrandom in the background: unlike a
// non-blocking poll, a blocked reader makes the kernel run its jitter
// entropy collection, so the CRNG is ready in about a second even without
// virtio-rng or RDRAND. Nothing waits for it here; the host keys do
// (bounded, saying so on the console).
func (b *boot) startEntropy() {
	timeout := defaultEntropyTimeout
	if v, ok := b.cmdline.Get("cloudroot.entropy_timeout"); ok {
		if d, err := time.ParseDuration(v + "s"); err == nil && d >= 0 {
			timeout = d
		} else {
			b.log.Warn("ignoring cloudroot.entropy_timeout", "value", v)
		}
	}
	b.entropyStart = uptime()
	b.entropy = users.NewEntropyWaiter(func() error {
		buf := make([]byte, 1)
		for {
			_, err := unix.Getrandom(buf, 0)
			if !errors.Is(err, unix.EINTR) {
				return err
			}
		}
	}, timeout, b.log)
	b.hostKeys = users.NewHostKeyPool(b.entropy, nil)
	if v, _ := b.cmdline.Get("cloudroot.hostkeys"); v == "defer" {
		b.hostKeys = users.NewHostKeyPool(users.DeferAll{Reason: "cloudroot.hostkeys=defer on the kernel command line"}, nil)
	}
}

// startHostKeys begins generating the default host-key types (without
// RSA when the target's systemd makes it after sshd started),
// concurrently with the datasource search and the init stage, when this
// is likely a first boot: the target has none of them, or was never
// provisioned (no /var/lib/cloud/instance; ssh_deletekeys, true by
// default, will replace the image's keys). Keys the configuration turns
// out not to want are dropped.
func (b *boot) startHostKeys(t *target.Root) {
	if v, _ := b.cmdline.Get("cloudroot.hostkeys"); v == "defer" {
		return
	}
	none := true
	for _, k := range users.DefaultGenKeyTypes {
		if t.Exists("/etc/ssh/ssh_host_" + k + "_key") {
			none = false
		}
	}
	if _, err := t.Lstat(state.InstanceLink); none || err != nil {
		types := users.DefaultGenKeyTypes
		if users.BackgroundHostKeysEnabled(t) {
			// RSA goes to the booted root (stages.InitOptions.BackgroundHostKeys).
			types, _ = users.SplitHostKeyTypes(types)
		}
		b.hostKeys.Start(types...)
	}
}

// recordEntropy notes how long the kernel RNG took (it ran alongside the
// other stages).
func (b *boot) recordEntropy() {
	if b.entropy == nil {
		return
	}
	if b.entropy.Ready() {
		d := b.entropy.Elapsed().Seconds()
		b.st.Timings = append(b.st.Timings, state.Timing{Stage: "entropy", Start: b.entropyStart, Duration: d})
		b.log.Info("kernel random number generator was ready", "duration", fmt.Sprintf("%.3fs", d))
	} else {
		b.log.Warn("kernel random number generator still not ready at hand-off")
	}
}

// recordHostKeys logs the CPU time the background host-key generation
// used: it ran alongside the stages, so on a one-CPU machine that much of
// their duration was key generation (bench-vs-cloud-init subtracts it).
func (b *boot) recordHostKeys() {
	if b.hostKeys == nil {
		return
	}
	if cpu, n := b.hostKeys.GenerationCPU(); n > 0 {
		b.log.Info("host key generation", "keys", n, "cpu", fmt.Sprintf("%.3fs", cpu.Seconds()))
	}
}

// findRoot waits (bounded) for the root device named on the command line.
func (b *boot) findRoot(ctx context.Context) (bootenv.RootSpec, *bootenv.Device) {
	start := uptime()
	spec, err := b.cmdline.Root()
	env := bootenv.Env{}
	wait := 10 * time.Second
	if spec.Wait {
		wait = 120 * time.Second
	}
	if v, ok := b.cmdline.Get("cloudroot.rootwait"); ok {
		if d, perr := time.ParseDuration(v + "s"); perr == nil {
			wait = d
		}
	}
	if err == nil {
		b.log.Info(waitRootLine(spec.String(), wait))
	}
	if spec.Delay > 0 {
		time.Sleep(spec.Delay)
	}
	var dev *bootenv.Device
	if err == nil {
		wctx, cancel := context.WithTimeout(ctx, wait)
		devs, werr := env.WaitFor(wctx, func(ds []bootenv.Device) bool {
			_, ok := bootenv.Find(ds, spec)
			return ok
		}, 20*time.Millisecond)
		cancel()
		b.devs = devs
		if werr == nil {
			if d, ok := bootenv.Find(devs, spec); ok {
				dev = &d
			}
		}
	}
	// Let the remaining devices (CD-ROMs behind SCSI/ATA) finish appearing.
	sctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	if devs, serr := env.Settle(sctx, 200*time.Millisecond, 3*time.Second); serr == nil || len(devs) > 0 {
		b.devs = devs
	}
	cancel()
	b.st.Timings = append(b.st.Timings, state.Timing{Stage: "devices", Start: start, Duration: uptime() - start})
	for _, d := range b.devs {
		b.log.Debug("block device", "device", d.Path, "fstype", d.FS.Type, "label", d.FS.Label, "uuid", d.FS.UUID, "partuuid", d.PartUUID)
	}
	if err != nil {
		b.fatalRoot(spec, err)
	}
	if dev == nil {
		if d, ok := bootenv.Find(b.devs, spec); ok {
			dev = &d
		} else {
			b.fatalRoot(spec, fmt.Errorf("no device matches root=%s after waiting %s", spec, wait))
		}
	}
	b.log.Info("root device", "root", spec.String(), "device", dev.Path, "fstype", dev.FS.Type)
	return spec, dev
}

func (b *boot) mountRoot(spec bootenv.RootSpec, dev *bootenv.Device) error {
	if bootenv.IsContainer(dev.FS.Type) {
		b.fatalRoot(spec, containerError(*dev))
	}
	fstype := spec.FSType
	if fstype == "" {
		fstype = dev.FS.Type
	}
	if fstype == "" {
		b.fatalRoot(spec, fmt.Errorf("%s has no recognisable filesystem; give rootfstype=", dev.Path))
	}
	// Filesystems shipped "on demand" (xfs, btrfs) are loaded by type now;
	// one that is built in or already loaded is not an error.
	if p, err := kmodule.NewProber(kmodule.ProbeOpts{}); err == nil {
		if err := p.Probe(fstype, ""); err != nil {
			b.log.Debug("filesystem module not loaded", "fstype", fstype, "err", err)
		}
	}
	// Provisioning writes to the root, so it is mounted read-write now and
	// remounted read-only before switch_root when the command line says ro.
	if err := unix.Mount(dev.Path, sysroot, fstype, 0, spec.Flags); err != nil {
		b.fatalRoot(spec, fmt.Errorf("mount %s (%s) on %s: %w", dev.Path, fstype, sysroot, err))
	}
	return nil
}

// fatalRoot is the one failure that stops the boot: it says what was looked
// for and what was seen, then waits (or acts on cloudroot.onfail=).
func (b *boot) fatalRoot(spec bootenv.RootSpec, err error) {
	var sb strings.Builder
	fmt.Fprintf(&sb, "\ncloudroot-init: FATAL: cannot mount the root filesystem: %v\n", err)
	if r, ok := b.cmdline.Get("root"); ok {
		fmt.Fprintf(&sb, "cloudroot-init: looked for root=%s (rootfstype=%q)\n", r, spec.FSType)
	} else {
		fmt.Fprintf(&sb, "cloudroot-init: the kernel command line has no root= (it is: %q)\n", b.cmdline.String())
	}
	if len(b.devs) == 0 {
		fmt.Fprintf(&sb, "cloudroot-init: no block devices were seen: is the disk driver in the initramfs (%s)?\n", modulesLoad)
	} else {
		fmt.Fprintf(&sb, "cloudroot-init: block devices seen:\n")
		for _, d := range b.devs {
			fmt.Fprintf(&sb, "  %-10s %8d MiB  type=%-8s label=%q uuid=%q partuuid=%q partlabel=%q", d.Path, d.Size>>20, d.FS.Type, d.FS.Label, d.FS.UUID, d.PartUUID, d.PartLabel)
			if d.Err != "" {
				fmt.Fprintf(&sb, " (%s)", d.Err)
			}
			sb.WriteString("\n")
		}
	}
	sb.WriteString(containerHint(b.cmdline.Get, b.devs))
	if b.imageErr != nil {
		fmt.Fprintf(&sb, "cloudroot-init: cloudroot.image= was not written to the disk: %v\n", b.imageErr)
	}
	msg := sb.String()
	fmt.Fprint(b.console, msg)
	b.flushConsole()
	action, _ := b.cmdline.Get("cloudroot.onfail")
	unix.Sync()
	switch action {
	case "poweroff":
		_ = unix.Reboot(unix.LINUX_REBOOT_CMD_POWER_OFF)
	case "reboot":
		_ = unix.Reboot(unix.LINUX_REBOOT_CMD_RESTART)
	}
	for {
		time.Sleep(60 * time.Second)
		fmt.Fprint(b.console, msg)
		b.flushConsole()
	}
}

// stageContext is the local and network stages' view of this boot
// (pkg/stages runs them): the target, what the initramfs has probed, the
// ephemeral network, and the init stage's hooks into PID 1 (the bind
// mounts into /sysroot, the live hostname, the host-key pool, the IPv6
// the router advertised).
func (b *boot) stageContext(t, run *target.Root, net *ephemeralNet) *stages.Boot {
	var uts unix.Utsname
	_ = unix.Uname(&uts)
	sb := b.sb
	sb.Target, sb.Run = t, run
	sb.Cmdline = b.cmdline
	sb.Devices = b.devs
	sb.DMI = bootenv.ReadDMI("")
	sb.Uname = identify.Uname{Sysname: cstr(uts.Sysname[:]), Release: cstr(uts.Release[:]), Version: cstr(uts.Version[:]), Machine: cstr(uts.Machine[:])}
	sb.Host = os.DirFS("/")
	sb.Net = net
	sb.BeforeSearch = func(ctx context.Context) error { return b.cmdlineURL(ctx, t, net) }
	sb.Bind = func() (func() error, error) { return target.BindSystem(sysroot, target.BindMounter{}) }
	sb.SysInfo = stages.SysInfo{
		System: cstr(uts.Sysname[:]), KernelRelease: cstr(uts.Release[:]), Version: cstr(uts.Version[:]),
		Machine: cstr(uts.Machine[:]), Hostname: cstr(uts.Nodename[:]),
	}
	sb.SetLiveHostname = func(name string) error { return unix.Sethostname([]byte(name)) }
	sb.HostKeys = b.hostKeys
	sb.BackgroundHostKeys = true
	sb.NetLinks = func() []bootenv.NetLink {
		links := bootenv.NetLinks("")
		net.ipv6(links)
		return links
	}
	sb.Secrets = b.secrets.Set
	sb.OnNetwork = func(r *stages.NetworkResult) { b.nicPlan = r.IfupdownPre }
	return sb
}

// renameNICs gives the configured NICs the names the booted system's udev
// would give them (the configuration's set-name, else the predictable name),
// once the initramfs is done with the network, so the booted system need
// not wait for udev to name them (stages.RenameNICs). A NIC that cannot
// be renamed is left to udev, as without this.
func (b *boot) renameNICs(run *target.Root) {
	if b.nicPlan == nil || len(b.nicPlan.Renames) == 0 {
		return
	}
	start := uptime()
	names, err := stages.RenameNICs(run, b.nicPlan, func(r stages.NICRename) error {
		return netup.Rename(r.From, r.To, r.MAC)
	})
	if err != nil {
		b.log.Warn("NIC left for udev to name", "err", err)
	}
	for _, r := range b.nicPlan.Renames {
		if slices.Contains(names, r.To) {
			b.log.Info("NIC renamed to its name in the booted system", "from", r.From, "to", r.To, "mac", r.MAC)
		}
	}
	b.st.Timings = append(b.st.Timings, state.Timing{Stage: "nic-names", Start: start, Duration: uptime() - start})
}

func cstr(b []byte) string {
	if i := strings.IndexByte(string(b), 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

// handoff writes the state, status, markers and logs (pkg/stages), then
// the console's timings and banner.
func (b *boot) handoff(t, run *target.Root) error {
	err := b.sb.Handoff(b.logBuf.Bytes(), b.outBuf.Bytes())
	b.summary()
	failed := slices.Clone(b.sb.Failed)
	if err != nil {
		failed = append(failed, "handoff")
	}
	b.log.Info(banner(b.outcome(failed)))
	return err
}

// outcome gathers the banner's facts from the state and status.
func (b *boot) outcome(failed []string) outcome {
	o := outcome{
		Disabled:       b.st.Disabled,
		DisabledReason: b.st.DisabledReason,
		Datasource:     b.status.Datasource,
		InstanceID:     b.st.InstanceID,
		Uptime:         uptime(),
	}
	o.FailedStages, o.Errors, o.Warnings = b.sb.FailedStages(failed)
	return o
}

// summary prints every stage's duration on the console.
func (b *boot) summary() {
	var sb strings.Builder
	var total float64
	for _, tm := range b.st.Timings {
		if strings.Contains(tm.Stage, "/") {
			continue
		}
		fmt.Fprintf(&sb, " %s=%.3fs", tm.Stage, tm.Duration)
		if tm.Stage != "devices" && tm.Stage != "drivers" && tm.Stage != "entropy" {
			total += tm.Duration
		}
	}
	b.log.Info("timings:" + sb.String())
	b.log.Info(fmt.Sprintf("cloudroot work in the initramfs (excluding driver, device and entropy waits): %.3fs", total))
	b.flushConsole()
}

// flushConsole writes what the console's scrubber holds back (an
// incomplete line): before hand-off or a halt.
func (b *boot) flushConsole() {
	if f, ok := b.console.(interface{ Flush() error }); ok {
		_ = f.Flush()
	}
}

// switchRoot checks the target init exists, then hands over. If the root
// must be read-only (ro), it is remounted so before the switch.
func (b *boot) switchRoot(t *target.Root, spec bootenv.RootSpec) {
	candidates := []string{defaultInit, "/etc/init", "/bin/init", "/bin/sh"}
	if spec.Init != "" {
		candidates = append([]string{spec.Init}, candidates...)
	}
	initPath := ""
	for _, c := range candidates {
		hp, err := t.Resolve(c)
		if err != nil {
			continue
		}
		if fi, err := os.Stat(hp); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			initPath = c
			break
		}
		if c == spec.Init {
			b.log.Error("init= does not exist or is not executable in the root; trying defaults", "init", c)
		}
	}
	if initPath == "" {
		b.fatalRoot(spec, fmt.Errorf("the root filesystem has no init (looked for %s)", strings.Join(candidates, ", ")))
	}
	if spec.ReadOnly {
		if err := unix.Mount("", sysroot, "", unix.MS_REMOUNT|unix.MS_RDONLY, spec.Flags); err != nil {
			b.log.Warn("remount root read-only failed", "err", err)
		}
	}
	b.log.Info("switching root", "init", initPath)
	unix.Sync()
	if err := mount.SwitchRoot(sysroot, initPath); err != nil {
		b.fatalRoot(spec, fmt.Errorf("switch_root to %s: %w", initPath, err))
	}
}
