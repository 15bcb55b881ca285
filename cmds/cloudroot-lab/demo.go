package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/cloudroot/cloudroot/integration/harness"
)

type demoConfig struct {
	example  string
	kernel   string
	seedKind string
	timeout  time.Duration
}

func runDemo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var cfg demoConfig
	fs := newFlags("demo", stderr)
	fs.StringVar(&cfg.example, "example", "examples/demo", "seed directory (meta-data, user-data)")
	fs.StringVar(&cfg.kernel, "kernel", "vmlinuz", "kernel: vmlinuz, vmlinux, auto (vmlinux when built) or a path")
	fs.StringVar(&cfg.seedKind, "seed", harness.SeedCDROMSCSI, "seed attachment: cdrom-scsi, cdrom-ahci")
	fs.DurationVar(&cfg.timeout, "timeout", harness.DefaultTimeout, "kill QEMU after this long")
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	return demo(ctx, cfg, stdout)
}

func demo(ctx context.Context, cfg demoConfig, stdout io.Writer) error {
	a, err := harness.Discover()
	if err != nil {
		return err
	}
	kernel := kernelPath(a, cfg.kernel)
	if err := checkArtifacts(a, kernel); err != nil {
		return err
	}
	seed, err := makeSeed(cfg.example, filepath.Join(a.Dir, "demo"))
	if err != nil {
		return err
	}
	disk := filepath.Join(a.Dir, "demo-rootfs.img")
	if err := harness.CopyDisk(a.Rootfs, disk); err != nil {
		return err
	}
	o := harness.BootOptions{
		Kernel: kernel, Initramfs: a.Initramfs, Disk: disk,
		Seed: seed, SeedKind: cfg.seedKind,
		Arch:       a.Arch,
		Timeout:    cfg.timeout,
		ConsoleLog: filepath.Join(a.Dir, "demo", "console.log"),
		Output:     stdout,
	}
	if a.Arch == harness.ArchARM64 {
		if o.EFIVars, err = harness.NewEFIVars(a.Dir); err != nil {
			return err
		}
		defer os.Remove(o.EFIVars)
	}
	acc := harness.ChooseAccel(ctx, a.Arch, kernel)
	o.Accel = acc.Name
	argv, err := o.Args()
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, acc)
	fmt.Fprintf(stdout, "architecture %s; seed %s from %s; root disk %s (a copy of %s)\n", a.Arch, rel(seed), cfg.example, rel(disk), rel(a.Rootfs))
	fmt.Fprintf(stdout, "$ %s\n\n", harness.ShellQuote(argv))
	r, err := harness.Boot(ctx, o)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout)
	im, err := harness.OpenImage(disk)
	if err != nil {
		return err
	}
	s := &summary{w: stdout, im: im}
	s.print()
	fmt.Fprintf(stdout, "\nwall time, QEMU start to %s: %.2f s (kernel %s, %s)\n", endWord(r), r.Elapsed.Seconds(), filepath.Base(kernel), acc)
	fmt.Fprintf(stdout, "console log: %s\n", rel(o.ConsoleLog))

	var errs []error
	if !r.PoweredOff() {
		errs = append(errs, fmt.Errorf("the VM did not power off by itself: %s", r.Summary()))
	}
	if !s.statusFound {
		errs = append(errs, fmt.Errorf("no %s on the disk: provisioning did not run", harness.StatusPath))
	}
	return errors.Join(errs...)
}

func endWord(r *harness.Run) string {
	if r.PoweredOff() {
		return "power-off"
	}
	return "exit"
}
