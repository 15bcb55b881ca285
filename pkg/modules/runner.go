package modules

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/cloudroot/cloudroot/pkg/cilog"
	"github.com/cloudroot/cloudroot/pkg/state"
)

// Registry is every module cloudroot implements, in no particular order.
// Stage order comes from the cloud_*_modules lists.
func Registry() []Module {
	return append([]Module{
		Bootcmd, WriteFiles, Growpart, Resizefs, DiskSetup, Mounts, SetHostname, UpdateHostname, UpdateEtcHosts, UsersGroups, SSH,
		SetPasswords, Timezone, Locale, NTP, CACerts, Keyboard, SeedRandom, ResolvConf, Rsyslog,
		AptPipelining, AptConfigure, YumAddRepo, ZypperAddRepo, ApkConfigure, Runcmd,
		PackageUpdateUpgradeInstall,
		WriteFilesDeferred, ScriptsVendor, ScriptsPerOnce, ScriptsPerBoot, ScriptsPerInstance, ScriptsUser,
		SSHAuthkeyFingerprints, KeysToConsole, PhoneHome, FinalMessage, PowerStateChange,
		Ansible, SaltMinion, Mcollective, Puppet, Chef,
	}, vendorModules()...)
}

// DefaultStageLists are cloud-init's Debian lists (config/cloud.cfg.tmpl,
// 26.2), used when the merged config has no cloud_*_modules key.
var DefaultStageLists = map[Stage][]string{
	StageInit: {"seed_random", "bootcmd", "write_files", "growpart", "resizefs", "disk_setup", "mounts",
		"set_hostname", "update_hostname", "update_etc_hosts", "ca_certs", "rsyslog", "users_groups", "ssh", "set_passwords"},
	StageConfig: {"snap", "ssh_import_id", "keyboard", "locale", "grub_dpkg", "apt_pipelining", "apt_configure",
		"ntp", "timezone", "disable_ec2_metadata", "runcmd", "byobu"},
	StageFinal: {"package_update_upgrade_install", "fan", "landscape", "lxd", "write_files_deferred", "puppet",
		"chef", "ansible", "mcollective", "salt_minion", "reset_rmc", "scripts_vendor", "scripts_per_once",
		"scripts_per_boot", "scripts_per_instance", "scripts_user", "ssh_authkey_fingerprints", "keys_to_console",
		"install_hotplug", "phone_home", "final_message", "power_state_change"},
}

// modulesPy is the file cloud-init logs a stage's module selection under
// (cloudinit/config/modules.py).
const modulesPy = "modules.py"

// Entry is one item of a cloud_*_modules list.
type Entry struct {
	Name      string
	Frequency state.Frequency // "" = module default
}

// CanonicalName normalises "cc_write-files" to "write_files".
func CanonicalName(n string) string {
	n = strings.TrimSpace(strings.ReplaceAll(n, "-", "_"))
	return strings.TrimPrefix(n, "cc_")
}

// StageList reads the list for stage from cfg (cloud_init_modules,
// cloud_config_modules, cloud_final_modules), falling back to the defaults.
// Items are names, [name, frequency] or {name:, frequency:}.
func StageList(cfg Config, stage Stage) ([]Entry, []string) {
	key := map[Stage]string{StageInit: "cloud_init_modules", StageConfig: "cloud_config_modules", StageFinal: "cloud_final_modules"}[stage]
	raw, ok := cfg[key].([]any)
	if !ok {
		var out []Entry
		for _, n := range DefaultStageLists[stage] {
			out = append(out, Entry{Name: n})
		}
		return out, nil
	}
	var out []Entry
	var problems []string
	for i, it := range raw {
		var e Entry
		var freq string
		switch t := it.(type) {
		case string:
			e.Name = t
		case []any:
			if len(t) > 0 {
				e.Name = scalarString(t[0])
			}
			if len(t) > 1 {
				freq = scalarString(t[1])
			}
		case map[string]any:
			e.Name = scalarString(t["name"])
			freq = scalarString(t["frequency"])
		}
		if e.Name == "" {
			problems = append(problems, fmt.Sprintf("%s[%d]: unrecognised module entry %v", key, i, it))
			continue
		}
		e.Name = CanonicalName(e.Name)
		if freq != "" {
			f, ok := state.ParseFrequency(freq)
			if !ok {
				problems = append(problems, fmt.Sprintf("%s[%d]: unknown frequency %q for %s", key, i, freq, e.Name))
			}
			e.Frequency = f
		}
		out = append(out, e)
	}
	return out, problems
}

