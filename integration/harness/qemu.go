package harness

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Seed attachments for BootOptions.SeedKind.
const (
	// SeedCDROM is SeedCDROMSCSI.
	SeedCDROM = "cdrom"
	// SeedCDROMSCSI attaches the seed as a scsi-cd on a virtio-scsi HBA.
	SeedCDROMSCSI = "cdrom-scsi"
	// SeedCDROMAHCI attaches the seed with -drive media=cdrom, which q35
	// puts on its AHCI controller.
	SeedCDROMAHCI = "cdrom-ahci"
	// SeedVirtio attaches the seed (a FAT image) as a virtio-blk disk.
	SeedVirtio = "virtio"
)

// Defaults for BootOptions.
const (
	DefaultTimeout = 180 * time.Second
	DefaultMemory  = 1024 // MiB
)

// DefaultAppend is always on the kernel command line; an Append argument with
// the same key (root=, console=...) replaces the default one.
var DefaultAppend = []string{"console=ttyS0", "root=LABEL=cloudimg-rootfs", "panic=-1", "cloudroot.onfail=poweroff"}

// BootOptions describe one VM run.
type BootOptions struct {
	Kernel    string
	Initramfs string
	// Disk is the root disk (raw), attached first as virtio-blk (vda).
	// QEMU writes to it: pass a copy.
	Disk string
	// RootBus is the controller the root disk is behind (RootVirtio,
	// RootMegaSAS, RootPVSCSI, RootUSB...).
	RootBus string
	// NICModel is the first NIC's device (NICVirtio, NICVMXNET3...).
	NICModel string
	// ExtraDisks are raw disk images attached as virtio-blk right after
	// the root disk (vdb, vdc...), writable.
	ExtraDisks []string
	// Seed is a seed image attached as SeedKind says; "" for none.
	Seed     string
	SeedKind string
	// Append are extra kernel arguments, after DefaultAppend.
	Append []string
	// SMBIOSSerial sets the system serial number (-smbios type=1,serial=).
	SMBIOSSerial string
	// SMBIOSUUID and SMBIOSProduct set the system UUID and product name
	// (-smbios type=1,uuid=,product=), which pkg/identify reads from DMI.
	SMBIOSUUID    string
	SMBIOSProduct string
	// SMBIOSChassisAsset sets the chassis asset tag (-smbios type=3,asset=;
	// Azure and Oracle are detected by it).
	SMBIOSChassisAsset string
	// Timeout bounds the whole run; QEMU is killed when it expires.
	Timeout time.Duration
	// ConsoleLog, when set, receives the timestamped console as it arrives.
	ConsoleLog string
	// Memory is in MiB.
	Memory int
	// Output receives the console line by line, each prefixed with the host
	// time since QEMU started ("[  1.234] "); nil discards.
	Output io.Writer
	// GuestFwd forwards guest TCP connections to host ports on 127.0.0.1
	// (slirp guestfwd through `nc`); non-empty switches the user network to
	// net=169.254.0.0/16 so that 169.254.169.254 is reachable.
	GuestFwd []GuestFwd
	// HostFwd forwards TCP connections to 127.0.0.1:HostPort on the host
	// into the guest's GuestPort (slirp hostfwd, listening on loopback
	// only): how a test reaches the guest's sshd.
	HostFwd []HostFwd
	// ExtraNICs adds that many virtio NICs (0..MaxExtraNICs), each on its
	// own restricted user network; with any, every NIC's MAC is NICMAC(i).
	ExtraNICs int
	// Serial1Socket adds a second 16550 UART, the guest's /dev/ttyS1
	// (I/O port 0x2f8, IRQ 3), whose host side is the unix socket at
	// that path: QEMU connects to it as a client, so a server must be
	// listening there before Boot (a SmartOS metadata server, package
	// smartostest). ttyS0 stays the console.
	Serial1Socket string
	// Accel is the accelerator (AccelKVM, AccelTCG); "" lets Boot choose
	// with DefaultProber (KVM only where a probe boot shows it works).
	Accel string
	// CPU is QEMU's -cpu model ("": max, which has RDRAND); "default"
	// leaves QEMU's own default CPU (qemu64, no RDRAND).
	CPU string
	// NoRNG leaves out the virtio-rng device, so the guest kernel has to
	// gather its own entropy.
	NoRNG bool
	// Machine is QEMU's machine type ("": q35; "pc" is i440fx with ACPI
	// hotplug slots, which systemd names NICs after: ens3).
	Machine string
	// DiskBoot boots the root disk through the firmware and the disk's own
	// boot loader, as a cloud does: no -kernel, -initrd or -append
	// (Kernel and Initramfs are ignored; Append has no effect).
	DiskBoot bool
	// Firmware is QEMU's -bios: "" for SeaBIOS (QEMU's default), or
	// OVMF's path (OVMFPath) for UEFI without persistent NVRAM.
	Firmware string
	// PXE, when set, boots the VM from the network as firmware does on
	// bare metal: no -kernel; SeaBIOS runs the first NIC's iPXE ROM, which
	// gets DHCP from QEMU's user network and loads PXE.BootFile from its
	// TFTP server (PXE.TFTPDir). Kernel, Initramfs and Disk are then
	// optional (Disk, if set, is attached but booted after the network).
	PXE *PXE

	// Arch is the guest's architecture: "" or ArchAMD64 (q35, -kernel),
	// ArchARM64 (virt with UEFI firmware, always TCG on an amd64 host).
	Arch string
	// EFIVars is an arm64 boot's writable UEFI variable store (Boot makes
	// a fresh copy of the template when empty).
	EFIVars string
	// NoFirmware boots an arm64 kernel straight from QEMU, without UEFI:
	// the guest then has a device tree and no SMBIOS (no DMI) and no ACPI.
	NoFirmware bool
}

