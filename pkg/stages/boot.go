package stages

// The local and network stages as named steps over one small context,
// Boot, with two callers: cloudroot-init (PID 1 of the initramfs, target
// /sysroot, the ephemeral network it brings up on demand) and the agent's
// in-root mode (`cloud-init init [--local]` when no hand-off state exists:
// a chroot, a container, a root booted by the distribution's own initrd;
// target /, the system's network).
//
// The contract, in order:
//
//	Local    welcome + init-local event; Detect (ds-identify); the
//	         cloud-config-url hook; the datasource search (FindDatasource).
//	         No datasource: provisioning is disabled for this boot.
//	Init     the init stage (stages.Init: user-data, network rendering,
//	         init modules) for the datasource found, then the caller's
//	         extra steps, timed as the init stage.
//	Handoff  markers, the state (run dir and instance dir), status.json
//	         and the logs.
//
// A step that fails is recorded (state errors, status) and the boot goes
// on; nothing here mounts, loads drivers or switches root.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
	"github.com/cloudroot/cloudroot/pkg/cilog"
	"github.com/cloudroot/cloudroot/pkg/cloudcfg"
	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/builtin"
	"github.com/cloudroot/cloudroot/pkg/identify"
	"github.com/cloudroot/cloudroot/pkg/modules/users"
	"github.com/cloudroot/cloudroot/pkg/secret"
	"github.com/cloudroot/cloudroot/pkg/state"
	"github.com/cloudroot/cloudroot/pkg/target"
	"github.com/cloudroot/cloudroot/pkg/userdata"
)

// The modes a boot's local and network stages ran in (state.State.Mode,
// status.json's extended "mode", the console).
const (
	ModeInitramfs = "initramfs"
	ModeInRoot    = "in-root"
)

// Network is the network a boot may bring up for a datasource or an
// #include: the initramfs's ephemeral DHCP, or the agent's.
type Network interface {
	// Up brings the network up once; later calls return the first outcome.
	Up(ctx context.Context) error
	// Client is the HTTP client over it (after Up).
	Client() *http.Client
	// Lease is the DHCP lease as datasources see it (nil: static or none).
	Lease() *datasource.Lease
	// Fetch retrieves a URL, bringing the network up on first use.
	Fetch(ctx context.Context, url string) ([]byte, error)
}

// NamedStep is one step a caller adds to a stage.
type NamedStep struct {
	Name string
	Run  func() error
}

// Boot is what the stages need to know about one boot.
type Boot struct {
	Mode    string       // ModeInitramfs or ModeInRoot
	Target  *target.Root // the root being provisioned
	Run     *target.Root // where /run/cloud-init lives ("/")
	Log     *slog.Logger
	Out     io.Writer // the console and cloud-init-output.log
	Now     func() time.Time
	Uptime  func() float64
	Version string

	Cmdline bootenv.Cmdline
	Devices []bootenv.Device
	DMI     bootenv.DMI
	Uname   identify.Uname
	// Host is the running system's / for ds-identify (/sys, /proc).
	Host fs.FS
	// Virt is systemd-detect-virt's answer ("" : ds-identify's own
	// default, SYSTEMD_VIRTUALIZATION else "unavailable").
	Virt string

	// Net is brought up on demand for network datasources (nil: none can
	// be asked unless NetworkUp). NetworkUp says the system's own network
	// is up (the in-root network stage), HTTP its client.
	Net       Network
	NetworkUp bool
	HTTP      *http.Client

	State    *state.State
	Status   *state.Status
	SysFiles *cloudcfg.SystemFiles
	// base is the base configuration loaded from SysFiles (BaseConfig).
	base *cloudcfg.Base
	// Failed are the steps that returned an error (the banner).
	Failed []string
	// LocalEvent is init-local's reporting event (the searches).
	LocalEvent *cilog.Event

	// ProbeLine is the console line before asking a datasource (nil: the
	// plain one).
	ProbeLine func(name string, network bool, probe, left time.Duration) string
	// BeforeSearch runs when the command line has cloud-config-url=.
	BeforeSearch func(ctx context.Context) error

	// The init stage's hooks (all optional).
	Bind            func() (unbind func() error, err error)
	SysInfo         SysInfo
	SetLiveHostname func(string) error
	HostKeys        *users.HostKeyPool
	NetLinks        func() []bootenv.NetLink
	Secrets         func([]string)
	OnNetwork       func(*NetworkResult)

	// BackgroundHostKeys: InitOptions.BackgroundHostKeys.
	BackgroundHostKeys bool

	// NoIdentify: the datasource list is the configuration's (cloud.cfg,
	// cloud.cfg.d and what a generator's ds-identify wrote under /run), as
	// cloud-init's init and single read it; ds-identify is not run.
	NoIdentify bool
	// FetchOnly: Init instancifies and processes the user-data but runs no
	// module, and Handoff leaves status.json alone (cloud-init single).
	FetchOnly bool
}

