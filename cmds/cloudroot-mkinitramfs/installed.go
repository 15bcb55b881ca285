package main

// The installed mode (-installed): how the kernel hooks of cloudroot's
// distribution package build /boot/initrd.img-VERSION for one kernel.
// Every input comes from the installed layout under -root (default /):
//
//	/usr/lib/cloudroot/cloudroot-init            the /init
//	/usr/share/cloudroot/initramfs/profiles/     the driver profiles
//	/lib/modules/VERSION                         the kernel's modules (depmod'ed)
//	/lib/firmware                                firmware the modules declare
//	/etc/cloudroot/initramfs.conf                PROFILE, COMPRESS, PROGRAMS
//	/etc/cloudroot/initramfs.conf.d/*.conf       the image's or admin's overrides, in name order
//
// The conf files are shell-style KEY=VALUE lines (the package's own is a
// conffile; an image builder records its profile in initramfs.conf.d).
// PROGRAMS are added with their libraries when present; an absent one is
// skipped with a note (lvm on a root without LVM). Flags given on the
// command line win over the conf files.

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Installed layout, relative to -root.
const (
	installedInit     = "usr/lib/cloudroot/cloudroot-init"
	installedProfiles = "usr/share/cloudroot/initramfs/profiles"
	installedConf     = "etc/cloudroot/initramfs.conf"
	installedConfDir  = "etc/cloudroot/initramfs.conf.d"
	installedFirmware = "lib/firmware"
	// DefaultInstalledProfile is the profile when no conf file names one.
	DefaultInstalledProfile = "cloud"
)

// installedConfig is what the conf files say.
type installedConfig struct {
	Profile  string
	Compress string
	Programs []string
	Sources  []string // the files read, in order
}

// parseConf reads KEY=VALUE lines into c: comments and blank lines are
// skipped, values may be single- or double-quoted; an unknown key or a line
// without "=" is an error naming the file and line.
func parseConf(c *installedConfig, name string, b []byte) error {
	sc := bufio.NewScanner(bytes.NewReader(b))
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return fmt.Errorf("%s:%d: want KEY=VALUE, got %q", name, n, line)
		}
		k = strings.TrimSpace(k)
		v = strings.TrimSpace(v)
		if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
			v = v[1 : len(v)-1]
		}
		switch k {
		case "PROFILE":
			c.Profile = v
		case "COMPRESS":
			c.Compress = v
		case "PROGRAMS":
			c.Programs = strings.Fields(v)
		default:
			return fmt.Errorf("%s:%d: unknown key %q (want PROFILE, COMPRESS or PROGRAMS)", name, n, k)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading %s: %w", name, err)
	}
	c.Sources = append(c.Sources, name)
	return nil
}

// readInstalledConfig reads the package's conf file and then the override
// directory under root. A missing file or directory is fine.
func readInstalledConfig(root string) (installedConfig, error) {
	c := installedConfig{Profile: DefaultInstalledProfile}
	files := []string{filepath.Join(root, installedConf)}
	more, err := filepath.Glob(filepath.Join(root, installedConfDir, "*.conf"))
	if err != nil {
		return c, fmt.Errorf("listing %s: %w", installedConfDir, err)
	}
	slices.Sort(more)
	for _, f := range append(files, more...) {
		b, err := os.ReadFile(f)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return c, fmt.Errorf("reading %s: %w", f, err)
		}
		if err := parseConf(&c, f, b); err != nil {
			return c, err
		}
	}
	return c, nil
}

// applyInstalled fills the flags not given on the command line (set) from
// the installed layout under cfg.installedRoot and its conf files. It
// returns notes for the log.
func applyInstalled(cfg *config, set map[string]bool) ([]string, error) {
	root := cfg.installedRoot
	if cfg.version == "" {
		return nil, fmt.Errorf("-installed needs -kernel-version (the kernel the initramfs is for)")
	}
	ic, err := readInstalledConfig(root)
	if err != nil {
		return nil, err
	}
	var notes []string
	if len(ic.Sources) > 0 {
		notes = append(notes, "config: "+strings.Join(ic.Sources, ", "))
	}
	if !set["init"] {
		cfg.init = filepath.Join(root, installedInit)
	}
	if !set["profiles"] {
		cfg.profilesDir = filepath.Join(root, installedProfiles)
	}
	if !set["profile"] && !set["drivers"] {
		cfg.profile = ic.Profile
	}
	if !set["compress"] && ic.Compress != "" {
		cfg.compress = ic.Compress
	}
	if !set["firmware-dir"] {
		cfg.firmwareDir = filepath.Join(root, installedFirmware)
	}
	if !set["program"] {
		for _, p := range ic.Programs {
			if !filepath.IsAbs(p) {
				return nil, fmt.Errorf("PROGRAMS: %q is not an absolute path", p)
			}
			if _, err := os.Stat(p); err != nil {
				notes = append(notes, fmt.Sprintf("program %s not present, skipped", p))
				continue
			}
			cfg.programs = append(cfg.programs, p)
		}
	}
	if !set["kernel-modules"] {
		cfg.kmodDir = ""
		for _, base := range []string{"lib/modules", "usr/lib/modules"} {
			d := filepath.Join(root, base, cfg.version)
			if _, err := os.Stat(filepath.Join(d, "modules.dep")); err == nil {
				cfg.kmodDir = d
				break
			}
		}
		if cfg.kmodDir == "" {
			return nil, fmt.Errorf("kernel %s: no depmod'ed %s (nor %s): is linux-image for %s installed?",
				cfg.version, filepath.Join(root, "lib/modules", cfg.version, "modules.dep"), filepath.Join(root, "usr/lib/modules", cfg.version, "modules.dep"), cfg.version)
		}
	}
	if !set["o"] {
		cfg.out = filepath.Join(root, "boot", "initrd.img-"+cfg.version)
	}
	return notes, nil
}