// OVMFPath is where Debian's ovmf package puts the UEFI firmware image.
const OVMFPath = "/usr/share/ovmf/OVMF.fd"

// PXE is a network boot through QEMU's user-network TFTP server.
type PXE struct {
	// TFTPDir is served read-only over TFTP at the user network's host
	// address; BootFile is the DHCP boot file name inside it (an iPXE
	// script starting "#!ipxe", or any image iPXE can boot).
	TFTPDir  string
	BootFile string
	// ROM is the NIC's option ROM ("": PXEROM(the NIC model)).
	ROM string
}

// iPXEROMDirs are where Debian's ipxe-qemu puts QEMU's NIC ROMs.
var iPXEROMDirs = []string{"/usr/lib/ipxe/qemu", "/usr/share/qemu"}

// PXEROM finds the iPXE option ROM of a NIC model (NICVirtio when "").
func PXEROM(model string) (string, error) {
	name := "virtio"
	switch model {
	case NICVirtio:
	case NICVMXNET3, NICE1000E, NICRTL8139, "e1000":
		name = model
	default:
		return "", fmt.Errorf("no PXE ROM known for NIC model %q", model)
	}
	for _, d := range iPXEROMDirs {
		for _, f := range []string{"efi-" + name + ".rom", "pxe-" + name + ".rom"} {
			p := d + "/" + f
			if _, err := os.Stat(p); err == nil {
				return p, nil
			}
		}
	}
	return "", fmt.Errorf("no iPXE ROM for %s in %s (install ipxe-qemu)", name, strings.Join(iPXEROMDirs, ", "))
}

// GuestFwd is one guest address:port served by a host port on 127.0.0.1.
type GuestFwd struct {
	GuestIP   string
	GuestPort int
	HostPort  int
}

// HostFwd is one host-to-guest TCP forward (BootOptions.HostFwd).
type HostFwd struct {
	HostPort  int
	GuestPort int
}

// Run is the outcome of a boot.
type Run struct {
	// Args is QEMU's argv, the program first.
	Args []string
	// Accel is the accelerator that ran and why it was chosen.
	Accel Accel
	// Console is the serial console text, \r removed, without timestamps.
	Console string
	// Stderr is what QEMU itself printed on stderr.
	Stderr string
	// Elapsed is the wall time from QEMU's start to its exit.
	Elapsed time.Duration
	// ExitErr is QEMU's exit error (nil when it exited with status 0).
	ExitErr error
	// TimedOut is set when QEMU was killed at the timeout.
	TimedOut bool
}

// PoweredOff reports whether the guest powered the VM off by itself: QEMU
// exited with status 0 before the timeout and the kernel said "Power down"
// (a panic or reboot also ends QEMU under -no-reboot, but says otherwise).
func (r *Run) PoweredOff() bool {
	return !r.TimedOut && r.ExitErr == nil && strings.Contains(r.Console, "reboot: Power down")
}

// Summary is a one-line description of how the run ended.
func (r *Run) Summary() string {
	switch {
	case r.TimedOut:
		return fmt.Sprintf("timed out after %.1fs; QEMU killed", r.Elapsed.Seconds())
	case r.ExitErr != nil:
		return fmt.Sprintf("QEMU failed after %.1fs: %v: %s", r.Elapsed.Seconds(), r.ExitErr, strings.TrimSpace(r.Stderr))
	case r.PoweredOff():
		return fmt.Sprintf("guest powered off after %.1fs", r.Elapsed.Seconds())
	default:
		return fmt.Sprintf("QEMU exited after %.1fs without a power-off (reboot or panic?)", r.Elapsed.Seconds())
	}
}