// Step runs one step, timing it; an error is recorded and the boot goes on.
func (b *Boot) Step(name string, f func() error) {
	start := b.Uptime()
	err := f()
	tm := state.Timing{Stage: name, Start: start, Duration: b.Uptime() - start}
	if err != nil {
		tm.Error = err.Error()
		b.State.Errors = append(b.State.Errors, fmt.Sprintf("%s: %v", name, err))
		b.Failed = append(b.Failed, name)
		b.Log.Error("stage failed", "stage", name, "err", err, "duration", fmt.Sprintf("%.3fs", tm.Duration))
	} else {
		b.Log.Info("stage done", "stage", name, "duration", fmt.Sprintf("%.3fs", tm.Duration))
	}
	b.State.Timings = append(b.State.Timings, tm)
}

// welcome writes cloud-init's stage banner to Out (not for single's
// fetch, which has its own).
func (b *Boot) welcome(action string, up float64) {
	if b.Out != nil && !b.FetchOnly {
		_, _ = io.WriteString(b.Out, Welcome(b.Version, action, b.Now(), up))
	}
}

// Disable records that provisioning does not run this boot.
func (b *Boot) Disable(code, reason string) {
	b.State.Disabled = true
	b.State.DisabledReason = reason
	b.Status.BootStatusCode = code
	b.Log.Info("provisioning disabled for this boot", "reason", reason)
}

// Local is the local stage (cloud-init's init --local): detection and the
// datasource search. It returns the datasource found, nil when none.
func (b *Boot) Local(ctx context.Context) *datasource.Data {
	// status.json says where the stages ran, initramfs or in-root.
	b.State.Mode, b.Status.Mode = b.Mode, b.Mode
	st := b.Status.Get(state.StageInitLocal)
	start := b.Uptime()
	st.Start = &start
	b.welcome("init-local", start)
	b.LocalEvent = cilog.StartStage(b.Log, state.StageInitLocal, b.Version, b.Now, start)
	b.Log.Info("local and network stages run "+modeWhere(b.Mode), "mode", b.Mode)
	var data *datasource.Data
	enabled := true
	if b.NoIdentify {
		b.SysFiles = cloudcfg.ReadSystemFiles(b.Target, b.Run)
		b.State.DatasourceList = b.ConfiguredList()
	} else {
		b.Step("detect", func() error {
			b.State.DatasourceList, enabled = b.Detect()
			return nil
		})
	}
	if enabled {
		if _, _, ok := b.Cmdline.CloudConfigURL(); ok && b.BeforeSearch != nil {
			b.Step("cloud-config-url", func() error { return b.BeforeSearch(ctx) })
		}
		if b.SysFiles == nil {
			b.SysFiles = cloudcfg.ReadSystemFiles(b.Target, b.Run)
		}
		b.Step("local", func() error {
			d, err := b.FindDatasource(ctx, b.State.DatasourceList)
			if err != nil {
				if errors.Is(err, datasource.ErrNotFound) {
					b.Disable("disabled-by-generator", "no datasource found: "+err.Error())
					return nil
				}
				st.Errors = append(st.Errors, err.Error())
				b.Disable("disabled-by-generator", "datasource could not be read: "+err.Error())
				return err
			}
			data = d
			b.Log.Info("found datasource", "datasource", d.Description(), "instance_id", d.InstanceID())
			if src, ok := builtin.Registry().Lookup(d.Name); ok {
				if p, ok := src.(datasource.Preparer); ok {
					if err := p.Prepare(d); err != nil {
						b.Log.Warn("preparing for the datasource", "datasource", d.Name, "err", err)
					}
				}
			}
			return nil
		})
	}
	end := b.Uptime()
	st.Finished = &end
	if len(st.Errors) > 0 {
		b.LocalEvent.Fail()
	}
	b.LocalEvent.Finish()
	return data
}

// modeWhere says where a mode's stages run, for the console and the log.
func modeWhere(mode string) string {
	if mode == ModeInRoot {
		return "in the booted root (no initramfs hand-off for this boot)"
	}
	return "in the initramfs"
}