// Report is what one stage did.
type Report struct {
	Ran     []string
	Skipped []string
	// Errors are module failures ("Running module X failed: ...").
	Errors []string
	// Durations per module that ran, in seconds.
	Durations map[string]float64
	// Starts per module that ran, in seconds since boot (Context.Uptime).
	Starts map[string]float64
}

// atMostOnce are the modules that run user code or may reboot the machine.
// Their semaphore is on disk before they start: a power cut while they run
// never runs them again (cloud-init's behaviour, and no reboot loop when a
// user script reboots). Every other module's semaphore is written after it
// ran, behind a durability barrier, so a cut re-runs it rather than leaving
// a semaphore without the module's files (those modules are idempotent).
var atMostOnce = map[string]bool{
	"scripts_vendor": true, "scripts_per_instance": true, "scripts_per_once": true,
	"scripts_user": true, "power_state_change": true, "package_update_upgrade_install": true,
}

// RunStage runs a stage's modules in order with cloud-init's frequency
// semantics: per-instance modules run once per instance-id (semaphore
// instances/<iid>/sem/config_<name>), per-once ever (sem/config_<name>.once),
// always every time. A failed module keeps its semaphore and is not retried
// on the next boot (as in cloud-init). A failing module is recorded and the
// next one runs.
//
// Semaphores and power cuts: a module's semaphore never reaches the disk
// before its effects. The semaphores of the modules that ran are written
// together after one barrier (Root.Sync) at the end of the stage, except
// for atMostOnce modules, whose semaphore is made durable (with everything
// before it) before they start. A cut thus re-runs an idempotent module
// (at least once) and never re-runs a user script (at most once); a user
// script's module is followed by a barrier too, so what a finished script
// wrote survives a later cut.
func RunStage(ctx context.Context, c *Context, stage Stage) Report {
	rep := Report{Durations: map[string]float64{}, Starts: map[string]float64{}}
	var pending []semWrite
	entries, problems := StageList(c.Config, stage)
	for _, p := range problems {
		c.warn("%s", p)
	}
	plan := planStage(c, entries)
	rep.Skipped = append(rep.Skipped, plan.skipped...)
	for _, n := range plan.notes {
		c.Log.Info(n, cilog.LoggerKey, modulesPy)
	}
	for _, p := range plan.run {
		m, freq := p.m, p.freq
		// cloud-init reports every module it considers, one that already
		// ran included ("config-NAME" under the stage's event).
		ev := c.Event.StartModule(m.Name, string(freq))
		sem := state.SemaphorePath(c.InstanceID, m.Name, freq)
		if sem != "" && c.Root.Exists(sem) {
			c.Log.Debug("module already ran", "module", m.Name, "frequency", string(freq), "path", sem)
			rep.Skipped = append(rep.Skipped, m.Name)
			ev.Finish()
			continue
		}
		if sem != "" {
			w := semWrite{module: m.Name, path: sem, body: fmt.Sprintf("%d: %f\n", os.Getpid(), float64(c.Now().UnixNano())/1e9)}
			if atMostOnce[m.Name] {
				if !c.commitSems(&rep, append(pending, w), true) {
					pending = nil
					ev.Fail()
					ev.Finish()
					continue
				}
				pending = nil
			} else {
				pending = append(pending, w)
			}
		}
		start := time.Now()
		if c.Uptime != nil {
			rep.Starts[m.Name] = c.Uptime()
		}
		c.Log.Info("running module", "module", m.Name, "frequency", string(freq))
		err := runModule(ctx, c, m)
		if sem != "" && atMostOnce[m.Name] && c.Root.DeferredSync() {
			// What the user's code wrote is on disk before the next module:
			// a cut after a script finished does not lose its effects
			// (it would not run again).
			if serr := c.Root.Sync(); serr != nil {
				c.Log.Warn("durability barrier after the module", "module", m.Name, "err", serr)
			}
		}
		d := time.Since(start).Seconds()
		rep.Durations[m.Name] = d
		rep.Ran = append(rep.Ran, m.Name)
		if err != nil {
			msg := fmt.Sprintf("Running module %s (%s) failed: %v", m.Name, "cc_"+m.Name, err)
			c.Log.Error(msg, "module", m.Name, "duration", d)
			rep.Errors = append(rep.Errors, msg)
			ev.Fail()
			ev.Finish()
			continue
		}
		c.Log.Info("finished module", "module", m.Name, "duration", d)
		ev.Finish()
	}
	c.commitSems(&rep, pending, false)
	return rep
}