// CommandLine is Args quoted for a POSIX shell.
func (r *Run) CommandLine() string { return ShellQuote(r.Args) }

// KernelCmdline joins DefaultAppend and extra, dropping a default whose key
// extra sets again.
func KernelCmdline(extra []string) string { return kernelCmdline("", extra) }

// kernelCmdline is KernelCmdline for a guest architecture: arm64's virt
// machine has its console on ttyAMA0.
func kernelCmdline(arch string, extra []string) string {
	keys := map[string]bool{}
	for _, a := range extra {
		k, _, _ := strings.Cut(a, "=")
		keys[k] = true
	}
	var args []string
	for _, d := range DefaultAppend {
		if normArch(arch) == ArchARM64 && d == "console=ttyS0" {
			d = "console=" + arm64Console
		}
		k, _, _ := strings.Cut(d, "=")
		if !keys[k] {
			args = append(args, d)
		}
	}
	return strings.Join(append(args, extra...), " ")
}

// Args builds QEMU's argv.
func (o BootOptions) Args() ([]string, error) {
	pxe := o.PXE != nil
	switch {
	case pxe && (o.PXE.TFTPDir == "" || o.PXE.BootFile == ""):
		return nil, errors.New("boot options: PXE needs TFTPDir and BootFile")
	case o.DiskBoot && (pxe || o.Disk == ""):
		return nil, errors.New("boot options: DiskBoot needs Disk and no PXE")
	case !pxe && !o.DiskBoot && (o.Kernel == "" || o.Initramfs == "" || o.Disk == ""):
		return nil, errors.New("boot options: Kernel, Initramfs and Disk are required")
	}
	mem := o.Memory
	if mem == 0 {
		mem = DefaultMemory
	}
	args := []string{QEMU, "-machine", "q35", "-cpu", "max"}
	switch normArch(o.Arch) {
	case ArchAMD64:
	case ArchARM64:
		if pxe {
			return nil, errors.New("boot options: PXE boots are amd64 only")
		}
		if o.EFIVars == "" && !o.NoFirmware {
			return nil, errors.New("boot options: an arm64 boot needs EFIVars (Boot makes one)")
		}
		args = arm64MachineArgs(o.EFIVars, o.NoFirmware)
	default:
		_, err := qemuFor(o.Arch)
		return nil, err
	}
	args = append(args, "-m", strconv.Itoa(mem), "-nographic", "-no-reboot")
	switch {
	case pxe:
		args = append(args, "-boot", "order=n")
	case o.DiskBoot:
		args = append(args, "-boot", "order=c")
	default:
		args = append(args, "-kernel", o.Kernel, "-initrd", o.Initramfs, "-append", kernelCmdline(o.Arch, o.Append))
	}
	if o.Firmware != "" {
		args = append(args, "-bios", o.Firmware)
	}
	if o.Disk != "" {
		root, err := rootDiskArgs(o.RootBus, driveFile(o.Disk))
		if err != nil {
			return nil, err
		}
		args = append(args, root...)
	}
	nic, err := nicDevice(o.NICModel)
	if err != nil {
		return nil, err
	}
	if pxe {
		rom := o.PXE.ROM
		if rom == "" {
			if rom, err = PXEROM(o.NICModel); err != nil {
				return nil, fmt.Errorf("boot options: %w", err)
			}
		}
		nic += ",romfile=" + driveFile(rom)
		if o.NICModel == NICVirtio {
			// Debian's virtio ROM (iPXE 2019) matches only the modern
			// device id (1af4:1041): a transitional virtio-net on q35
			// (1af4:1000) gets no ROM and SeaBIOS no network boot entry.
			nic += ",disable-legacy=on"
		}
	}
	for _, d := range o.ExtraDisks {
		args = append(args, "-drive", "file="+driveFile(d)+",if=virtio,format=raw")
	}
	netdev := "user,id=n0,restrict=on"
	if len(o.GuestFwd) > 0 {
		netdev += ",net=169.254.0.0/16"
		for _, f := range o.GuestFwd {
			if net.ParseIP(f.GuestIP).To4() == nil || f.GuestPort <= 0 || f.GuestPort > 65535 || f.HostPort <= 0 || f.HostPort > 65535 {
				return nil, fmt.Errorf("boot options: bad guestfwd %+v", f)
			}
			netdev += fmt.Sprintf(",guestfwd=tcp:%s:%d-cmd:nc 127.0.0.1 %d", f.GuestIP, f.GuestPort, f.HostPort)
		}
	}
	for _, f := range o.HostFwd {
		if f.GuestPort <= 0 || f.GuestPort > 65535 || f.HostPort <= 0 || f.HostPort > 65535 {
			return nil, fmt.Errorf("boot options: bad hostfwd %+v", f)
		}
		netdev += fmt.Sprintf(",hostfwd=tcp:127.0.0.1:%d-:%d", f.HostPort, f.GuestPort)
	}
	if pxe {
		netdev += ",tftp=" + driveFile(o.PXE.TFTPDir) + ",bootfile=" + driveFile(o.PXE.BootFile)
	}
	firstMAC, extraNICs, err := nicArgs(o.ExtraNICs)
	if err != nil {
		return nil, err
	}
	args = append(args,
		"-netdev", netdev,
		"-device", nic+",netdev=n0"+firstMAC,
	)
	args = append(args, extraNICs...)
	if !o.NoRNG {
		args = append(args, "-device", "virtio-rng-pci")
	}
	if o.Seed != "" {
		seed := driveFile(o.Seed)
		switch o.SeedKind {
		case SeedCDROM, SeedCDROMSCSI:
			args = append(args,
				"-device", "virtio-scsi-pci,id=scsi0",
				"-drive", "file="+seed+",if=none,id=seed,media=cdrom,format=raw,readonly=on",
				"-device", "scsi-cd,drive=seed,bus=scsi0.0")
		case SeedCDROMAHCI:
			args = append(args, "-drive", "file="+seed+",media=cdrom,format=raw,readonly=on")
		case SeedVirtio:
			args = append(args, "-drive", "file="+seed+",if=virtio,format=raw")
		default:
			return nil, fmt.Errorf("boot options: unknown seed kind %q", o.SeedKind)
		}
	}
	if o.Serial1Socket != "" {
		// Any -serial (or -device isa-serial) drops -nographic's default
		// "-serial mon:stdio": ttyS0 is given again, first.
		args = append(args,
			"-chardev", "socket,id=serial1,path="+driveFile(o.Serial1Socket)+",server=off",
			"-serial", "mon:stdio", "-serial", "chardev:serial1")
	}
	if o.SMBIOSSerial != "" {
		args = append(args, "-smbios", "type=1,serial="+strings.ReplaceAll(o.SMBIOSSerial, ",", ",,"))
	}
	if o.SMBIOSUUID != "" || o.SMBIOSProduct != "" {
		v := "type=1"
		if o.SMBIOSUUID != "" {
			v += ",uuid=" + strings.ReplaceAll(o.SMBIOSUUID, ",", ",,")
		}
		if o.SMBIOSProduct != "" {
			v += ",product=" + strings.ReplaceAll(o.SMBIOSProduct, ",", ",,")
		}
		args = append(args, "-smbios", v)
	}
	if o.SMBIOSChassisAsset != "" {
		args = append(args, "-smbios", "type=3,asset="+strings.ReplaceAll(o.SMBIOSChassisAsset, ",", ",,"))
	}
	if o.Machine != "" {
		for i := 0; i+1 < len(args); i++ {
			if args[i] == "-machine" {
				args[i+1] = o.Machine
				break
			}
		}
	}
	return accelArgs(args, o.Accel, o.CPU)
}