// Detect runs ds-identify's decision (pkg/identify) on this boot's inputs:
// DMI, the command line, the probed filesystems and the target's
// /etc/cloud. It writes cloud.cfg and ds-identify.log into the run
// directory as ds-identify does and says whether provisioning runs and
// which datasources to try.
func (b *Boot) Detect() ([]string, bool) {
	in := identify.Inputs{
		DMI:     b.DMI,
		Cmdline: b.Cmdline,
		FS:      identify.FSFromDevices(b.Devices),
		Virt:    b.Virt,
		Uname:   b.Uname,
		Host:    b.Host,
		Env:     map[string]string{},
	}
	if r, err := os.OpenRoot(b.Target.Dir()); err == nil {
		in.Files = r.FS()
	} else {
		b.Log.Warn("cannot open the root for detection", "err", err)
	}
	start := b.Uptime()
	res := identify.Identify(in)
	for _, w := range res.Warnings {
		b.Log.Warn(w)
	}
	logText := res.FormatLog(identify.LogFrame{Start: start, End: b.Uptime(), PID: os.Getpid()})
	if err := identify.WriteOutputs(filepath.Join(b.Run.Dir(), state.RunDir), res, logText); err != nil {
		b.Log.Warn("writing ds-identify results", "err", err)
	}
	b.Log.Info("detect", "decision", string(res.Decision), "reason", res.Reason, "datasource_list", strings.Join(res.List, ","))
	if res.Decision == identify.Disabled {
		b.Disable(res.BootStatusCode, res.Reason)
		return nil, false
	}
	list := res.List
	if list == nil {
		// Policy "enabled": no list written; cloud-init's built-in list applies.
		list = []string{"NoCloud", "None"}
	}
	reg := builtin.Registry()
	provided, unsupported := reg.Select(list)
	if len(unsupported) > 0 {
		msg := fmt.Sprintf("datasource(s) %s detected, but this build of cloudroot does not provide them (it has %s)", strings.Join(unsupported, ", "), strings.Join(reg.Names(), ", "))
		b.Status.Get(state.StageInitLocal).Errors = append(b.Status.Get(state.StageInitLocal).Errors, msg)
		b.Log.Error(msg)
	}
	if len(provided) == 0 {
		b.Disable("disabled-by-generator", "no supported datasource in datasource_list ["+strings.Join(list, ", ")+"]")
		return list, false
	}
	return list, true
}

// BaseConfig is the base configuration (cloud.cfg, cloud.cfg.d, the
// runtime config, the command line), loaded from SysFiles once per boot
// and shared by the datasource search and the init stage.
func (b *Boot) BaseConfig() *cloudcfg.Base {
	if b.SysFiles == nil {
		b.SysFiles = cloudcfg.ReadSystemFiles(b.Target, b.Run)
	}
	if b.base == nil {
		b.base = cloudcfg.LoadBase(cloudcfg.LoadOptions{Files: b.SysFiles, Cmdline: b.Cmdline.String()})
	}
	return b.base
}

// ConfiguredList is the merged configuration's datasource_list (the
// built-in one when none is set).
func (b *Boot) ConfiguredList() []string {
	var list []string
	if l, ok := b.BaseConfig().System["datasource_list"].([]any); ok {
		for _, v := range l {
			if s, ok := v.(string); ok {
				list = append(list, s)
			}
		}
	}
	b.Log.Info("datasource_list from the configuration (no ds-identify in this mode)", "datasource_list", strings.Join(list, ","))
	return list
}

// Init is the init stage (cloud-init's init): the init modules for the
// datasource found, then the caller's steps, timed as the init stage.
func (b *Boot) Init(ctx context.Context, d *datasource.Data, after ...NamedStep) {
	b.Status.Datasource = d.Description()
	b.Status.BootStatusCode = "enabled-by-generator"
	start := b.Uptime()
	b.Status.Get(state.StageInit).Start = &start
	b.welcome("init", start)
	b.Step("init", func() error { return b.provision(ctx, d) })
	for _, s := range after {
		b.Step(s.Name, s.Run)
	}
	end := b.Uptime()
	b.Status.Get(state.StageInit).Finished = &end
}

