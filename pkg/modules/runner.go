package modules

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/cloudroot/cloudroot/pkg/cilog"
	"github.com/cloudroot/cloudroot/pkg/internal/pyval"
	"github.com/cloudroot/cloudroot/pkg/state"
)

// Core are the modules that live in this package, in no particular
// order; pkg/modules/builtin adds the families' to them. Stage order
// comes from the cloud_*_modules lists.
func Core() []Module {
	return append([]Module{
		Bootcmd, WriteFiles, SetHostname, UpdateHostname, UpdateEtcHosts,
		Locale, CACerts, Keyboard, SeedRandom, ResolvConf, Rsyslog,
		Runcmd,
		WriteFilesDeferred, ScriptsVendor, ScriptsPerOnce, ScriptsPerBoot, ScriptsPerInstance, ScriptsUser,
		PhoneHome, FinalMessage, PowerStateChange,
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

// helpersPy is the file cloud-init logs a semaphore's verdict under
// (cloudinit/helpers.py: "config-NAME already ran (freq=F)").
const helpersPy = "helpers.py"

// Entry is one item of a cloud_*_modules list (cloud-init's _read_modules).
type Entry struct {
	// Name is the name as listed, stripped of surrounding space
	// (cloud-init's raw_name): it names the module in the log lines about
	// the list, its reporting event and its semaphore (config_cc_ntp for
	// "cc_ntp"), as in cloud-init.
	Name string
	// Frequency is the frequency as listed ("" = module default); one
	// cloud-init does not know is reported when the list is resolved.
	Frequency string
}

// CanonicalName normalises a listed name the way cloud-init's
// form_module_name does, without its "cc_" prefix: "cc_write-files" and
// "write_files.py" are "write_files". Case is kept ("NTP" is no module).
func CanonicalName(n string) string {
	n = strings.ReplaceAll(n, "-", "_")
	if strings.HasSuffix(strings.ToLower(n), ".py") {
		n = n[:len(n)-3]
	}
	return strings.TrimPrefix(strings.TrimSpace(n), "cc_")
}

// StageList reads the list for stage from cfg (cloud_init_modules,
// cloud_config_modules, cloud_final_modules) as cloud-init's _read_modules
// does; without the key, cloud-init's Debian lists apply (cloudroot's base
// configuration). A key whose value is empty or null lists nothing; a
// string lists its characters (Python iterates it). Items are names,
// [name, frequency, args...] or {name:, frequency:, args:}; empty items and
// a mapping without name are passed over. The error is the exception with
// which cloud-init fails the whole stage (nothing of it runs): an item of
// another type, a name or frequency that is not a string, a value that
// cannot be iterated.
func StageList(cfg Config, stage Stage) ([]Entry, error) {
	key := map[Stage]string{StageInit: "cloud_init_modules", StageConfig: "cloud_config_modules", StageFinal: "cloud_final_modules"}[stage]
	v, present := cfg[key]
	if !present {
		var out []Entry
		for _, n := range DefaultStageLists[stage] {
			out = append(out, Entry{Name: n})
		}
		return out, nil
	}
	var raw []any
	switch t := v.(type) {
	case []any:
		raw = t
	case string:
		for _, r := range t {
			raw = append(raw, string(r))
		}
	case map[string]any:
		// Python would iterate its keys in their YAML order, which the
		// decoded config does not keep: refused, not guessed.
		if len(t) > 0 {
			return nil, fmt.Errorf("%s: a mapping is not a module list", key)
		}
	default:
		if pyval.Truthy(v) {
			return nil, fmt.Errorf("'%s' object is not iterable", pyval.TypeName(v))
		}
	}
	// str is Python's item.strip() on a value that must be a string.
	str := func(v any) (string, error) {
		s, ok := v.(string)
		if !ok {
			return "", fmt.Errorf("'%s' object has no attribute 'strip'", pyval.TypeName(v))
		}
		return strings.TrimSpace(s), nil
	}
	var out []Entry
	for _, it := range raw {
		if !pyval.Truthy(it) {
			continue
		}
		var e Entry
		var err error
		switch t := it.(type) {
		case string:
			e.Name = strings.TrimSpace(t)
		case []any:
			if e.Name, err = str(t[0]); err == nil && len(t) > 1 {
				e.Frequency, err = str(t[1])
			}
		case map[string]any:
			n, ok := t["name"]
			if !ok {
				continue
			}
			if e.Name, err = str(n); err == nil {
				if f, ok := t["frequency"]; ok {
					e.Frequency, err = str(f)
				}
			}
		default:
			err = fmt.Errorf("Failed to read '%s' item in config, unknown type %s", pyval.Str(it), pyval.TypeName(it))
		}
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

// Report is what one stage did.
type Report struct {
	// Ran are the modules that ran (module names, as in Durations).
	Ran []string
	// Skipped are the entries left out or stopped by their semaphore,
	// by the name they are listed under.
	Skipped []string
	// Errors are module failures ("Running module X failed: ...") or the
	// error of a list cloud-init cannot read (then nothing ran).
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
	entries, err := StageList(c.Config, stage)
	if err != nil {
		// cloud-init's run_section raises: the stage fails, nothing runs.
		c.Log.Error("failed stage "+stageMode[stage], "err", err)
		rep.Errors = append(rep.Errors, err.Error())
		return rep
	}
	plan := planStage(c, entries)
	rep.Skipped = append(rep.Skipped, plan.skipped...)
	for _, p := range plan.run {
		m, name, freq := p.m, p.name, p.freq
		// cloud-init reports every module it considers, one that already
		// ran included ("config-NAME" under the stage's event).
		ev := c.Event.StartModule(name, string(freq))
		sem := p.semaphore(c.InstanceID)
		if sem != "" && c.Root.Exists(sem) {
			c.Log.Debug(fmt.Sprintf("config-%s already ran (freq=%s)", name, freq), cilog.LoggerKey, helpersPy, "path", sem)
			rep.Skipped = append(rep.Skipped, name)
			ev.Finish()
			continue
		}
		if sem != "" {
			w := semWrite{module: name, path: sem, body: fmt.Sprintf("%d: %f\n", os.Getpid(), float64(c.Now().UnixNano())/1e9)}
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
			msg := fmt.Sprintf("Running module %s (%s) failed: %v", name, "cc_"+m.Name, err)
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

// stageMode is cloud-init's name for the stage whose module list fails
// (status_wrapper's "failed stage %s").
var stageMode = map[Stage]string{StageInit: "init", StageConfig: "modules-config", StageFinal: "modules-final"}

// plannedModule is a module a stage runs, with its frequency and the
// name it was listed under (cloud-init's raw_name).
type plannedModule struct {
	m    Module
	name string
	freq state.Frequency
}

// semaphore is where p's semaphore lives ("" for always): cloud-init
// names it after the listed name, config_cc_ntp for "cc_ntp".
func (p plannedModule) semaphore(iid string) string {
	return state.SemaphorePath(iid, "config-"+p.name, p.freq)
}

// stagePlan is what a stage does with its list.
type stagePlan struct {
	run     []plannedModule
	skipped []string
}

// removedModules are the names cloud-init drops with an INFO line
// (modules.py REMOVED_MODULES, verbatim: its "….py" entry never matches a
// normalised name, so that module gets the "Could not find" warning).
var removedModules = []string{"cc_emit_upstart", "cc_refresh_rmc_and_interface.py", "cc_migrator", "cc_rightscale_userdata"}

// renamedModules are the old names cloud-init maps to new ones, with a
// deprecation (modules.py RENAMED_MODULES).
var renamedModules = map[string]string{"cc_ubuntu_advantage": "cc_ubuntu_pro"}

// listFrequencies are the frequencies a module list may name
// (cloudinit.settings.FREQUENCIES, matched exactly).
var listFrequencies = map[string]state.Frequency{"once-per-instance": state.PerInstance, "always": state.PerAlways, "once": state.PerOnce}

// resolve is cloud-init's _fixup_modules: each entry's name is normalised
// (form_module_name) and looked up. A frequency cloud-init does not know
// is a deprecation and the module's default is used; ubuntu_advantage
// becomes ubuntu_pro with a deprecation; a removed module is an INFO line
// and one that does not exist a WARNING (a recoverable error), and
// neither runs.
func resolve(c *Context, entries []Entry) []plannedModule {
	byName := map[string]Module{}
	for _, m := range c.Modules {
		byName["cc_"+m.Name] = m
	}
	var out []plannedModule
	for _, e := range entries {
		canon := CanonicalName(e.Name)
		if canon == "" {
			continue
		}
		mod := "cc_" + canon
		freq, known := listFrequencies[e.Frequency]
		if e.Frequency != "" && !known {
			c.Deprecate(fmt.Sprintf("Config specified module %s has an unknown frequency %s", e.Name, e.Frequency), "22.1", "")
		}
		if to, ok := renamedModules[mod]; ok {
			c.Deprecate(fmt.Sprintf("Module has been renamed from %s to %s. Update any references in /etc/cloud/cloud.cfg", mod, to), "24.1", "")
			mod = to
		}
		m, ok := byName[mod]
		if !ok {
			if slices.Contains(removedModules, mod) {
				c.Log.Info(fmt.Sprintf("Module `%s` has been removed from cloud-init. It may be removed from `/etc/cloud/cloud.cfg`.", mod[3:]), cilog.LoggerKey, modulesPy)
			} else {
				c.warnAs(modulesPy, "%s", notFound(mod))
			}
			continue
		}
		if freq == "" {
			freq = m.Frequency
		}
		out = append(out, plannedModule{m: m, name: e.Name, freq: freq})
	}
	return out
}

// notFound is cloud-init's warning for a module name it cannot import
// (importer.find_module searched the bare name and cloudinit.config's).
func notFound(mod string) string {
	return fmt.Sprintf("Could not find module named %s (searched ['%s', 'cloudinit.config.%s'])", mod, mod, mod)
}

// planStage is cloud-init's run_section selection: the entries are
// resolved, then the modules whose activation keys are all absent from
// the config and those not verified on this distro (unless
// unverified_modules lists them by the name they are listed under) are
// left out, each group named in one INFO line (modules.py), as are the
// ones unverified_modules forces.
func planStage(c *Context, entries []Entry) stagePlan {
	var plan stagePlan
	var inapplicable, unverified, forced []string
	for _, p := range resolve(c, entries) {
		m := p.m
		if !isActive(c.Config, m) {
			inapplicable = append(inapplicable, p.name)
			plan.skipped = append(plan.skipped, p.name)
			continue
		}
		if !verified(c, m) {
			if !slices.Contains(stringList(c.Config["unverified_modules"]), p.name) {
				unverified = append(unverified, p.name)
				plan.skipped = append(plan.skipped, p.name)
				continue
			}
			forced = append(forced, p.name)
		}
		plan.run = append(plan.run, p)
	}
	note := func(msg string) { c.Log.Info(msg, cilog.LoggerKey, modulesPy) }
	if len(inapplicable) > 0 {
		note(fmt.Sprintf("Skipping modules '%s' because no applicable config is provided.", strings.Join(inapplicable, ",")))
	}
	if len(unverified) > 0 {
		note(fmt.Sprintf("Skipping modules '%s' because they are not verified on distro '%s'.  To run anyway, add them to 'unverified_modules' in config.", strings.Join(unverified, ","), c.DistroName()))
	}
	if len(forced) > 0 {
		note(fmt.Sprintf("running unverified_modules: '%s'", strings.Join(forced, ", ")))
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

// DistroName is cloud-init's distro name (cloud.distro.name): the merged
// config's system_info.distro, as the image's cloud.cfg sets it, else the
// variant of the target's os-release.
func (c *Context) DistroName() string {
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
	return len(m.Distros) == 0 || slices.Contains(m.Distros, c.DistroName())
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
	Found bool // the name resolves to a module
	Ran   bool // its handler ran (false: its semaphore said it already had)
}

// RunSingle runs one module by hand as `cloud-init single --name` does
// (Modules.run_single): the name is resolved as a list entry is (any
// spelling, ubuntu_advantage renamed, a removed or unknown name logged and
// not run), freq (if not empty) replaces the module's default, and the
// semaphore is that frequency's, named after name as given
// (config_cc_ntp for "cc_ntp"). Neither the stage lists, nor the distro,
// nor the activation keys are consulted: a module whose keys are absent
// runs, and its handler does what cloud-init's does without them (most
// return at once). The error is the module's failure.
func RunSingle(ctx context.Context, c *Context, name string, freq state.Frequency) (SingleResult, error) {
	var res SingleResult
	plan := resolve(c, []Entry{{Name: name, Frequency: string(freq)}})
	if len(plan) == 0 {
		return res, nil
	}
	res.Found = true
	p := plan[0]
	// The name as given, not stripped (cloud-init's run_single).
	p.name = name
	m := p.m
	ev := c.Event.StartModule(p.name, string(p.freq))
	defer ev.Finish()
	if sem := p.semaphore(c.InstanceID); sem != "" {
		if c.Root.Exists(sem) {
			c.Log.Debug(fmt.Sprintf("config-%s already ran (freq=%s)", p.name, p.freq), cilog.LoggerKey, helpersPy, "path", sem)
			ev.SetMessage(fmt.Sprintf("config-%s previously ran", p.name))
			return res, nil
		}
		body := fmt.Sprintf("%d: %f\n", os.Getpid(), float64(c.Now().UnixNano())/1e9)
		if err := c.Root.WriteFile(sem, []byte(body), 0o644); err != nil {
			ev.Fail()
			return res, fmt.Errorf("semaphore %s: %w", sem, err)
		}
	}
	res.Ran = true
	c.Log.Info("running module", "module", m.Name, "frequency", string(p.freq))
	if err := runModule(ctx, c, m); err != nil {
		ev.Fail()
		return res, err
	}
	return res, nil
}

// SingleVerdict is how `cloud-init single` ends (main_single): a module
// that failed is "Ran NAME but it failed!", a name that resolved to no
// module "Did not run NAME, does it exist?" (both WARNING lines of
// main.py, exit 1); otherwise no line and exit 0, whether the module ran or
// its semaphore said it already had.
func SingleVerdict(name string, res SingleResult, err error) (warning string, exit int) {
	switch {
	case err != nil:
		return fmt.Sprintf("Ran %s but it failed!", name), 1
	case !res.Found:
		return fmt.Sprintf("Did not run %s, does it exist?", name), 1
	}
	return "", 0
}
