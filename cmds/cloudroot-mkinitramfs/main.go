// Command cloudroot-mkinitramfs builds cloudroot's initramfs: the kernel
// modules named by a driver list (with their dependencies and softdeps, and
// a trimmed modules.dep), a static /init, extra files, the empty mount
// points and /dev/console, packed as a newc cpio archive and compressed.
//
//	cloudroot-mkinitramfs -init build/cloudroot-init -extra build/cloudroot:usr/bin/cloudroot
//
// No root privileges, no go build, no network: the archive is written with
// mkuimage's cpio library, owned 0:0.
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
	"time"

	"github.com/cloudroot/cloudroot/initramfs"
)

type config struct {
	kmodDir     string
	version     string
	drivers     string
	profile     string
	profilesDir string
	hostRoot    string
	hostSysfs   string
	firmwareDir string
	programs    []string
	init        string
	extra       []initramfs.File
	out         string
	compress    string
	verbose     bool
	// installed: fill what the flags leave out from the installed layout
	// under installedRoot (see installed.go).
	installed     bool
	installedRoot string
}

type extraFlag struct{ files *[]initramfs.File }

func (e extraFlag) String() string { return "" }

func (e extraFlag) Set(s string) error {
	f, err := initramfs.ParseFile(s)
	if err != nil {
		return err
	}
	*e.files = append(*e.files, f)
	return nil
}

func main() {
	var cfg config
	fl := flag.NewFlagSet("cloudroot-mkinitramfs", flag.ExitOnError)
	fl.StringVar(&cfg.kmodDir, "kernel-modules", "build/kernel/modules", "depmod'ed module tree (lib/modules/<ver>)")
	fl.StringVar(&cfg.version, "kernel-version", "", "kernel uname -r (default: the module tree's directory name)")
	fl.StringVar(&cfg.drivers, "drivers", "initramfs/drivers.txt", "driver list (the floor; see -profile)")
	fl.StringVar(&cfg.profile, "profile", "", "driver profile: minimal, cloud, baremetal, generic (a list in -profiles; replaces -drivers)")
	fl.StringVar(&cfg.profilesDir, "profiles", "initramfs/profiles", "directory of the profile lists")
	fl.StringVar(&cfg.hostRoot, "host-root", "", "host-only image: take the modules from this root's lib/modules/<ver> and add those the hardware of -host-sysfs needs")
	fl.StringVar(&cfg.hostSysfs, "host-sysfs", "", "the hardware for -host-root: a sysfs root or snapshot (default /sys) or a file of modaliases (cat /sys/bus/*/devices/*/modalias)")
	fl.StringVar(&cfg.firmwareDir, "firmware-dir", "", "firmware the packed modules declare is taken from here (Debian: /lib/firmware, from the firmware-* packages); absent is fine")
	fl.Func("program", "dynamically linked host program to add with its libraries, at the same path (repeatable; /usr/sbin/lvm for roots on LVM)", func(s string) error {
		if !filepath.IsAbs(s) {
			return fmt.Errorf("-program wants an absolute path, got %q", s)
		}
		cfg.programs = append(cfg.programs, s)
		return nil
	})
	fl.StringVar(&cfg.init, "init", "", "static binary to install as /init (required)")
	fl.Var(extraFlag{&cfg.extra}, "extra", "SRC:DST file or tree to add (repeatable)")
	fl.StringVar(&cfg.out, "o", "build/initramfs.cpio.gz", "output file")
	fl.StringVar(&cfg.compress, "compress", initramfs.CompressGzip, "gzip, zstd or none")
	fl.BoolVar(&cfg.verbose, "v", false, "print resolution notes and the module load order")
	fl.BoolVar(&cfg.installed, "installed", false, "build for an installed kernel from the installed layout: -kernel-version V writes /boot/initrd.img-V with /etc/cloudroot/initramfs.conf's profile (the kernel hooks' mode)")
	fl.StringVar(&cfg.installedRoot, "root", "/", "with -installed: the root the layout, modules and output are under")
	fl.Parse(os.Args[1:])
	if fl.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "cloudroot-mkinitramfs: unexpected arguments %q\n", fl.Args())
		os.Exit(2)
	}
	set := map[string]bool{}
	fl.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if set["profile"] && set["drivers"] {
		fmt.Fprintln(os.Stderr, "cloudroot-mkinitramfs: -profile and -drivers both name the driver list; give one")
		os.Exit(2)
	}
	if set["host-sysfs"] && !set["host-root"] {
		fmt.Fprintln(os.Stderr, "cloudroot-mkinitramfs: -host-sysfs needs -host-root")
		os.Exit(2)
	}
	if cfg.installed {
		notes, err := applyInstalled(&cfg, set)
		if err != nil {
			fmt.Fprintf(os.Stderr, "cloudroot-mkinitramfs: %v\n", err)
			os.Exit(1)
		}
		for _, n := range notes {
			fmt.Fprintf(os.Stderr, "cloudroot-mkinitramfs: %s\n", n)
		}
	} else if set["root"] {
		fmt.Fprintln(os.Stderr, "cloudroot-mkinitramfs: -root needs -installed")
		os.Exit(2)
	}
	if err := run(context.Background(), cfg, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintf(os.Stderr, "cloudroot-mkinitramfs: %v\n", err)
		os.Exit(1)
	}
}

