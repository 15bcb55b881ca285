package disks

// cc_mounts: /etc/fstab entries from `mounts` (pkg/disk RenderFstab has the
// rules) and the swap file from `swap`. In the initramfs nothing is mounted
// or swapped on: the target's init reads the new fstab when it boots
// (cloud-init runs `mount -a` and `swapon -a` because it runs inside the
// booted system).

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
	"github.com/cloudroot/cloudroot/pkg/disk"
	"github.com/cloudroot/cloudroot/pkg/modules"
	"github.com/cloudroot/cloudroot/pkg/state"
	"github.com/cloudroot/cloudroot/pkg/target"
)

// Mounts is cc_mounts on the running system.
var Mounts = NewMounts(DiskEnv{})

// NewMounts is cc_mounts with its view of the machine injected.
func NewMounts(env DiskEnv) modules.Module {
	return modules.Module{
		Name:      "mounts",
		Frequency: state.PerInstance,
		Keys:      []string{"mounts", "mount_default_fields", "swap"},
		Run: modules.Typed(func(ctx context.Context, c *modules.Context, cfg mountsConfig) error {
			return mounts(ctx, c, env, cfg)
		}),
	}
}

// deviceEnv builds name resolution from the device list, device_aliases
// and the datasource's block-device-mapping meta-data (EC2, OpenStack).
func (e DiskEnv) deviceEnv(c *modules.Context, aliases map[string]string) (disk.DeviceEnv, []bootenv.Device, error) {
	devs, err := e.devices()
	if err != nil {
		return disk.DeviceEnv{}, nil, fmt.Errorf("listing block devices: %w", err)
	}
	paths := map[string]bool{}
	for _, d := range devs {
		paths[d.Path] = true
	}
	de := disk.DeviceEnv{
		Exists: func(p string) bool {
			if paths[p] {
				return true
			}
			r, err := filepath.EvalSymlinks(p)
			return err == nil && paths[r]
		},
		Meta: c.Metadata().Device,
	}
	de.Aliases = aliases
	return de, devs, nil
}

// mountsConfig is the module's configuration; pkg/disk parses the
// default fields and swap values with its own checks.
type mountsConfig struct {
	Mounts        []any             `cfg:"mounts"`
	DefaultFields any               `cfg:"mount_default_fields"`
	Swap          any               `cfg:"swap"`
	Aliases       map[string]string `cfg:"device_aliases,loose"`
}

// TypeErrors words a mounts value that is not a list.
func (mountsConfig) TypeErrors() map[string]string {
	return map[string]string{"mounts": "mounts: 'mounts' must be a list, got %s"}
}

func mounts(ctx context.Context, c *modules.Context, env DiskEnv, cfg mountsConfig) error {
	const name = "mounts"
	mc := disk.MountsConfig{Mounts: cfg.Mounts}
	if raw := cfg.DefaultFields; raw != nil {
		f, err := disk.ParseDefaultFields(raw)
		if err != nil {
			return fmt.Errorf("mounts: %w", err)
		}
		mc.DefaultFields = f
	}
	de, _, err := env.deviceEnv(c, cfg.Aliases)
	if err != nil {
		return fmt.Errorf("mounts: %w", err)
	}
	sc, err := disk.ParseSwap(cfg.Swap)
	if err != nil {
		c.Warnf("mounts: %v", err)
	} else if sc.Enabled() {
		if f, err := setupSwap(ctx, c, env, sc); err != nil {
			c.Warnf("mounts: failed to setup swap: %v", err)
		} else {
			mc.SwapFile = f
		}
	}
	old, err := c.Root.ReadFile("/etc/fstab")
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("mounts: reading /etc/fstab: %w", err)
	}
	res := disk.RenderFstab(old, mc, de)
	for _, n := range res.Notes {
		c.Log.Info("mounts: "+n, "module", name)
	}
	if !res.Write {
		c.Log.Debug("No modifications to fstab needed", "module", name)
		return nil
	}
	var errs []error
	for _, d := range res.Dirs {
		if err := c.Root.MkdirAll(d, 0o755); err != nil {
			errs = append(errs, fmt.Errorf("mounts: making mount point %s: %w", d, err))
		}
	}
	perm := fs.FileMode(0o644)
	if fi, err := c.Root.Stat("/etc/fstab"); err == nil {
		perm = fi.Mode().Perm()
	}
	if err := c.Root.WriteFile("/etc/fstab", res.Content, perm); err != nil {
		return errors.Join(append(errs, fmt.Errorf("mounts: writing /etc/fstab: %w", err))...)
	}
	if len(res.Changes) == 0 {
		c.Log.Debug("No changes to /etc/fstab made.", "module", name)
	}
	for _, ch := range res.Changes {
		c.Log.Info("Changes to fstab: "+ch, "module", name, "path", "/etc/fstab")
	}
	return errors.Join(errs...)
}

