package disks

// cc_resizefs: grow the root filesystem to fill its (grown) partition,
// every boot. resize_rootfs: true (default) runs the resizer and waits;
// noblock starts it and returns; false skips. The filesystem type comes
// from the mount table, the resizer from disk.ResizerFor (resize2fs for
// ext2/3/4, xfs_growfs, btrfs filesystem resize max), and it runs through
// the target (chrooted in the initramfs, where /dev, /proc and /sys are
// bound in, so resize2fs sees the mounted filesystem and resizes online).

import (
	"context"
	"fmt"

	"github.com/cloudroot/cloudroot/pkg/disk"
	"github.com/cloudroot/cloudroot/pkg/internal/pyval"
	"github.com/cloudroot/cloudroot/pkg/modules"
	"github.com/cloudroot/cloudroot/pkg/state"
	"github.com/cloudroot/cloudroot/pkg/target"
)

// Resizefs is cc_resizefs on the running system.
var Resizefs = NewResizefs(DiskEnv{})

// NewResizefs is cc_resizefs with its view of the machine injected.
func NewResizefs(env DiskEnv) modules.Module {
	return modules.Module{
		Name:      "resizefs",
		Frequency: state.PerAlways,
		Keys:      []string{"resize_rootfs"},
		Run: modules.Typed(func(ctx context.Context, c *modules.Context, cfg resizefsConfig) error {
			return resizefs(ctx, c, env, cfg)
		}),
	}
}

// resizefsConfig is the module's configuration: resize_rootfs as given
// (a flag or "noblock"), nil when absent or null (resize).
type resizefsConfig struct {
	ResizeRootfs any `cfg:"resize_rootfs"`
}

func resizefs(ctx context.Context, c *modules.Context, env DiskEnv, cfg resizefsConfig) error {
	const name = "resizefs"
	raw := cfg.ResizeRootfs
	if raw == nil {
		raw = true
	}
	noblock := raw == "noblock"
	if !noblock && !pyval.TranslateBool(raw, true) {
		c.Log.Debug("Skipping module named resizefs, resizing disabled", "module", name)
		return nil
	}
	loc, err := env.locator()
	if err != nil {
		return fmt.Errorf("resizefs: %w", err)
	}
	l, err := env.locate(c, loc, "/")
	if err != nil {
		// A container, an overlay or a tmpfs root: nothing to grow.
		c.Log.Debug("resizefs: could not find the root's block device, not resizing", "module", name, "err", err)
		return nil
	}
	rz, err := disk.ResizerFor(l.FSType)
	if err != nil {
		c.Log.Debug(fmt.Sprintf("Not resizing unknown filesystem type %s for %s", l.FSType, l.Device), "module", name)
		return nil
	}
	// Inside the target /dev is the host's /dev (bound in the initramfs).
	argv := rz.Command(l.Device, "/")
	do := func() error {
		err := disk.ResizeFS(ctx, c.Root, l.FSType, l.Device, "/", target.Cmd{Stdout: c.Out, Stderr: c.Out})
		if err != nil {
			return err
		}
		c.Log.Info(fmt.Sprintf("Resized root filesystem (type=%s, val=%v)", l.FSType, raw), "module", name, "device", l.Device, "argv", argv)
		return nil
	}
	if noblock {
		bg := env.Background
		if bg == nil {
			bg = func(f func()) { go f() }
		}
		ctx = context.WithoutCancel(ctx)
		bg(func() {
			if err := do(); err != nil {
				c.Warnf("resizefs (noblock): %v", err)
			}
		})
		c.Log.Info("Resizing (via forking) root filesystem", "module", name, "device", l.Device, "fstype", l.FSType, "argv", argv)
		return nil
	}
	if err := do(); err != nil {
		return fmt.Errorf("resizefs: %w", err)
	}
	return nil
}