func run(_ context.Context, cfg config, stdout, stderr io.Writer) error {
	if cfg.init == "" {
		return errors.New("-init is required")
	}
	start := time.Now()
	drivers := cfg.drivers
	if cfg.profile != "" {
		drivers = filepath.Join(cfg.profilesDir, cfg.profile+".txt")
		if _, err := os.Stat(drivers); err != nil {
			names, _ := filepath.Glob(filepath.Join(cfg.profilesDir, "*.txt"))
			for i, n := range names {
				names[i] = strings.TrimSuffix(filepath.Base(n), ".txt")
			}
			return fmt.Errorf("unknown profile %q (have %s): %w", cfg.profile, strings.Join(names, ", "), err)
		}
	}
	reqs, err := initramfs.ReadDriverList(drivers)
	if err != nil {
		return err
	}
	if cfg.hostRoot != "" {
		dir, ver, err := hostModules(cfg.hostRoot, cfg.version)
		if err != nil {
			return err
		}
		cfg.kmodDir, cfg.version = dir, ver
		if cfg.hostSysfs == "" {
			cfg.hostSysfs = "/sys"
		}
	}
	if err := os.MkdirAll(filepath.Dir(cfg.out), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(cfg.out), "."+filepath.Base(cfg.out)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	st, err := initramfs.Build(initramfs.Config{
		KmodDir:      cfg.kmodDir,
		Version:      cfg.version,
		Drivers:      reqs,
		HostHardware: cfg.hostSysfs,
		FirmwareDir:  cfg.firmwareDir,
		Programs:     cfg.programs,
		Init:         cfg.init,
		Extra:        cfg.extra,
		Compress:     cfg.compress,
	}, tmp)
	if err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), cfg.out); err != nil {
		return err
	}
	if cfg.verbose {
		for _, n := range st.Notes {
			fmt.Fprintf(stderr, "note: %s\n", n)
		}
		for _, m := range st.Firmware.Missing {
			fmt.Fprintf(stderr, "note: firmware not in %s: %s\n", cfg.firmwareDir, m)
		}
		fmt.Fprintf(stderr, "modules.load: %s\n", strings.Join(st.Load, " "))
	}
	if cfg.firmwareDir != "" {
		fmt.Fprintf(stdout, "firmware: %d files %s from %s; %d declared files not there (-v lists them)\n",
			st.Firmware.Files, mib(st.Firmware.Bytes), cfg.firmwareDir, len(st.Firmware.Missing))
	}
	fmt.Fprintf(stdout, "initramfs: %s %s (cpio %s; %d modules %s; init %s; kernel %s; %s)\n",
		cfg.out, mib(st.ImageBytes), mib(st.CPIOBytes), st.Modules, mib(st.ModuleBytes), mib(st.InitBytes),
		st.Version, time.Since(start).Round(time.Millisecond))
	return nil
}

// hostModules finds the module tree of a target root: lib/modules/<ver>
// (or usr/lib/modules), the only version there unless version names one.
func hostModules(root, version string) (dir, ver string, err error) {
	for _, base := range []string{"lib/modules", "usr/lib/modules"} {
		d := filepath.Join(root, base)
		if version != "" {
			if _, err := os.Stat(filepath.Join(d, version, "modules.dep")); err == nil {
				return filepath.Join(d, version), version, nil
			}
			continue
		}
		ents, err := os.ReadDir(d)
		if err != nil {
			continue
		}
		var vers []string
		for _, e := range ents {
			if _, err := os.Stat(filepath.Join(d, e.Name(), "modules.dep")); err == nil {
				vers = append(vers, e.Name())
			}
		}
		switch len(vers) {
		case 0:
		case 1:
			return filepath.Join(d, vers[0]), vers[0], nil
		default:
			return "", "", fmt.Errorf("-host-root %s has kernels %s: give -kernel-version", root, strings.Join(vers, ", "))
		}
	}
	if version != "" {
		return "", "", fmt.Errorf("-host-root %s has no depmod'ed lib/modules/%s", root, version)
	}
	return "", "", fmt.Errorf("-host-root %s has no depmod'ed kernel under lib/modules", root)
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
