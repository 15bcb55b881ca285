// Package stages wires cloudroot's boot stages from the packages that do the
// work: Init runs in the initramfs after the datasource is found (decode
// data, merge config, lay out /var/lib/cloud, apply the init modules to the
// target, build the hand-off state); Modules runs the config and final
// stages in the booted root from that state, never re-probing.
package stages

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/cloudroot/cloudroot/pkg/cloudcfg"
	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/distro"
	"github.com/cloudroot/cloudroot/pkg/modules"
	"github.com/cloudroot/cloudroot/pkg/state"
	"github.com/cloudroot/cloudroot/pkg/target"
	"github.com/cloudroot/cloudroot/pkg/userdata"
)

// InitOptions is what Init needs.
type InitOptions struct {
	// Target is the root being provisioned (/sysroot in the initramfs).
	Target *target.Root
	// Run is the root under which /run/cloud-init is written ("/" in the
	// initramfs, whose /run moves into the target at switch_root).
	Run *target.Root
	// Data is the datasource's answer.
	Data    *datasource.Data
	Cmdline string
	Log     *slog.Logger
	Out     io.Writer
	Now     func() time.Time
	Uptime  func() float64
	Version string
	SysInfo SysInfo
	// SetLiveHostname applies the hostname to the running kernel (nil: no).
	SetLiveHostname func(string) error
	// NoHostKeys is set when the kernel RNG is not ready: generating SSH
	// host keys would block, so it is skipped and reported.
	NoHostKeys bool
}

