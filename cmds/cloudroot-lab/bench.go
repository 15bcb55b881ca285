package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/cloudroot/cloudroot/integration/harness"
)

type benchConfig struct {
	example string
	runs    int
	kernel  string
	timeout time.Duration
}

func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var cfg benchConfig
	fs := newFlags("bench", stderr)
	fs.StringVar(&cfg.example, "example", "examples/demo", "seed directory (meta-data, user-data); its user-data must power the VM off")
	fs.IntVar(&cfg.runs, "runs", 5, "boots per kernel")
	fs.StringVar(&cfg.kernel, "kernel", "vmlinux", "vmlinux (falls back to vmlinuz when not built), vmlinuz (vmlinux runs, then vmlinuz runs) or vmlinuz-only")
	fs.DurationVar(&cfg.timeout, "timeout", harness.DefaultTimeout, "kill QEMU after this long")
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	if cfg.runs < 1 {
		fmt.Fprintln(stderr, "bench: -runs must be at least 1")
		return errUsage
	}
	return bench(ctx, cfg, stdout)
}

// sample is one run's measurements, in seconds, by metric name.
type sample map[string]float64

// Metric names.
const (
	mHost      = "host: QEMU start → exit"
	mGuestDone = "guest: boot → modules-final finished"
)

func bench(ctx context.Context, cfg benchConfig, stdout io.Writer) error {
	a, err := harness.Discover()
	if err != nil {
		return err
	}
	var kernels []string
	switch cfg.kernel {
	case "vmlinux", "auto", "":
		kernels = []string{a.Kernel}
	case "vmlinuz":
		kernels = []string{a.Kernel, a.Vmlinuz}
		if a.Kernel == a.Vmlinuz {
			kernels = kernels[:1]
		}
	case "vmlinuz-only":
		kernels = []string{a.Vmlinuz}
	default:
		kernels = []string{cfg.kernel}
	}
	for _, k := range kernels {
		if err := checkArtifacts(a, k); err != nil {
			return err
		}
	}
	work := filepath.Join(a.Dir, "bench")
	seed, err := makeSeed(cfg.example, work)
	if err != nil {
		return err
	}
	disk := filepath.Join(work, "rootfs.img")
	var errs []error
	var reports []string
	var accels []string
	for _, kernel := range kernels {
		var samples []sample
		var order []string
		acc := harness.DefaultProber.Choose(ctx, kernel)
		fmt.Fprintf(stdout, "%s: %s\n", filepath.Base(kernel), acc)
		accels = append(accels, filepath.Base(kernel)+" "+acc.String())
		for i := 1; i <= cfg.runs; i++ {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := harness.CopyDisk(a.Rootfs, disk); err != nil {
				return err
			}
			logPath := filepath.Join(work, fmt.Sprintf("%s-run%d.log", filepath.Base(kernel), i))
			r, err := harness.Boot(ctx, harness.BootOptions{
				Kernel: kernel, Initramfs: a.Initramfs, Disk: disk,
				Seed: seed, SeedKind: harness.SeedCDROMSCSI,
				Timeout: cfg.timeout, ConsoleLog: logPath, Accel: acc.Name,
			})
			if err != nil {
				return err
			}
			s, names, serr := measure(disk, r)
			fmt.Fprintf(stdout, "%s run %d/%d: %s", filepath.Base(kernel), i, cfg.runs, r.Summary())
			if v, ok := s[mGuestDone]; ok {
				fmt.Fprintf(stdout, "; guest finished at %.2fs", v)
			}
			fmt.Fprintln(stdout)
			if !r.PoweredOff() || serr != nil {
				errs = append(errs, fmt.Errorf("%s run %d: %s (console: %s)", filepath.Base(kernel), i, r.Summary(), rel(logPath)))
				if serr != nil {
					errs = append(errs, serr)
				}
				continue
			}
			for _, n := range names {
				if !slices.Contains(order, n) {
					order = append(order, n)
				}
			}
			samples = append(samples, s)
		}
		reports = append(reports, table(filepath.Base(kernel), samples, order))
	}
	fmt.Fprintln(stdout)
	for _, r := range reports {
		fmt.Fprintln(stdout, r)
	}
	fmt.Fprintln(stdout, sizes(a))
	fmt.Fprintf(stdout, "Measured %s with `cloudroot-lab bench -example %s -runs %d -kernel %s`: QEMU %s, -m %d, seed ISO on virtio-scsi.\n",
		time.Now().Format("2006-01-02"), cfg.example, cfg.runs, cfg.kernel, strings.Join(accels, "; "), harness.DefaultMemory)
	return errors.Join(errs...)
}