// provision applies the init stage to the target, inside what Bind sets up
// (the initramfs binds /dev, /proc, /sys and /run into /sysroot so that
// commands such as bootcmd see a normal system).
func (b *Boot) provision(ctx context.Context, d *datasource.Data) error {
	if b.Bind != nil {
		unbind, err := b.Bind()
		if err != nil {
			b.Log.Warn("bind mount for commands failed", "err", err)
		}
		defer func() {
			if err := unbind(); err != nil {
				b.Log.Warn("unmount failed", "err", err)
			}
		}()
	}
	var links []bootenv.NetLink
	if b.NetLinks != nil {
		links = b.NetLinks()
	}
	var fetch func(context.Context, string) ([]byte, error)
	switch {
	case b.Net != nil:
		fetch = b.Net.Fetch
	case b.NetworkUp && b.HTTP != nil:
		fetch = userdata.HTTPFetcher(b.HTTP, userdata.DefaultMaxSize, userdata.DefaultIncludeRetries)
	}
	pol, _ := datasource.CmdlinePolicy(b.Cmdline)
	opts := InitOptions{
		Target: b.Target, Run: b.Run, Data: d, Cmdline: b.Cmdline.String(), Log: b.Log, Out: b.Out,
		Now: b.Now, Uptime: b.Uptime, Version: b.Version, SysInfo: b.SysInfo,
		SetLiveHostname: b.SetLiveHostname,
		HostKeys:        b.HostKeys,
		NetLinks:        links,
		Fetch:           fetch,
		IncludeBudget:   pol.Include,
		SystemFiles:     b.SysFiles,
		Base:            b.BaseConfig(),
		Secrets: func(v []string) {
			if b.Secrets != nil {
				b.Secrets(v)
			}
			b.Status.Secrets = v
		},
		Network:   b.OnNetwork,
		NoModules: b.FetchOnly,
	}
	opts.BackgroundHostKeys = b.BackgroundHostKeys
	return Init(ctx, opts, b.Status.Get(state.StageInit), b.State)
}

// Handoff writes the enabled/disabled marker, the state (private, in the
// run directory and the instance directory), status.json, and appends
// logs and out to cloud-init.log and cloud-init-output.log, scrubbed of
// this boot's secrets.
func (b *Boot) Handoff(logs, out []byte) error {
	t, run := b.Target, b.Run
	var errs []error
	if b.State.Disabled {
		if err := run.WriteFile(state.DisabledMarker, nil, 0o644); err != nil {
			errs = append(errs, err)
		}
	} else if err := run.WriteFile(state.EnabledMarker, nil, 0o644); err != nil {
		errs = append(errs, err)
	}
	if b.Mode == ModeInRoot {
		if err := run.WriteFile(state.InRootMarker, nil, 0o644); err != nil {
			errs = append(errs, err)
		}
	}
	// Encoded into each file rather than marshalled once and copied: the
	// state may carry a large config (docs/security.md, "Memory ceiling").
	encode := func(w io.Writer) error { return state.Encode(w, b.State) }
	private := target.WriteOpts{Perm: 0o600, UID: -1, GID: -1}
	if err := run.WriteFileWith(state.StateFile, private, encode); err != nil {
		errs = append(errs, err)
	}
	if !b.State.Disabled && b.State.InstanceID != "" {
		if err := t.WriteFileWith(state.InstanceDir(b.State.InstanceID)+"/"+state.InstanceStateName, private, encode); err != nil {
			errs = append(errs, err)
		}
	}
	if !b.FetchOnly && (b.Status.BootStatusCode != "" || !b.State.Disabled) {
		if err := WriteStatus(t, run, b.Status); err != nil {
			errs = append(errs, err)
		}
	}
	for _, f := range []struct {
		p string
		b []byte
	}{{state.LogFile, logs}, {state.OutputLogFile, out}} {
		if len(b.Status.Secrets) > 0 {
			f.b = []byte(secret.Scrub(string(f.b), b.Status.Secrets))
		}
		if err := t.WriteFileOpts(f.p, f.b, target.WriteOpts{Perm: 0o640, UID: -1, GID: -1, Append: true, Keep: true}); err != nil {
			errs = append(errs, err)
		}
	}
	if err := t.Sync(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// FailedStages are the failed steps, plus the stages whose status records
// errors, and the error and warning counts of the status.
func (b *Boot) FailedStages(failed []string) (stages []string, errs, warnings int) {
	stages = slices.Clone(failed)
	for _, name := range []string{state.StageInitLocal, state.StageInit} {
		st := b.Status.Get(name)
		for _, msgs := range st.RecoverableErrors {
			warnings += len(msgs)
		}
		if len(st.Errors) > 0 {
			errs += len(st.Errors)
			// The step "local" is init-local's status; "init" is init's.
			if !slices.Contains(stages, name) && !(name == state.StageInitLocal && slices.Contains(stages, "local")) {
				stages = append(stages, name)
			}
		}
	}
	return stages, errs, warnings
}
