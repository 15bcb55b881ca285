package disks

// cc_growpart: grow the partitions behind `growpart.devices` (default the
// root) with cloudroot's built-in growpart (pkg/disk), every boot.
//
//   - mode: auto (default) and growpart use the built-in; off/false skip;
//     gpart (FreeBSD) is not supported.
//   - /etc/growroot-disabled in the target skips the module unless
//     ignore_growroot_disabled is true.
//   - Each entry is a device path (/dev/vdb1, links resolved) or a mount
//     point inside the target ("/"); an entry that is not a partition, or
//     can't be found, is skipped with a note, a failed grow is recorded as a
//     recoverable error — as cloud-init's SKIPPED/FAILED, the module goes on.

import (
	"context"
	"fmt"

	"github.com/cloudroot/cloudroot/pkg/disk"
	"github.com/cloudroot/cloudroot/pkg/internal/pyval"
	"github.com/cloudroot/cloudroot/pkg/modules"
	"github.com/cloudroot/cloudroot/pkg/state"
)

// GrowrootDisabled is the marker file that disables growpart.
const GrowrootDisabled = "/etc/growroot-disabled"

// Growpart is cc_growpart on the running system.
var Growpart = NewGrowpart(DiskEnv{})

// NewGrowpart is cc_growpart with its view of the machine injected.
func NewGrowpart(env DiskEnv) modules.Module {
	return modules.Module{
		Name:      "growpart",
		Frequency: state.PerAlways,
		Keys:      []string{"growpart"},
		Run: modules.Typed(func(ctx context.Context, c *modules.Context, cfg growpartConfig) error {
			return growpart(ctx, c, env, cfg)
		}),
	}
}

// growpartConfig is the module's configuration.
type growpartConfig struct {
	Present bool `cfg:"growpart,present"`
	// Growpart is nil when the value is not a mapping (null included).
	Growpart *growpartSection `cfg:"growpart,loose"`
}

// growpartSection is the growpart mapping.
type growpartSection struct {
	// Mode is str() of mode: util.is_false of it disables the module.
	Mode                   string   `cfg:"mode,default=auto"`
	Devices                []string `cfg:"devices,default=/"`
	IgnoreGrowrootDisabled bool     `cfg:"ignore_growroot_disabled"`
}

func growpart(ctx context.Context, c *modules.Context, env DiskEnv, cfg growpartConfig) error {
	g := growpartSection{Mode: "auto", Devices: []string{"/"}}
	if cfg.Present {
		if cfg.Growpart == nil {
			c.Warnf("growpart: 'growpart' in config was not a dict")
			return nil
		}
		g = *cfg.Growpart
	}
	if pyval.IsFalse(g.Mode) {
		c.Log.Debug("growpart disabled", "module", "growpart", "mode", g.Mode)
		return nil
	}
	switch g.Mode {
	case "auto", "growpart":
	default:
		return fmt.Errorf("growpart: unknown or unavailable resize mode %q (cloudroot has the built-in growpart only)", g.Mode)
	}
	if !g.IgnoreGrowrootDisabled && c.Root.Exists(GrowrootDisabled) {
		c.Log.Debug("growpart disabled: "+GrowrootDisabled+" exists; use ignore_growroot_disabled to ignore", "module", "growpart")
		return nil
	}
	devices := g.Devices
	if len(devices) == 0 {
		c.Log.Debug("growpart: empty device list", "module", "growpart")
		return nil
	}
	loc, err := env.locator()
	if err != nil {
		return fmt.Errorf("growpart: %w", err)
	}
	grow := env.Grow
	if grow == nil {
		grow = disk.GrowPath
	}
	for _, entry := range devices {
		l, err := env.locate(c, loc, entry)
		if err != nil {
			c.Log.Info("growpart: skipping device", "module", "growpart", "entry", entry, "reason", err.Error())
			continue
		}
		if l.Partition == 0 {
			c.Log.Info("growpart: skipping device", "module", "growpart", "entry", entry, "device", l.Device,
				"reason", fmt.Sprintf("%s: %v", l.Device, disk.ErrNotPartition))
			continue
		}
		r, err := grow(l.Disk, l.Partition, disk.GrowOptions{Log: c.Log.With("module", "growpart")})
		switch {
		case err != nil:
			c.Warnf("growpart: '%s' FAILED: failed to resize: disk=%s, ptnum=%d: %v", entry, l.Disk, l.Partition, err)
		case r.Changed:
			c.Log.Info(fmt.Sprintf("'%s' resized: changed (%s, %d) from %d to %d", entry, l.Disk, l.Partition,
				r.OldSize()*int64(r.SectorSize), r.NewSize()*int64(r.SectorSize)), "module", "growpart", "device", l.Device)
		default:
			c.Log.Debug(fmt.Sprintf("'%s' NOCHANGE: no change necessary (%s, %d): %s", entry, l.Disk, l.Partition, r.Reason), "module", "growpart")
		}
	}
	return nil
}