// accelArgs puts -accel after the program and replaces -cpu max with cpu
// ("default": QEMU's own default CPU).
func accelArgs(args []string, accel, cpu string) ([]string, error) {
	switch accel {
	case "":
	case AccelKVM, AccelTCG:
		args = append([]string{args[0], "-accel", accel}, args[1:]...)
	default:
		return nil, fmt.Errorf("boot options: unknown accelerator %q", accel)
	}
	if cpu == "" {
		return args, nil
	}
	for i := 0; i+1 < len(args); i++ {
		if args[i] == "-cpu" {
			if cpu == "default" {
				return append(args[:i:i], args[i+2:]...), nil
			}
			args[i+1] = cpu
			break
		}
	}
	return args, nil
}

// driveFile escapes a path for a -drive (or -chardev) option list.
func driveFile(p string) string { return strings.ReplaceAll(p, ",", ",,") }

// Boot runs QEMU until the guest ends it or the timeout expires, streaming
// the console. The error is only for a VM that could not be started; how
// the run ended is in Run (ExitErr, TimedOut, PoweredOff). QEMU never
// outlives Boot.
func Boot(ctx context.Context, o BootOptions) (*Run, error) {
	accel := Accel{Name: o.Accel, Why: "set by the caller"}
	if o.Accel == "" && foreignArch(o.Arch) {
		accel = ChooseAccel(ctx, o.Arch, o.Kernel)
		o.Accel = accel.Name
	}
	if normArch(o.Arch) == ArchARM64 && o.EFIVars == "" && !o.NoFirmware {
		vars, err := NewEFIVars("")
		if err != nil {
			return nil, fmt.Errorf("boot: %w", err)
		}
		defer os.Remove(vars)
		o.EFIVars = vars
	}
	if o.Accel == "" {
		accel = DefaultProber.Choose(ctx, o.Kernel)
		o.Accel = accel.Name
	}
	args, err := o.Args()
	if err != nil {
		return nil, err
	}
	for _, p := range append([]string{o.Kernel, o.Initramfs, o.Disk, o.Seed, o.Serial1Socket}, o.ExtraDisks...) {
		if p == "" {
			continue
		}
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("boot: %w", err)
		}
	}
	qemu, err := lookPath(args[0])
	if err != nil {
		return nil, fmt.Errorf("boot: %w", err)
	}
	timeout := o.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	out := o.Output
	if out == nil {
		out = io.Discard
	}
	if o.ConsoleLog != "" {
		if err := os.MkdirAll(filepath.Dir(o.ConsoleLog), 0o755); err != nil {
			return nil, fmt.Errorf("boot: console log: %w", err)
		}
		f, err := os.Create(o.ConsoleLog)
		if err != nil {
			return nil, fmt.Errorf("boot: console log: %w", err)
		}
		defer f.Close()
		fmt.Fprintf(f, "# %s\n", ShellQuote(args))
		out = io.MultiWriter(out, f)
	}
	fmt.Fprintf(out, "[%8.3f] harness: %s\n", 0.0, accel)

	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(rctx, qemu, args[1:]...)
	cmd.WaitDelay = 5 * time.Second
	setParentDeathSignal(cmd)
	var stderr strings.Builder
	cmd.Stderr = &lockedWriter{w: &stderr}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("boot: %w", err)
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("boot: starting QEMU: %w", err)
	}
	var console strings.Builder
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		streamConsole(stdout, start, &console, out)
	}()
	waitErr := cmd.Wait()
	wg.Wait()
	r := &Run{
		Args:    args,
		Accel:   accel,
		Console: console.String(),
		Stderr:  stderr.String(),
		Elapsed: time.Since(start),
		ExitErr: waitErr,
	}
	if errors.Is(rctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil {
		r.TimedOut = true
		r.ExitErr = fmt.Errorf("QEMU killed after the %s timeout: %w", timeout, waitErr)
	} else if ctx.Err() != nil {
		r.ExitErr = fmt.Errorf("boot cancelled: %w", ctx.Err())
	}
	fmt.Fprintf(out, "[%8.3f] harness: %s\n", r.Elapsed.Seconds(), r.Summary())
	return r, nil
}

