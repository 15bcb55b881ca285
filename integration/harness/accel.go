package harness

// Choosing QEMU's accelerator. A /dev/kvm is not proof that KVM works: on
// hosts that are themselves VMs without nested virtualisation a KVM guest
// can hang at kernel entry. KVM is used only when a short probe boot of the
// kernel shows it reaches its first console line; otherwise TCG. The answer
// is kept for the process and, keyed by the host's boot id and the kernel,
// in a file under the temp dir so one test run probes once.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Accelerators.
const (
	AccelTCG = "tcg"
	AccelKVM = "kvm"
)

// AccelEnv forces the accelerator (kvm or tcg) without probing.
const AccelEnv = "CLOUDROOT_ACCEL"

// DefaultProbeTimeout bounds the KVM probe boot: a working KVM prints the
// kernel banner in well under a second.
const DefaultProbeTimeout = 8 * time.Second

// Accel is the accelerator choice and why it was made.
type Accel struct {
	Name string `json:"name"`
	// Why: "kvm probe: kernel banner after 0.4s", "no /dev/kvm", "kvm
	// probe: hung at kernel entry after 8s"...
	Why string `json:"why"`
	// Key identifies what the choice was made for (host boot, kernel).
	Key string `json:"key"`
}

// String is "accel: tcg (kvm probe: hung at kernel entry after 8s)".
func (a Accel) String() string { return fmt.Sprintf("accel: %s (%s)", a.Name, a.Why) }

// Args are QEMU's arguments for the accelerator.
func (a Accel) Args() []string {
	if a.Name == AccelKVM {
		return []string{"-accel", "kvm"}
	}
	return []string{"-accel", "tcg"}
}

// Prober decides the accelerator once per process.
type Prober struct {
	// Timeout bounds the probe boot (0: DefaultProbeTimeout).
	Timeout time.Duration
	// CacheDir holds the per-run cache file ("": os.TempDir()).
	CacheDir string
	// Getenv reads AccelEnv (nil: os.Getenv).
	Getenv func(string) string
	// KVMDevice is the KVM device ("": /dev/kvm).
	KVMDevice string
	// Probe boots kernel under KVM and reports how it went (nil: a QEMU
	// boot). Tests replace it.
	Probe func(ctx context.Context, kernel string, timeout time.Duration) (ok bool, why string)

	mu    sync.Mutex
	cache map[string]Accel
}

// DefaultProber is the prober Boot uses when BootOptions.Accel is empty.
var DefaultProber = &Prober{}

// Choose returns the accelerator to boot kernel with.
func (p *Prober) Choose(ctx context.Context, kernel string) Accel {
	getenv := p.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	switch v := getenv(AccelEnv); v {
	case AccelKVM, AccelTCG:
		return Accel{Name: v, Why: AccelEnv + "=" + v}
	}
	dev := p.KVMDevice
	if dev == "" {
		dev = "/dev/kvm"
	}
	f, err := os.OpenFile(dev, os.O_RDWR, 0)
	if err != nil {
		return Accel{Name: AccelTCG, Why: "no usable " + dev + ": " + err.Error()}
	}
	f.Close()
	key := probeKey(kernel)
	p.mu.Lock()
	defer p.mu.Unlock()
	if a, ok := p.cache[key]; ok {
		return a
	}
	cacheFile := p.cacheFile()
	if a, ok := readAccelCache(cacheFile, key); ok {
		p.remember(key, a)
		return a
	}
	timeout := p.Timeout
	if timeout == 0 {
		timeout = DefaultProbeTimeout
	}
	probe := p.Probe
	if probe == nil {
		probe = probeKVM
	}
	ok, why := probe(ctx, kernel, timeout)
	a := Accel{Name: AccelTCG, Why: "kvm probe: " + why, Key: key}
	if ok {
		a.Name = AccelKVM
	}
	if ctx.Err() == nil {
		p.remember(key, a)
		writeAccelCache(cacheFile, a)
	}
	return a
}

func (p *Prober) remember(key string, a Accel) {
	if p.cache == nil {
		p.cache = map[string]Accel{}
	}
	p.cache[key] = a
}

func (p *Prober) cacheFile() string {
	dir := p.CacheDir
	if dir == "" {
		dir = os.TempDir()
	}
	return filepath.Join(dir, fmt.Sprintf("cloudroot-accel-%d.json", os.Getuid()))
}

// probeKey names the host boot and the kernel (path, size, mtime): a
// cached answer is reused only for the same ones.
func probeKey(kernel string) string {
	boot, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
	k := strings.TrimSpace(string(boot)) + " " + kernel
	if fi, err := os.Stat(kernel); err == nil {
		k += fmt.Sprintf(" %d %d", fi.Size(), fi.ModTime().UnixNano())
	}
	return k
}

func readAccelCache(path, key string) (Accel, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Accel{}, false
	}
	var a Accel
	if json.Unmarshal(b, &a) != nil || a.Key != key || (a.Name != AccelKVM && a.Name != AccelTCG) {
		return Accel{}, false
	}
	a.Why += ", cached"
	return a, true
}

func writeAccelCache(path string, a Accel) {
	b, err := json.Marshal(a)
	if err != nil {
		return
	}
	tmp := path + fmt.Sprintf(".%d", os.Getpid())
	if os.WriteFile(tmp, b, 0o600) == nil {
		_ = os.Rename(tmp, path)
	}
}

// probeKVM boots kernel under KVM with no disk and no initramfs and waits
// for its first console line (the kernel panics for want of a root right
// after; -no-reboot ends QEMU then).
func probeKVM(ctx context.Context, kernel string, timeout time.Duration) (bool, string) {
	qemu, err := lookPath(QEMU)
	if err != nil {
		return false, err.Error()
	}
	if _, err := os.Stat(kernel); err != nil {
		return false, err.Error()
	}
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(rctx, qemu, "-accel", "kvm", "-machine", "q35", "-cpu", "max", "-m", "256",
		"-nographic", "-no-reboot", "-nodefaults", "-serial", "stdio",
		"-kernel", kernel, "-append", "console=ttyS0 panic=-1 earlyprintk=ttyS0")
	cmd.WaitDelay = time.Second
	setParentDeathSignal(cmd)
	var stderr strings.Builder
	cmd.Stderr = &lockedWriter{w: &stderr}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return false, err.Error()
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return false, "starting QEMU: " + err.Error()
	}
	banner := make(chan time.Duration, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "Linux version") {
				banner <- time.Since(start)
				cancel()
				break
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	werr := cmd.Wait()
	select {
	case d := <-banner:
		return true, fmt.Sprintf("kernel banner after %.1fs", d.Seconds())
	default:
	}
	switch {
	case errors.Is(rctx.Err(), context.DeadlineExceeded):
		return false, fmt.Sprintf("hung at kernel entry after %s", timeout)
	case ctx.Err() != nil:
		return false, "cancelled"
	}
	msg := strings.TrimSpace(stderr.String())
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	return false, fmt.Sprintf("QEMU exited without a kernel banner (%v): %s", werr, msg)
}