// plannedModule is a module a stage runs, with its frequency.
type plannedModule struct {
	m    Module
	freq state.Frequency
}

// stagePlan is what a stage does with its list.
type stagePlan struct {
	run     []plannedModule
	skipped []string
	// notes are the INFO lines cloud-init logs (modules.py) about the
	// modules it leaves out or forces, before any module runs.
	notes []string
}

// planStage is cloud-init's run_section selection: every entry is
// resolved (a name cloudroot does not know is skipped), then the modules
// whose activation keys are all absent from the config and those not
// verified on this distro are left out, each group named in one line,
// as are the ones unverified_modules forces.
func planStage(c *Context, entries []Entry) stagePlan {
	byName := map[string]Module{}
	for _, m := range Registry() {
		byName[m.Name] = m
	}
	var plan stagePlan
	var inapplicable, unverified, forced []string
	for _, e := range entries {
		m, ok := byName[e.Name]
		if !ok {
			c.Log.Debug("module not implemented", "module", e.Name)
			plan.skipped = append(plan.skipped, e.Name)
			continue
		}
		if !isActive(c.Config, m) {
			inapplicable = append(inapplicable, m.Name)
			plan.skipped = append(plan.skipped, m.Name)
			continue
		}
		if !verifiedOn(c, m) {
			unverified = append(unverified, m.Name)
			plan.skipped = append(plan.skipped, m.Name)
			continue
		}
		if !verified(c, m) {
			forced = append(forced, m.Name)
		}
		freq := m.Frequency
		if e.Frequency != "" {
			freq = e.Frequency
		}
		plan.run = append(plan.run, plannedModule{m, freq})
	}
	if len(inapplicable) > 0 {
		plan.notes = append(plan.notes, fmt.Sprintf("Skipping modules '%s' because no applicable config is provided.", strings.Join(inapplicable, ",")))
	}
	if len(unverified) > 0 {
		plan.notes = append(plan.notes, fmt.Sprintf("Skipping modules '%s' because they are not verified on distro '%s'.  To run anyway, add them to 'unverified_modules' in config.", strings.Join(unverified, ","), distroName(c)))
	}
	if len(forced) > 0 {
		plan.notes = append(plan.notes, fmt.Sprintf("running unverified_modules: '%s'", strings.Join(forced, ", ")))
	}
	return plan
}

// semWrite is a semaphore to take.
type semWrite struct{ module, path, body string }

// commitSems makes what the stage wrote so far durable, then writes sems
// (and, with after, makes them durable too). A semaphore that cannot be
// written is a module error; it reports whether the last one was written.
func (c *Context) commitSems(rep *Report, sems []semWrite, after bool) bool {
	if len(sems) == 0 {
		return true
	}
	if c.Root.DeferredSync() {
		if err := c.Root.Sync(); err != nil {
			c.Log.Warn("durability barrier before the semaphores", "err", err)
		}
	}
	ok := true
	for _, w := range sems {
		ok = true
		if err := c.Root.WriteFile(w.path, []byte(w.body), 0o644); err != nil {
			rep.Errors = append(rep.Errors, fmt.Sprintf("Running module %s failed: semaphore %s: %v", w.module, w.path, err))
			ok = false
		}
	}
	if after && c.Root.DeferredSync() {
		if err := c.Root.Sync(); err != nil {
			c.Log.Warn("durability barrier after the semaphores", "err", err)
		}
	}
	return ok
}

