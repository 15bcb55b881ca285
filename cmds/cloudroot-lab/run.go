package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/cloudroot/cloudroot/integration/harness"
)

const usage = `usage: cloudroot-lab <command> [flags]

commands:
  demo   -example DIR     boot the seed in DIR once, print what it provisioned
  bench  -example DIR -runs N [-kernel vmlinux|vmlinuz|vmlinuz-only]
                          boot it N times, print median stage timings
  pxe    -example DIR [-mode live|disk] [-disk-size MiB] [-append ARGS]
                          network-boot it: SeaBIOS → iPXE ROM → TFTP script →
                          kernel+initramfs over HTTP; live: squashfs root in
                          RAM; disk: the root image written to an empty disk

Artifacts come from $CLOUDROOT_BUILD (default <repo>/build); build them with
` + "`just agent kernel initramfs rootfs`" + `.
`

// errUsage is returned for bad command lines (the usage has been printed).
var errUsage = errors.New("bad usage")

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errUsage
	}
	switch args[0] {
	case "demo":
		return runDemo(ctx, args[1:], stdout, stderr)
	case "bench":
		return runBench(ctx, args[1:], stdout, stderr)
	case "pxe":
		return runPXE(ctx, args[1:], stdout, stderr)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprintf(stderr, "unknown command %q\n%s", args[0], usage)
	return errUsage
}

// newFlags makes a flag set that prints the usage on error.
func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// kernelPath picks build/kernel/<name>, or takes name as a path.
func kernelPath(a harness.Artifacts, name string) string {
	switch name {
	case "", "auto":
		return a.Kernel
	case "vmlinux":
		return a.Vmlinux
	case "vmlinuz":
		return a.Vmlinuz
	}
	return name
}

// checkArtifacts says what is missing for a boot with kernel.
func checkArtifacts(a harness.Artifacts, kernel string) error {
	var miss []string
	for _, p := range []string{kernel, a.Initramfs, a.Rootfs} {
		if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() {
			miss = append(miss, p)
		}
	}
	miss = append(miss, harness.HaveTools(harness.QEMUFor(a.Arch), "debugfs", "cp")...)
	if harness.HaveTools("genisoimage") != nil && harness.HaveTools("xorriso") != nil {
		miss = append(miss, "genisoimage (or xorriso)")
	}
	if len(miss) > 0 {
		return fmt.Errorf("missing: %s (build with `just agent kernel initramfs rootfs`; host tools with `just deps`)", strings.Join(miss, ", "))
	}
	return nil
}

// makeSeed builds an ISO seed from an example directory into dir.
func makeSeed(example, dir string) (string, error) {
	files, err := harness.SeedFiles(example)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	return harness.MakeSeed(dir, files, harness.SeedISO)
}

// rel shortens p relative to the working directory when it is below it.
func rel(p string) string {
	wd, err := os.Getwd()
	if err != nil {
		return p
	}
	if r, err := filepath.Rel(wd, p); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return p
}
