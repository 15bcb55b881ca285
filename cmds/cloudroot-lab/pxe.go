package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/cloudroot/cloudroot/integration/harness"
)

// PXE modes.
const (
	pxeLive = "live" // root=live: squashfs over HTTP, runs from RAM
	pxeDisk = "disk" // cloudroot.image= onto an empty disk
)

type pxeConfig struct {
	example  string
	mode     string
	diskSize int64
	timeout  time.Duration
	append   string
}

func runPXE(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var cfg pxeConfig
	var sizeMiB int64
	fs := newFlags("pxe", stderr)
	fs.StringVar(&cfg.example, "example", "examples/demo", "seed directory (meta-data, user-data), served over HTTP at /seed/")
	fs.StringVar(&cfg.mode, "mode", pxeLive, "live: root=live: squashfs in RAM; disk: write the root image to an empty disk, then boot it")
	fs.Int64Var(&sizeMiB, "disk-size", 1024, "disk mode: the empty disk's size in MiB")
	fs.DurationVar(&cfg.timeout, "timeout", 10*time.Minute, "kill QEMU after this long")
	fs.StringVar(&cfg.append, "append", "", "extra kernel arguments")
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	if cfg.mode != pxeLive && cfg.mode != pxeDisk {
		fmt.Fprintf(stderr, "pxe: -mode is live or disk, not %q\n", cfg.mode)
		return errUsage
	}
	cfg.diskSize = sizeMiB << 20
	return pxe(ctx, cfg, stdout)
}

func sha256Hex(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

// zstdBytes compresses a disk image the way one is published for
// cloudroot.image= (disk.img.zst).
func zstdBytes(b []byte) ([]byte, error) {
	var buf bytes.Buffer
	w, err := zstd.NewWriter(&buf, zstd.WithEncoderLevel(zstd.SpeedFastest))
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(b); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// pxe network-boots the VM: SeaBIOS → iPXE ROM → TFTP boot.ipxe → kernel
// and initramfs over HTTP → cloudroot with a live root or an image to
// write, the seed from the same server.
func pxe(ctx context.Context, cfg pxeConfig, stdout io.Writer) error {
	a, err := harness.Discover()
	if err != nil {
		return err
	}
	if err := checkArtifacts(a, a.Vmlinuz); err != nil {
		return err
	}
	if _, err := harness.PXEROM(harness.NICVirtio); err != nil {
		return err
	}
	seed, err := harness.SeedFiles(cfg.example)
	if err != nil {
		return err
	}
	dir := filepath.Join(a.Dir, "pxe")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	files := map[string][]byte{}
	for name, b := range seed {
		files["/seed/"+name] = b
	}
	args := []string{"ds=nocloud;s=http://" + harness.NetbootIP + "/seed/", "cloudroot.test.poweroff"}
	var disk string
	switch cfg.mode {
	case pxeLive:
		p, err := harness.SquashRootfs(a.Rootfs, dir)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files["/rootfs.squashfs"] = b
		files["/rootfs.squashfs.sha256"] = []byte(sha256Hex(b) + "  rootfs.squashfs\n")
		args = append(args, "root=live:http://"+harness.NetbootIP+"/rootfs.squashfs")
		fmt.Fprintf(stdout, "live root: %s (%.1f MiB squashfs of %s)\n", rel(p), float64(len(b))/(1<<20), rel(a.Rootfs))
	case pxeDisk:
		raw, err := os.ReadFile(a.Rootfs)
		if err != nil {
			return err
		}
		b, err := zstdBytes(raw)
		if err != nil {
			return err
		}
		files["/rootfs.img.zst"] = b
		files["/rootfs.img.zst.sha256"] = []byte(sha256Hex(b) + "  rootfs.img.zst\n")
		disk = filepath.Join(dir, "disk.img")
		if err := os.WriteFile(disk, nil, 0o644); err != nil {
			return err
		}
		if err := os.Truncate(disk, cfg.diskSize); err != nil {
			return err
		}
		args = append(args, "root=LABEL=cloudimg-rootfs", "cloudroot.image=http://"+harness.NetbootIP+"/rootfs.img.zst", "cloudroot.image-target=/dev/vda")
		fmt.Fprintf(stdout, "image %s (%.1f MiB as zstd) onto an empty %d MiB disk %s\n", rel(a.Rootfs), float64(len(b))/(1<<20), cfg.diskSize>>20, rel(disk))
	}
	if cfg.append != "" {
		args = append(args, strings.Fields(cfg.append)...)
	}
	lab, err := harness.NewPXELab(dir, a.Vmlinuz, a.Initramfs, files, args)
	if err != nil {
		return err
	}
	defer lab.Close()
	o := lab.Options()
	o.Disk, o.Timeout, o.Output = disk, cfg.timeout, stdout
	o.ConsoleLog = filepath.Join(dir, "console.log")
	argv, err := o.Args()
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "TFTP %s, HTTP %s (the guest's http://%s/); iPXE script:\n%s\n", rel(lab.Dir), lab.Server.URL(), harness.NetbootIP, lab.Script)
	fmt.Fprintf(stdout, "$ %s\n\n", harness.ShellQuote(argv))
	r, err := harness.Boot(ctx, o)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\nwall time, QEMU start to %s: %.2f s; requests %v\nconsole log: %s\n", endWord(r), r.Elapsed.Seconds(), lab.Server.Counts(), rel(o.ConsoleLog))
	var errs []error
	if !r.PoweredOff() {
		errs = append(errs, fmt.Errorf("the VM did not power off by itself: %s", r.Summary()))
	}
	if disk != "" {
		im, err := harness.OpenImage(disk)
		if err != nil {
			return errors.Join(append(errs, err)...)
		}
		s := &summary{w: stdout, im: im}
		s.print()
		fmt.Fprintf(stdout, "\nthe written disk is %s: it boots alone (no network) with -kernel/-initrd as the other lab commands do\n", rel(disk))
	}
	return errors.Join(errs...)
}
