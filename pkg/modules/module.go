// Package modules holds cloud-init's config modules (one file each) and the
// runner that applies them with cloud-init's stage lists, frequencies and
// semaphores. A module sees only a Context: the target root, the merged
// cloud-config, the instance's meta-data and the distro; the same code runs
// in the initramfs (root /sysroot), in the agent (root /) and in unit tests
// (root t.TempDir()).
package modules

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/cloudroot/cloudroot/pkg/cilog"
	"github.com/cloudroot/cloudroot/pkg/distro"
	"github.com/cloudroot/cloudroot/pkg/state"
	"github.com/cloudroot/cloudroot/pkg/target"
)

// Stage is where a module runs.
type Stage string

const (
	StageInit   Stage = "init"
	StageConfig Stage = "config"
	StageFinal  Stage = "final"
)

// Module is one cloud-init module.
type Module struct {
	// Name is cloud-init's module name, e.g. "write_files".
	Name string
	// Frequency is the module's default frequency.
	Frequency state.Frequency
	// Keys are the top-level cloud-config keys it owns (for docs and schema).
	Keys []string
	// Distros are cloud-init's distro names the module is verified on
	// (its meta "distros"); nil means all. Elsewhere the stage skips it
	// unless the config lists it in unverified_modules.
	Distros []string
	// ActivateBy is cloud-init's meta "activate_by_schema_keys": when set,
	// the module runs (and takes its semaphore) only if the config has one
	// of these keys; nil means always.
	ActivateBy []string
	// Run applies the module. Errors are recorded and the stage goes on.
	Run func(ctx context.Context, c *Context) error
}

// Context is what a module gets.
type Context struct {
	Root   *target.Root
	Config Config
	// Meta is the datasource's meta-data (instance-id, local-hostname, public-keys...).
	Meta       map[string]any
	InstanceID string
	Distro     distro.Info
	// Datasource is str(DataSource) for messages (final_message).
	Datasource string
	// Log carries the stage attribute (stage=init, modules-config,
	// modules-final, single): the runner's lines do not repeat it.
	Log *slog.Logger
	// Out receives command output (console and cloud-init-output.log).
	Out io.Writer
	// Booted is true when the target is the running system (the agent), so
	// its services can be queried and restarted; false in the initramfs,
	// where nothing in the target runs yet and services read their new
	// configuration when they start.
	Booted bool
	// Console receives what cloud-init writes only to /dev/console (never
	// to a log), such as generated passwords; nil means /dev/console.
	Console io.Writer
	// Now returns the current time; Uptime seconds since boot.
	Now    func() time.Time
	Uptime func() float64
	// Version is cloudroot's version string.
	Version string
	// Warn records a recoverable problem (status.json recoverable_errors);
	// the module has logged it (Context.warn does both).
	Warn func(msg string)
	// Deprecated records a deprecation (level DEPRECATED in
	// recoverable_errors), logged already; nil falls back to Warn.
	Deprecated func(msg string)
	// UserScripts are the user-data shell scripts (name → content) that the
	// init stage writes into instance/scripts.
	UserScripts []Script
	// SetLiveHostname sets the running kernel's hostname (nil: don't).
	SetLiveHostname func(name string) error
	// HostKeys supplies SSH host private keys (nil: generated when asked,
	// blocking on the kernel RNG).
	HostKeys HostKeySource
	// DeferHostKeys takes over host-key types the ssh module could not
	// generate because the kernel RNG was not ready (nil: that is an error).
	DeferHostKeys func(HostKeyDeferral) error
	// BackgroundHostKeys takes over the slow host-key types (RSA) when a
	// fast one (ed25519, ecdsa) is generated now, so sshd need not wait
	// for them (nil: every type is generated now, as cloud-init does).
	BackgroundHostKeys func(HostKeyDeferral) error
	// Power is set by power_state_change for the caller to carry out after
	// the stage has finished and its status is written.
	Power *PowerAction
	// Modules are the implemented modules the runner resolves stage-list
	// and single names in: pkg/modules/builtin's Modules(), or a test's
	// own list. Nil resolves nothing.
	Modules []Module
	// deprecations are the deprecation lines already logged: cloud-init
	// logs each once per process, and a Context is one stage's.
	deprecations map[string]bool
	// Event is the stage's reporting event (cloud-init.log's start:/finish:
	// lines); each module is reported as its child. Nil reports nothing.
	Event *cilog.Event
}