// runModule runs m with c.Log naming the module, so its lines are
// attributed to it (cc_NAME.py in cloud-init.log).
func runModule(ctx context.Context, c *Context, m Module) error {
	base := c.Log
	if base != nil {
		c.Log = base.With("module", m.Name)
		defer func() { c.Log = base }()
	}
	return runSafely(ctx, c, m)
}

// runSafely runs a module, turning a panic into an error so that one broken
// module never stops the boot.
func runSafely(ctx context.Context, c *Context, m Module) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic in module %s: %v", m.Name, r)
		}
	}()
	return m.Run(ctx, c)
}

// distroName is cloud-init's distro name (cloud.distro.name): the merged
// config's system_info.distro, as the image's cloud.cfg sets it, else the
// variant of the target's os-release.
func distroName(c *Context) string {
	if si, ok := c.Config["system_info"].(map[string]any); ok {
		if d := scalarString(si["distro"]); d != "" {
			return d
		}
	}
	return c.Distro.Variant()
}

// verified reports whether m is verified on c's distro (its Distros
// list it, or it has none).
func verified(c *Context, m Module) bool {
	return len(m.Distros) == 0 || slices.Contains(m.Distros, distroName(c))
}

// verifiedOn reports whether m may run on c's distro: it is verified there,
// or the config forces it through unverified_modules.
func verifiedOn(c *Context, m Module) bool { return verified(c, m) || forcedUnverified(c, m) }

// forcedUnverified reports whether the config's unverified_modules forces
// m to run on a distro it is not verified on.
func forcedUnverified(c *Context, m Module) bool {
	for _, n := range stringList(c.Config["unverified_modules"]) {
		if CanonicalName(n) == m.Name {
			return true
		}
	}
	return false
}

// isActive is cloud-init's _is_active: a module with activation keys runs
// only when the merged config has one of them, whatever its value (null
// included); one without runs always.
func isActive(cfg Config, m Module) bool {
	if len(m.ActivateBy) == 0 {
		return true
	}
	for _, k := range m.ActivateBy {
		if cfg.Has(k) {
			return true
		}
	}
	return false
}

// SingleResult is what RunSingle did.
type SingleResult struct {
	Found   bool // a module of that name is registered
	Ran     bool // its handler ran (false: its semaphore said it already had)
	Skipped bool // it ran but found none of its keys (cloud-init's handler returns)
}

// RunSingle runs one module by hand as `cloud-init single --name` does
// (Modules.run_single): by any spelling of its name, with freq (if not
// empty) in place of its default frequency, under the semaphore of that
// frequency ("config_NAME"), regardless of the stage lists, distro and
// activation (a module whose keys are absent returns at once, as
// cloud-init's handlers do). The error is the module's failure.
func RunSingle(ctx context.Context, c *Context, name string, freq state.Frequency) (SingleResult, error) {
	var m Module
	var res SingleResult
	for _, r := range Registry() {
		if r.Name == CanonicalName(name) {
			m, res.Found = r, true
			break
		}
	}
	if !res.Found {
		return res, nil
	}
	if freq == "" {
		freq = m.Frequency
	}
	ev := c.Event.StartModule(m.Name, string(freq))
	defer ev.Finish()
	if sem := state.SemaphorePath(c.InstanceID, m.Name, freq); sem != "" {
		if c.Root.Exists(sem) {
			c.Log.Debug(fmt.Sprintf("config-%s already ran (freq=%s)", m.Name, freq), "module", m.Name)
			ev.SetMessage(fmt.Sprintf("config-%s previously ran", m.Name))
			return res, nil
		}
		body := fmt.Sprintf("%d: %f\n", os.Getpid(), float64(c.Now().UnixNano())/1e9)
		if err := c.Root.WriteFile(sem, []byte(body), 0o644); err != nil {
			ev.Fail()
			return res, fmt.Errorf("semaphore %s: %w", sem, err)
		}
	}
	res.Ran = true
	if !isActive(c.Config, m) {
		c.Log.Debug(fmt.Sprintf("Skipping module named %s, no '%s' key in configuration", m.Name, m.ActivateBy[0]), "module", m.Name)
		res.Skipped = true
		return res, nil
	}
	c.Log.Info("running module", "module", m.Name, "frequency", string(freq))
	if err := runModule(ctx, c, m); err != nil {
		ev.Fail()
		return res, err
	}
	return res, nil
}