// measure reads one run's guest-side timings back from its disk.
func measure(disk string, r *harness.Run) (sample, []string, error) {
	s := sample{mHost: r.Elapsed.Seconds()}
	names := []string{mHost}
	im, err := harness.OpenImage(disk)
	if err != nil {
		return s, names, err
	}
	st, err := im.Status()
	if err != nil {
		return s, names, fmt.Errorf("reading status.json: %w", err)
	}
	for _, n := range harness.Stages {
		if x, ok := st.Stages[n]; ok && x.Duration() >= 0 {
			k := "status.json: " + n
			s[k] = x.Duration()
			names = append(names, k)
		}
	}
	if x, ok := st.Stages["modules-final"]; ok && x.Finished != nil {
		s[mGuestDone] = *x.Finished
		names = append(names, mGuestDone)
	}
	state, err := im.State()
	if err != nil {
		return s, names, fmt.Errorf("reading the state file: %w", err)
	}
	for _, t := range state.Timings {
		k := "initramfs: " + t.Stage
		if _, dup := s[k]; dup {
			s[k] += t.Duration
			continue
		}
		s[k] = t.Duration
		names = append(names, k)
	}
	return s, names, nil
}

// table is a Markdown table of median, min and max per metric.
func table(kernel string, samples []sample, order []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "### Boot stages, %s (%d successful runs)\n\n", kernel, len(samples))
	if len(samples) == 0 {
		b.WriteString("(no successful run)\n")
		return b.String()
	}
	b.WriteString("| stage | median (s) | min (s) | max (s) |\n|---|---:|---:|---:|\n")
	for _, n := range order {
		var v []float64
		for _, s := range samples {
			if x, ok := s[n]; ok {
				v = append(v, x)
			}
		}
		if len(v) == 0 {
			continue
		}
		sort.Float64s(v)
		fmt.Fprintf(&b, "| %s | %.3f | %.3f | %.3f |\n", n, median(v), v[0], v[len(v)-1])
	}
	return b.String()
}

func median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

// sizes is a Markdown table of artifact sizes.
func sizes(a harness.Artifacts) string {
	var b strings.Builder
	b.WriteString("### Image sizes\n\n| artifact | size | allocated on disk |\n|---|---:|---:|\n")
	for _, f := range []struct{ name, path string }{
		{"initramfs (build/initramfs.cpio.gz)", a.Initramfs},
		{"root disk (build/rootfs.img)", a.Rootfs},
		{"agent (build/cloudroot-agent)", a.Agent},
		{"front (build/cloudroot)", a.Front},
		{"cloudroot-init (build/cloudroot-init)", a.Init},
		{"kernel vmlinuz", a.Vmlinuz},
		{"kernel vmlinux (PVH)", a.Vmlinux},
	} {
		fi, err := os.Stat(f.path)
		if err != nil {
			fmt.Fprintf(&b, "| %s | absent | |\n", f.name)
			continue
		}
		alloc := ""
		if n, ok := allocated(fi); ok {
			alloc = mib(n)
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", f.name, mib(fi.Size()), alloc)
	}
	return b.String()
}

func mib(n int64) string { return fmt.Sprintf("%.2f MiB", float64(n)/(1<<20)) }
