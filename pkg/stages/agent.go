package stages

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"sort"
	"time"

	"github.com/cloudroot/cloudroot/pkg/cilog"
	"github.com/cloudroot/cloudroot/pkg/cloudcfg"
	"github.com/cloudroot/cloudroot/pkg/modules"
	modbuiltin "github.com/cloudroot/cloudroot/pkg/modules/builtin"
	"github.com/cloudroot/cloudroot/pkg/state"
	"github.com/cloudroot/cloudroot/pkg/target"
)

// AgentOptions is what the in-root agent stage needs.
type AgentOptions struct {
	Root *target.Root // "/" in the booted system
	// Log carries the stage attribute (stage=modules-config, ...): every
	// line of the stage names it once.
	Log     *slog.Logger
	Out     io.Writer
	Now     func() time.Time
	Uptime  func() float64
	Version string
	// Secrets, if set, is told the credentials of the handed-over state
	// (SecretValues) before any module runs, for the caller's log and
	// console writers.
	Secrets func([]string)
	// Files are configs given with --file, highest priority first: they
	// override the handed-over merged config (cloud-init's extract_fns).
	Files []map[string]any
	// NoStatus leaves status.json alone (`modules --mode init` is not a
	// boot stage in cloud-init and is not recorded).
	NoStatus bool
}

// config is the handed-over merged config with the --file configs on top.
func (o AgentOptions) config(base map[string]any) map[string]any {
	if len(o.Files) == 0 {
		return base
	}
	srcs := []map[string]any{base}
	for i := len(o.Files) - 1; i >= 0; i-- {
		srcs = append(srcs, o.Files[i])
	}
	return cloudcfg.MergeSources(srcs...)
}

// ErrDisabled means provisioning is disabled for this boot.
var ErrDisabled = errors.New("cloud-init is disabled for this boot")

// LoadState reads this boot's hand-off from /run/cloud-init.
func LoadState(r *target.Root) (*state.State, error) {
	b, err := r.ReadFile(state.StateFile)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: %w", state.StateFile, state.ErrNoState)
		}
		return nil, fmt.Errorf("read %s: %w", state.StateFile, err)
	}
	return state.Unmarshal(b)
}

// Modules runs the config or final stage from the handed-over state and
// updates status.json (and result.json after final). It returns the stage's
// errors and the pending power action, if any. A missing or unreadable state
// is recorded in status.json as the stage's error.
func Modules(ctx context.Context, o AgentOptions, mode modules.Stage) (errs []string, power *modules.PowerAction, err error) {
	r := o.Root
	stageName := map[modules.Stage]string{modules.StageInit: state.StageInit, modules.StageConfig: state.StageModulesConfig, modules.StageFinal: state.StageModulesFinal}[mode]
	if stageName == "" {
		return nil, nil, fmt.Errorf("unknown mode %q (want init, config or final)", mode)
	}
	writeStatus := func(st *state.Status) error {
		if o.NoStatus {
			return nil
		}
		return WriteStatus(r, r, st)
	}
	st := ReadStatus(r)
	s, lerr := LoadState(r)
	if lerr == nil && s.Disabled {
		return nil, nil, ErrDisabled
	}
	if lerr == nil {
		st.Secrets = SecretValues(s)
		if o.Secrets != nil {
			o.Secrets(st.Secrets)
		}
	}
	stage := st.Get(stageName)
	start := o.Uptime()
	ev := cilog.StartStage(o.Log, stageName, o.Version, o.Now, start)
	stage.Start = &start
	stage.Finished = nil
	stage.Errors = []string{}
	stage.RecoverableErrors = map[string][]string{}
	st.Stage = stageName
	if werr := writeStatus(st); werr != nil {
		o.Log.Error("write status", "err", werr)
	}
	finish := func() {
		if len(stage.Errors) > 0 {
			ev.Fail()
		}
		ev.Finish()
		end := o.Uptime()
		stage.Finished = &end
		st.Stage = ""
		if werr := writeStatus(st); werr != nil {
			o.Log.Error("write status", "err", werr)
		}
		if mode == modules.StageFinal && !o.NoStatus {
			res := &state.Result{Datasource: st.Datasource, RecoverableErrors: map[string][]string{}, Secrets: st.Secrets}
			for _, n := range state.Stages {
				ss := st.Get(n)
				res.Errors = append(res.Errors, ss.Errors...)
				for lvl, msgs := range ss.RecoverableErrors {
					res.RecoverableErrors[lvl] = append(res.RecoverableErrors[lvl], msgs...)
				}
			}
			if werr := WriteResult(r, r, res); werr != nil {
				o.Log.Error("write result", "err", werr)
			}
		}
	}
	if lerr != nil {
		msg := fmt.Sprintf("cloudroot: no usable state for this boot: %v", lerr)
		stage.Errors = append(stage.Errors, msg)
		finish()
		return stage.Errors, nil, lerr
	}
	mc := o.moduleContext(s, stage, ev)
	rep := modules.RunStage(ctx, mc, mode)
	stage.Errors = append(stage.Errors, rep.Errors...)
	names := make([]string, 0, len(rep.Durations))
	for n := range rep.Durations {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		o.Log.Debug("module timing", "module", n, "duration", rep.Durations[n])
	}
	finish()
	return stage.Errors, mc.Power, nil
}

// Single runs one module by hand from the handed-over state (`cloud-init
// single`); see modules.RunSingle. status.json is not touched, as in
// cloud-init. A missing state is an error: there is no datasource to trust.
func Single(ctx context.Context, o AgentOptions, name string, freq state.Frequency) (modules.SingleResult, *modules.PowerAction, error) {
	r := o.Root
	s, err := LoadState(r)
	if err != nil {
		return modules.SingleResult{}, nil, err
	}
	ev := cilog.StartStage(o.Log, "single", o.Version, o.Now, o.Uptime())
	defer ev.Finish()
	// Logged by the module runner; `single` records no status, so
	// nothing keeps them (cloud-init's main_single writes none).
	mc := o.moduleContext(s, nil, ev)
	res, err := modules.RunSingle(ctx, mc, name, freq)
	if err != nil {
		ev.Fail()
	}
	return res, mc.Power, err
}

// moduleContext is the modules' Context in the booted root, from the
// handed-over state; stage (nil: none) keeps the recoverable problems.
func (o AgentOptions) moduleContext(s *state.State, stage *state.StageStatus, ev *cilog.Event) *modules.Context {
	return modules.NewContext(o.Root, modules.Options{
		Config:     o.config(s.Config),
		Meta:       s.MetaData,
		InstanceID: s.InstanceID,
		Datasource: s.Datasource.Description,
		Log:        o.Log,
		Out:        o.Out,
		Now:        o.Now,
		Uptime:     o.Uptime,
		Version:    o.Version,
		Booted:     true,
		Status:     stage,
		Event:      ev,
		Modules:    modbuiltin.Modules(),
	})
}
