package disks

// cc_disk_setup: device_aliases, disk_setup and fs_setup. The plan is made
// by disk.PlanSetup from what the disks hold now (read-only probes of the
// disks the config names) and what is mounted; it never touches a disk or
// filesystem in use, nor one holding data unless overwrite/replace_fs say
// so. Tables are written by cloudroot (pkg/disk); filesystems are made by
// the target's mkfs tools, run chrooted (the initramfs binds /dev into the
// target).

import (
	"context"
	"fmt"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
	"github.com/cloudroot/cloudroot/pkg/disk"
	"github.com/cloudroot/cloudroot/pkg/modules"
	"github.com/cloudroot/cloudroot/pkg/state"
	"github.com/cloudroot/cloudroot/pkg/target"
)

// DiskSetup is cc_disk_setup on the running system.
var DiskSetup = NewDiskSetup(DiskEnv{})

// NewDiskSetup is cc_disk_setup with its view of the machine injected.
func NewDiskSetup(env DiskEnv) modules.Module {
	return modules.Module{
		Name:       "disk_setup",
		Frequency:  state.PerInstance,
		Keys:       []string{"device_aliases", "disk_setup", "fs_setup"},
		ActivateBy: []string{"disk_setup", "fs_setup"},
		Run: modules.Typed(func(ctx context.Context, c *modules.Context, cfg diskSetupConfig) error {
			return diskSetup(ctx, c, env, cfg)
		}),
	}
}

// rootExecutor writes tables with disk.DeviceWriter (or on the injected
// OpenDisk devices) and runs mkfs in the target.
type rootExecutor struct {
	c   *modules.Context
	env DiskEnv
}

func (e rootExecutor) WriteTable(ctx context.Context, path string, t disk.NewTable) error {
	if e.env.OpenDisk == nil {
		return disk.DeviceWriter{}.WriteTable(ctx, path, t)
	}
	d, err := e.env.OpenDisk(path, true)
	if err != nil {
		return err
	}
	if c, ok := d.(interface{ Close() error }); ok {
		defer c.Close()
	}
	return disk.WriteTable(d, t, nil)
}

func (e rootExecutor) Run(ctx context.Context, argv []string) error {
	return e.c.Root.Run(ctx, target.Cmd{Argv: argv, Stdout: e.c.Out, Stderr: e.c.Out})
}

// diskSetupConfig is the module's configuration: pkg/disk parses the
// disk_setup and fs_setup values (ParseSetupValues) with its own checks.
type diskSetupConfig struct {
	DiskSetup     any               `cfg:"disk_setup"`
	FSSetup       any               `cfg:"fs_setup"`
	DeviceAliases any               `cfg:"device_aliases"`
	Aliases       map[string]string `cfg:"device_aliases,loose"`
}

func diskSetup(ctx context.Context, c *modules.Context, env DiskEnv, cfg diskSetupConfig) error {
	const name = "disk_setup"
	if cfg.DiskSetup == nil && cfg.FSSetup == nil {
		c.Log.Debug("Skipping module named disk_setup, no disk_setup or fs_setup configuration", "module", name)
		return nil
	}
	names, devs, err := env.deviceEnv(c, cfg.Aliases)
	if err != nil {
		return fmt.Errorf("disk_setup: %w", err)
	}
	setup, warns := disk.ParseSetupValues(disk.SetupValues{DeviceAliases: cfg.DeviceAliases, DiskSetup: cfg.DiskSetup, FSSetup: cfg.FSSetup}, names)
	for _, w := range warns {
		c.Warnf("disk_setup: %s", w)
	}
	mounts, err := env.mounts()
	if err != nil {
		c.Log.Debug("disk_setup: no mount table; assuming nothing is mounted", "module", name, "err", err)
	}
	infos := probeSetupDevices(c, setup, devs, mounts, env)
	plan, err := disk.PlanSetup(setup, infos)
	if err != nil {
		return fmt.Errorf("disk_setup: %w", err)
	}
	ex := disk.Executor(rootExecutor{c: c, env: env})
	// Skips cloud-init reports as warnings (it would have tried and failed)
	// go into status.json (and the log) here; Apply logs the other skips.
	steps := plan.Steps[:0:0]
	for _, st := range plan.Steps {
		if st.Action == "skip" && st.Warn {
			msg := fmt.Sprintf("disk_setup: %s: skipping %s: %s", st.Config, st.Device, st.Reason)
			c.Warnf("%s", msg)
			continue
		}
		steps = append(steps, st)
	}
	plan.Steps = steps
	if err := disk.Apply(ctx, plan, ex, c.Log.With("module", name)); err != nil {
		return fmt.Errorf("disk_setup: %w", err)
	}
	return nil
}

// probeSetupDevices reads the disks the config names, marking what is
// mounted as in use.
func probeSetupDevices(c *modules.Context, cfg disk.SetupConfig, devs []bootenv.Device, mounts []disk.Mount, env DiskEnv) []disk.DeviceInfo {
	want := map[string]bool{}
	add := func(n string) {
		base, _ := disk.SplitDotted(n)
		if a, ok := cfg.Names.Aliases[base]; ok {
			base = a
		}
		if disk.IsMetaDeviceName(base) && cfg.Names.Meta != nil {
			base = cfg.Names.Meta(base)
		}
		if base != "" && !strings.HasPrefix(base, "/") {
			base = "/dev/" + base
		}
		want[base] = true
	}
	for n := range cfg.Disks {
		add(n)
	}
	for _, f := range cfg.Filesystems {
		add(f.Device)
	}
	inUse := map[string]string{}
	for _, d := range devs {
		for _, m := range mounts {
			if m.Major == d.Major && m.Minor == d.Minor && (d.Major != 0 || d.Minor != 0) {
				inUse[d.Path] = "mounted on " + m.MountPoint
			}
		}
	}
	open := env.OpenDisk
	var infos []disk.DeviceInfo
	for _, d := range devs {
		if d.Partition || !want[d.Path] {
			continue
		}
		var info disk.DeviceInfo
		var err error
		if open != nil {
			var dv disk.Device
			if dv, err = open(d.Path, false); err == nil {
				info, err = disk.ProbeDeviceOn(dv, d.Path)
			}
		} else {
			info, err = disk.ProbeDevice(d.Path)
		}
		if err != nil {
			c.Warnf("disk_setup: probing %s: %v", d.Path, err)
			continue
		}
		info.InUse = inUse[d.Path]
		// Partition names come from the device list where it has them.
		for i := range info.Partitions {
			for _, p := range devs {
				if p.Partition && p.Parent == d.Name && p.PartNumber == info.Partitions[i].Number {
					info.Partitions[i].Path = p.Path
				}
			}
			info.Partitions[i].InUse = inUse[info.Partitions[i].Path]
		}
		infos = append(infos, info)
	}
	return infos
}