// Init provisions the target from o.Data and returns the state to hand
// over. st receives errors and recoverable errors for the init stage.
// Problems are recorded, never fatal: the returned error is only for a state
// that could not be built at all.
func Init(ctx context.Context, o InitOptions, stage *state.StageStatus, s *state.State) error {
	d := o.Data
	if d == nil {
		return errors.New("init: no datasource data")
	}
	warn := func(msg string) {
		o.Log.Warn(msg, "stage", "init")
		stage.AddRecoverable("WARNING", msg)
	}
	fail := func(msg string) {
		o.Log.Error(msg, "stage", "init")
		stage.Errors = append(stage.Errors, msg)
	}

	iid := d.InstanceID()
	prev := PreviousInstanceID(o.Target)
	dist := distro.Detect(o.Target.ReadFile)
	s.Datasource = state.Datasource{Name: d.Name, Description: d.Description(), Platform: d.Platform, Subplatform: d.Subplatform, CloudName: d.CloudName}
	s.InstanceID = iid
	s.PreviousInstanceID = prev
	s.NewInstance = prev != iid
	s.MetaData = d.MetaData
	s.UserData = d.UserData
	s.VendorData = d.VendorData
	s.NetworkConfig = d.NetworkConfig
	s.Distro = dist.ID

	// Decode user-data and vendor-data.
	ud, err := userdata.Decode("user-data", d.UserData)
	if err != nil {
		if errors.Is(err, userdata.ErrUnsupported) {
			fail(err.Error())
		} else {
			warn(fmt.Sprintf("Failed loading user-data: %v", err))
		}
	}
	for _, w := range ud.Warnings {
		warn(w)
	}
	vd, err := userdata.Decode("vendor-data", d.VendorData)
	if err != nil {
		if errors.Is(err, userdata.ErrUnsupported) {
			fail(err.Error())
		} else {
			warn(fmt.Sprintf("Failed loading vendor-data: %v", err))
		}
	}
	for _, w := range vd.Warnings {
		warn(w)
	}

	// Merge configuration.
	sys, err := cloudcfg.LoadSystem(o.Target)
	if err != nil {
		warn(err.Error())
	}
	srcs := []map[string]any{cloudcfg.Builtin()}
	for _, sc := range sys {
		srcs = append(srcs, sc.Config)
	}
	systemCfg := cloudcfg.Merge(srcs...)
	userCfg := cloudcfg.Merge(ud.Configs()...)
	vendorCfg := cloudcfg.Merge(vd.Configs()...)
	vendorEnabled := true
	if v, ok := userCfg["vendor_data"].(map[string]any); ok {
		vendorEnabled = modules.TranslateBool(v["enabled"], true)
	}
	layers := append([]map[string]any{}, srcs...)
	if vendorEnabled {
		layers = append(layers, vendorCfg)
	}
	layers = append(layers, userCfg)
	merged := cloudcfg.Merge(layers...)
	s.Config = merged
	if o.NoHostKeys {
		fail("ssh: host keys not generated: the kernel random number generator is not initialised")
		merged = cloudcfg.Merge(merged, map[string]any{"ssh_genkeytypes": []any{}})
	}

	// Lay out /var/lib/cloud for this instance.
	if err := WriteInstanceLayout(o.Target, o.Run, iid, prev, d.Description(), d.Name); err != nil {
		fail(err.Error())
	}
	idir := state.InstanceDir(iid)
	writeSecret := func(p string, b []byte) {
		if err := o.Target.WriteFile(p, b, 0o600); err != nil {
			fail(err.Error())
		}
	}
	writeSecret(idir+"/user-data.txt", d.UserData)
	writeSecret(idir+"/vendor-data.txt", d.VendorData)
	writeSecret(idir+"/cloud-config.txt", cloudConfigText(userCfg))
	if vendorEnabled {
		writeSecret(idir+"/vendor-cloud-config.txt", cloudConfigText(vendorCfg))
	}

	// Scripts from user-data and vendor-data land once per instance
	// (cloud-init's consume_data).
	sem := state.SemaphorePath(iid, "consume_data", state.PerInstance)
	if !o.Target.Exists(sem) {
		for i, p := range ud.Scripts() {
			name := fmt.Sprintf("part-%03d", i+1)
			if err := o.Target.WriteFile(idir+"/scripts/"+name, p.Content, 0o700); err != nil {
				fail(err.Error())
			}
		}
		if vendorEnabled {
			for i, p := range vd.Scripts() {
				name := fmt.Sprintf("part-%03d", i+1)
				if err := o.Target.WriteFile(idir+"/scripts/vendor/"+name, p.Content, 0o700); err != nil {
					fail(err.Error())
				}
			}
		}
		if err := o.Target.WriteFile(sem, []byte(fmt.Sprintf("%d: %f\n", 1, float64(o.Now().UnixNano())/1e9)), 0o644); err != nil {
			fail(err.Error())
		}
	}

	// Instance data for query/jinja and for tools that read it.
	idata := InstanceData(d, dist, merged, systemCfg, o.SysInfo)
	if err := WriteInstanceData(o.Run, idata, merged); err != nil {
		fail(err.Error())
	}

	// Init-stage modules.
	mc := &modules.Context{
		Root:            o.Target,
		Config:          modules.Config(merged),
		Meta:            d.MetaData,
		InstanceID:      iid,
		Distro:          dist,
		Datasource:      d.Description(),
		Log:             o.Log,
		Out:             o.Out,
		Now:             o.Now,
		Uptime:          o.Uptime,
		Version:         o.Version,
		Warn:            warn,
		SetLiveHostname: o.SetLiveHostname,
	}
	rep := modules.RunStage(ctx, mc, modules.StageInit)
	for _, e := range rep.Errors {
		fail(e)
	}
	for _, m := range rep.Ran {
		s.Timings = append(s.Timings, state.Timing{Stage: "init/" + m, Start: rep.Starts[m], Duration: rep.Durations[m]})
	}
	return nil
}

func cloudConfigText(cfg map[string]any) []byte {
	if len(cfg) == 0 {
		return []byte("#cloud-config\n{}\n")
	}
	b, err := yaml.Marshal(cfg)
	if err != nil {
		return []byte("#cloud-config\n{}\n")
	}
	return append([]byte("#cloud-config\n"), b...)
}