// setupSwap creates the swap file inside the target unless it exists, and
// returns its name for fstab.
func setupSwap(ctx context.Context, c *modules.Context, env DiskEnv, sc disk.SwapConfig) (string, error) {
	fname := path.Clean("/" + sc.Filename)
	if c.Root.Exists(fname) {
		c.Log.Debug("swap file exists, not recreating it", "module", "mounts", "path", fname)
		return fname, nil
	}
	dir := path.Dir(fname)
	if err := c.Root.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	size := sc.Size
	if sc.Auto {
		mem, err := memTotal(env)
		if err != nil {
			c.Log.Debug("Not creating swap: failed to read meminfo", "module", "mounts", "err", err)
			return "", nil
		}
		avail := int64(-1)
		if hp, err := c.Root.Resolve(dir); err == nil {
			freeBytes := env.FSAvail
			if freeBytes == nil {
				freeBytes = disk.FreeBytes
			}
			if a, err := freeBytes(hp); err == nil {
				avail = a
			}
		}
		size = disk.SuggestedSwapSize(mem, sc.MaxSize, avail)
	}
	mib := size >> 20
	if mib <= 0 {
		c.Log.Debug("Not creating swap: suggested size was 0", "module", "mounts")
		return "", nil
	}
	out := target.Cmd{Stdout: c.Out, Stderr: c.Out}
	runCmd := func(argv ...string) error {
		cmd := out
		cmd.Argv = argv
		return c.Root.Run(ctx, cmd)
	}
	if loc, err := env.locator(); err == nil {
		if l, err := env.locate(c, loc, "/"); err == nil && l.FSType == "btrfs" {
			// btrfs swap files must be NOCOW from the start.
			if err := runCmd("truncate", "-s", "0", fname); err == nil {
				_ = runCmd("chattr", "+C", fname)
			}
		}
	}
	c.Log.Info("Creating swap file", "module", "mounts", "path", fname, "size_mib", mib)
	if err := runCmd("fallocate", "-l", fmt.Sprintf("%dM", mib), fname); err != nil {
		c.Log.Info("fallocate swap creation failed, will attempt with dd", "module", "mounts", "err", err)
		if err := runCmd("dd", "if=/dev/zero", "of="+fname, "bs=1M", fmt.Sprintf("count=%d", mib)); err != nil {
			_ = c.Root.Remove(fname)
			return "", fmt.Errorf("creating swap file %s of %d MiB: %w", fname, mib, err)
		}
	}
	if c.Root.Exists(fname) {
		if err := c.Root.Chmod(fname, 0o600); err != nil {
			return "", err
		}
	}
	if err := runCmd("mkswap", fname); err != nil {
		_ = c.Root.Remove(fname)
		return "", fmt.Errorf("mkswap %s: %w", fname, err)
	}
	return fname, nil
}

func memTotal(env DiskEnv) (int64, error) {
	if env.MemTotal != nil {
		return env.MemTotal()
	}
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0, err
	}
	return disk.ParseMemTotal(b)
}