// Script is a user-data script part.
type Script struct {
	Name    string
	Content []byte
}

// InstanceDir is /var/lib/cloud/instances/<iid> for this context.
func (c *Context) InstanceDir() string { return state.InstanceDir(c.InstanceID) }

// Warnf logs a WARNING and records it as a recoverable problem
// (Context.Warn), as a module's LOG.warning does in cloud-init.
func (c *Context) Warnf(format string, args ...any) {
	c.warnAs("", format, args...)
}

// warnAs is warn with the line attributed to logger (cloud-init's file
// name, e.g. "modules.py"); "" leaves the attribution to the handler.
func (c *Context) warnAs(logger, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if c.Log != nil {
		if logger != "" {
			c.Log.Warn(msg, cilog.LoggerKey, logger)
		} else {
			c.Log.Warn(msg)
		}
	}
	if c.Warn != nil {
		c.Warn(msg)
	}
}

// PowerAction is a pending power_state_change.
type PowerAction struct {
	Mode    string        // poweroff, reboot, halt
	Delay   time.Duration // 0 = now
	Message string
	// Condition is the condition command (nil = always true).
	Condition []string
	// ConditionShell is a shell string condition ("" = none).
	ConditionShell string
	// Timeout is how long the command waits for the agent before acting.
	Timeout time.Duration
}

// Options are what NewContext builds a Context from. The zero value
// (with a Root) works: no config, no meta-data, the distro detected from
// the root, problems logged and not kept.
type Options struct {
	// Config is the merged cloud-config.
	Config map[string]any
	// Meta, InstanceID and Datasource describe the instance (the
	// handed-over state's, or the init stage's own).
	Meta       map[string]any
	InstanceID string
	Datasource string
	// Distro is the target's distro (nil: detected from the root's
	// os-release).
	Distro *distro.Info
	Log    *slog.Logger
	Out    io.Writer
	Now    func() time.Time
	Uptime func() float64
	// Version is cloudroot's version string.
	Version string
	// Booted is Context.Booted: the target is the running system.
	Booted bool
	// Status, when set, keeps the stage's recoverable problems (WARNING
	// and DEPRECATED); the modules have logged them already.
	Status *state.StageStatus
	// Event is the stage's reporting event (nil: none).
	Event *cilog.Event
	// Modules is Context.Modules: the implemented modules, assembled by
	// pkg/modules/builtin (which imports every family; this package
	// cannot).
	Modules []Module
}

// NewContext is the one constructor of a module Context, used by every
// stage and command that runs modules; the caller sets the hooks only it
// has (SetLiveHostname, HostKeys, DeferHostKeys) on the result.
func NewContext(root *target.Root, o Options) *Context {
	c := &Context{
		Root:       root,
		Config:     Config(o.Config),
		Meta:       o.Meta,
		InstanceID: o.InstanceID,
		Datasource: o.Datasource,
		Log:        o.Log,
		Out:        o.Out,
		Now:        o.Now,
		Uptime:     o.Uptime,
		Version:    o.Version,
		Booted:     o.Booted,
		Event:      o.Event,
		Modules:    o.Modules,
	}
	if o.Distro != nil {
		c.Distro = *o.Distro
	} else {
		c.Distro = distro.Detect(root.ReadFile)
	}
	if st := o.Status; st != nil {
		c.Warn = func(m string) { st.AddRecoverable("WARNING", m) }
		c.Deprecated = func(m string) { st.AddRecoverable("DEPRECATED", m) }
	}
	return c
}