// streamConsole copies the console line by line, with host timestamps.
func streamConsole(r io.Reader, start time.Time, console *strings.Builder, out io.Writer) {
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadString('\n')
		if line != "" {
			line = strings.TrimRight(line, "\r\n")
			line = strings.ReplaceAll(line, "\r", "")
			console.WriteString(line)
			console.WriteByte('\n')
			fmt.Fprintf(out, "[%8.3f] %s\n", time.Since(start).Seconds(), line)
		}
		if err != nil {
			return
		}
	}
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// ShellQuote quotes argv for a POSIX shell.
func ShellQuote(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		if a != "" && strings.IndexFunc(a, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=,:@+%", r))
		}) < 0 {
			q[i] = a
			continue
		}
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}

// LineWriter calls fn with every complete line written to it (for t.Log).
// Flush passes on a final unterminated line.
type LineWriter struct {
	mu  sync.Mutex
	buf []byte
	fn  func(string)
}

// NewLineWriter returns a LineWriter calling fn.
func NewLineWriter(fn func(string)) *LineWriter { return &LineWriter{fn: fn} }

func (w *LineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := strings.IndexByte(string(w.buf), '\n')
		if i < 0 {
			break
		}
		w.fn(string(w.buf[:i]))
		w.buf = w.buf[i+1:]
	}
	return len(p), nil
}

// Flush emits a pending partial line.
func (w *LineWriter) Flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.buf) > 0 {
		w.fn(string(w.buf))
		w.buf = nil
	}
}
