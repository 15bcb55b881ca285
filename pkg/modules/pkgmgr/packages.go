package pkgmgr

// package_update_upgrade_install, as cloud-init 26.x's
// cc_package_update_upgrade_install does it:
//
//  1. package_update or package_upgrade (or the deprecated apt_update /
//     apt_upgrade): refresh the package sources; on apt once per instance
//     (the update_sources semaphore apt_configure shares);
//  2. package_upgrade: upgrade everything;
//  3. packages: install. Entries are names, [name, version] lists and, on
//     the Debian family whose distro classes sort them, {apt: [...],
//     snap: [...]} mappings; snap entries are installed one by one with
//     `snap install NAME [VERSION]`;
//  4. package_reboot_if_required (apt_reboot_if_required): after an upgrade
//     or install, reboot when /var/run/reboot-required or
//     /run/reboot-needed exists.
//
// Every step runs even when an earlier one failed; the module fails with
// every error. A distro without a package manager cloudroot knows fails the
// module once, saying so, and the boot goes on.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/cloudroot/cloudroot/pkg/distro"
	"github.com/cloudroot/cloudroot/pkg/internal/pyval"
	"github.com/cloudroot/cloudroot/pkg/modules"
	"github.com/cloudroot/cloudroot/pkg/state"
	"github.com/cloudroot/cloudroot/pkg/target"
)

// PackageUpdateUpgradeInstall is cc_package_update_upgrade_install.
var PackageUpdateUpgradeInstall = modules.Module{
	Name:      "package_update_upgrade_install",
	Frequency: state.PerInstance,
	Keys: []string{"packages", "package_update", "package_upgrade", "package_reboot_if_required",
		"apt_update", "apt_upgrade", "apt_reboot_if_required"},
	ActivateBy: []string{"apt_update", "package_update", "apt_upgrade", "package_upgrade", "packages"},
	Run:        modules.Typed(runPackages),
}

// RebootMarkers are the files whose presence asks for a reboot after an
// upgrade or install (cloud-init's REBOOT_FILES).
var RebootMarkers = []string{"/var/run/reboot-required", "/run/reboot-needed"}

// RebootCommand is cloud-init's REBOOT_CMD.
var RebootCommand = []string{"/sbin/reboot"}

// packagesConfig is the module's keys, decoded once.
type packagesConfig struct {
	Update, Upgrade, RebootIfRequired bool
	// Generic entries go to the distro's package manager.
	Generic []distro.Package
	// ByManager holds the {apt: [...], snap: [...]} entries, in the order
	// the managers first appear.
	ByManager []managerPackages
	// Deprecated notes the deprecated keys used, in cloud-init's words.
	Deprecated []string
}

type managerPackages struct {
	Manager  string
	Packages []distro.Package
}

func (p packagesConfig) empty() bool { return len(p.Generic) == 0 && len(p.ByManager) == 0 }

// packagesKeys is the module's configuration: each flag under its two
// spellings (the apt_ ones deprecated in 22.2), packages as given (a list
// or one entry), and system_info's apt-get settings.
type packagesKeys struct {
	HasAptUpdate   bool           `cfg:"apt_update,present"`
	AptUpdate      bool           `cfg:"apt_update"`
	PackageUpdate  bool           `cfg:"package_update"`
	HasAptUpgrade  bool           `cfg:"apt_upgrade,present"`
	AptUpgrade     bool           `cfg:"apt_upgrade"`
	PackageUpgrade bool           `cfg:"package_upgrade"`
	HasAptReboot   bool           `cfg:"apt_reboot_if_required,present"`
	AptReboot      bool           `cfg:"apt_reboot_if_required"`
	PackageReboot  bool           `cfg:"package_reboot_if_required"`
	Packages       any            `cfg:"packages"`
	AptGet         aptGetSettings `cfg:"system_info,loose"`
}

// aptGetSettings are system_info's apt-get keys (cloud-init's distro
// class reads them there, not at the top level of the cloud-config).
type aptGetSettings struct {
	Command           pyval.List `cfg:"apt_get_command"`
	UpgradeSubcommand string     `cfg:"apt_get_upgrade_subcommand,scalar"`
	// Wrapper is apt_get_wrapper (empty when not a mapping).
	Wrapper aptGetWrapper `cfg:"apt_get_wrapper,loose"`
}

// aptGetWrapper is system_info.apt_get_wrapper; an empty mapping (All)
// keeps the defaults, as no mapping does.
type aptGetWrapper struct {
	All     map[string]any `cfg:",all"`
	Enabled string         `cfg:"enabled,scalar"`
	Command pyval.List     `cfg:"command"`
}

// decodePackages reads the module's keys: a key is true when any of its
// spellings is (cloud-init's _multi_cfg_bool_get); packages is a list or
// a single entry.
func decodePackages(cfg packagesKeys) (packagesConfig, error) {
	var p packagesConfig
	for _, o := range []struct {
		given    bool
		old, use string
	}{
		{cfg.HasAptUpdate, "apt_update", "package_update"},
		{cfg.HasAptUpgrade, "apt_upgrade", "package_upgrade"},
		{cfg.HasAptReboot, "apt_reboot_if_required", "package_reboot_if_required"},
	} {
		if o.given {
			p.Deprecated = append(p.Deprecated, fmt.Sprintf("%s: Deprecated in version 22.2. Use ``%s`` instead.", o.old, o.use))
		}
	}
	slices.Sort(p.Deprecated)
	p.Update = cfg.AptUpdate || cfg.PackageUpdate
	p.Upgrade = cfg.PackageUpgrade || cfg.AptUpgrade
	p.RebootIfRequired = cfg.AptReboot || cfg.PackageReboot

	raw := cfg.Packages
	var list []any
	switch t := raw.(type) {
	case nil:
	case []any:
		list = t
	default:
		list = []any{t}
	}
	var errs []error
	for i, e := range list {
		m := pyval.DictOf(e)
		if !m.Mapping {
			pk, err := distro.ParsePackages([]any{e})
			if err != nil {
				errs = append(errs, fmt.Errorf("packages[%d]: %w", i, err))
			}
			p.Generic = append(p.Generic, pk...)
			continue
		}
		for _, me := range m.Entries {
			mgr := me.Key
			pk, err := distro.ParsePackages(me.Value)
			if err != nil {
				errs = append(errs, fmt.Errorf("packages[%d].%s: %w", i, mgr, err))
			}
			j := slices.IndexFunc(p.ByManager, func(x managerPackages) bool { return x.Manager == mgr })
			if j < 0 {
				p.ByManager = append(p.ByManager, managerPackages{Manager: mgr})
				j = len(p.ByManager) - 1
			}
			p.ByManager[j].Packages = append(p.ByManager[j].Packages, pk...)
		}
	}
	return p, errors.Join(errs...)
}

func runPackages(ctx context.Context, c *modules.Context, cfg packagesKeys) error {
	p, decodeErr := decodePackages(cfg)
	for _, d := range p.Deprecated {
		c.Log.Info(d, "module", "package_update_upgrade_install")
	}
	if decodeErr != nil {
		// cloud-init's _validate_entry refuses the whole list.
		return fmt.Errorf("Invalid 'packages' yaml specification: %w", decodeErr)
	}
	if !p.Update && !p.Upgrade && p.empty() {
		return nil
	}
	pm := c.Distro.Packages()
	if pm == nil {
		return fmt.Errorf("distro %s has no package manager cloudroot knows: packages not updated, upgraded or installed", c.Distro.Variant())
	}
	if a, ok := pm.(distro.Apt); ok {
		pm = aptFromConfig(c, a, cfg.AptGet)
	}
	r := &pkgRun{c: c, pm: pm}
	var errs []error
	if p.Update || p.Upgrade {
		if err := r.update(ctx); err != nil {
			errs = append(errs, fmt.Errorf("Package update failed: %w", err))
		}
	}
	if p.Upgrade {
		err := r.run(ctx, pm.Upgrade())
		if err == nil {
			err = r.upgradeSnaps(ctx)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("Package upgrade failed: %w", err))
		}
	}
	if !p.empty() {
		if err := r.install(ctx, p); err != nil {
			errs = append(errs, fmt.Errorf("Failure when attempting to install packages: %w", err))
		}
	}
	if (p.Upgrade || !p.empty()) && p.RebootIfRequired {
		if err := r.rebootIfRequired(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// aptFromConfig applies system_info's apt_get_command,
// apt_get_upgrade_subcommand and apt_get_wrapper (default: eatmydata when
// the target has it); cloud-init's distro class reads them there, not at
// the top level of the cloud-config.
func aptFromConfig(c *modules.Context, a distro.Apt, si aptGetSettings) distro.Apt {
	if l := si.Command; len(l) > 0 {
		a.Command = l
	}
	if s := si.UpgradeSubcommand; s != "" {
		a.UpgradeSubcommand = s
	}
	enabled, command := "auto", []string{"eatmydata"}
	if w := si.Wrapper; len(w.All) > 0 {
		enabled, command = w.Enabled, w.Command
	}
	if len(command) > 0 && (pyval.TranslateBool(enabled, false) || (enabled == "auto" && targetWhich(c.Root, command[0]) != "")) {
		a.Wrapper = command
	}
	return a
}

// targetWhich finds name on the default PATH inside the root, as
// subp.which does in the booted system.
func targetWhich(root *target.Root, name string) string {
	if strings.Contains(name, "/") {
		if root.Exists(name) {
			return name
		}
		return ""
	}
	for _, d := range strings.Split(target.DefaultPath, ":") {
		if p := path.Join(d, name); root.Exists(p) {
			return p
		}
	}
	return ""
}

// upgradeSnaps is Ubuntu's part of an upgrade: `snap refresh` when the
// target has snap, unless `snap get system -d` says refresh.hold is
// "forever".
func (r *pkgRun) upgradeSnaps(ctx context.Context) error {
	if r.c.Distro.Variant() != "ubuntu" || targetWhich(r.c.Root, "snap") == "" {
		return nil
	}
	out, err := cmdOutput(ctx, r.c, []string{"snap", "get", "system", "-d"}, nil, nil)
	if err != nil {
		r.c.Log.Info(fmt.Sprintf("Continuing to snap refresh. Unable to run command: %v", err))
	} else {
		var sys struct {
			Refresh struct {
				Hold any `json:"hold"`
			} `json:"refresh"`
		}
		if jerr := json.Unmarshal(out, &sys); jerr != nil {
			return fmt.Errorf("snap get system -d: %w", jerr)
		}
		if sys.Refresh.Hold == "forever" {
			r.c.Log.Info("Skipping snap refresh because refresh.hold is set to 'forever'")
			return nil
		}
	}
	return r.run(ctx, []distro.Cmd{{Argv: []string{"snap", "refresh"}}})
}

// pkgRun runs one module's package commands.
type pkgRun struct {
	c  *modules.Context
	pm distro.PackageManager
	// updated: the sources were refreshed during this run.
	updated bool
}

// updateSem is cloud-init's "update-sources" once-per-instance marker.
func (r *pkgRun) updateSem() string { return r.c.InstanceDir() + "/sem/update_sources" }

// update refreshes the sources once per instance (cloud-init's
// update-sources semaphore), on apt only when apt-get is there.
func (r *pkgRun) update(ctx context.Context) error {
	if r.updated {
		return nil
	}
	r.updated = true
	if r.pm.Name() == "apt" && !r.aptAvailable() {
		r.c.Log.Debug("Skipping update for package manager 'apt': not available.")
		return nil
	}
	cmds := r.pm.Update()
	if len(cmds) == 0 || r.c.Root.Exists(r.updateSem()) {
		return nil
	}
	body := fmt.Sprintf("%d\n", r.c.Now().Unix())
	if err := r.c.Root.WriteFile(r.updateSem(), []byte(body), 0o644); err != nil {
		return fmt.Errorf("semaphore %s: %w", r.updateSem(), err)
	}
	return r.run(ctx, cmds)
}

// installCmds runs the manager's install sequence, its leading source
// refresh going through update (once per instance).
func (r *pkgRun) installCmds(ctx context.Context, pkgs []distro.Package) error {
	cmds := r.pm.Install(pkgs)
	upd := r.pm.Update()
	if len(upd) > 0 && len(cmds) > len(upd) && slices.EqualFunc(cmds[:len(upd)], upd, func(a, b distro.Cmd) bool {
		return slices.Equal(a.Argv, b.Argv)
	}) {
		if err := r.update(ctx); err != nil {
			return err
		}
		cmds = cmds[len(upd):]
	}
	return r.run(ctx, cmds)
}

func (r *pkgRun) aptAvailable() bool {
	a, _ := r.pm.(distro.Apt)
	cmd := a.Command
	if len(cmd) == 0 {
		cmd = distro.AptCommand
	}
	return targetWhich(r.c.Root, cmd[0]) != ""
}

// run runs cmds in order and stops at the first failure.
func (r *pkgRun) run(ctx context.Context, cmds []distro.Cmd) error {
	for _, cmd := range cmds {
		if err := r.runOne(ctx, cmd); err != nil {
			return fmt.Errorf("%s: %w", strings.Join(cmd.Argv, " "), err)
		}
	}
	return nil
}

// runOne runs cmd inside the target with its extra environment, output
// to c.Out.
func (r *pkgRun) runOne(ctx context.Context, cmd distro.Cmd) error {
	out := r.c.Out
	if out == nil {
		out = io.Discard
	}
	return r.c.Root.Run(ctx, target.Cmd{Argv: cmd.Argv, Env: r.c.CmdEnv(cmd.Env), Stdout: out, Stderr: out})
}

// install installs the lists. On apt the install refreshes the sources
// first (once per instance) and snap entries go to snap; other distros'
// classes take plain entries only, as cloud-init's do.
func (r *pkgRun) install(ctx context.Context, p packagesConfig) error {
	if r.pm.Name() != "apt" {
		if len(p.ByManager) > 0 {
			return fmt.Errorf("Invalid package type: per-manager entries (%s) are only sorted by the Debian family's distro classes", managerNames(p.ByManager))
		}
		return r.installCmds(ctx, p.Generic)
	}
	aptPkgs := slices.Clone(p.Generic)
	var errs []error
	for _, m := range p.ByManager {
		switch m.Manager {
		case "apt":
			aptPkgs = append(aptPkgs, m.Packages...)
		case "snap":
		default:
			r.c.Log.Error(fmt.Sprintf("Cannot install packages under '%s' as it is not a supported package manager!", m.Manager))
		}
	}
	if len(aptPkgs) > 0 {
		if !r.aptAvailable() {
			errs = append(errs, fmt.Errorf("Failed to install the following packages: %s. Package manager 'apt' not available", pkgNames(aptPkgs)))
		} else {
			if err := r.installCmds(ctx, aptPkgs); err != nil {
				errs = append(errs, err)
			}
		}
	}
	for _, m := range p.ByManager {
		if m.Manager != "snap" {
			continue
		}
		var failed []string
		for _, pk := range m.Packages {
			argv := []string{"snap", "install", pk.Name}
			if pk.Version != "" {
				argv = append(argv, pk.Version)
			}
			if err := r.run(ctx, []distro.Cmd{{Argv: argv}}); err != nil {
				r.c.Log.Info(fmt.Sprintf("Failed to 'snap install %s'!", strings.Join(argv[2:], "=")))
				failed = append(failed, strings.Join(argv[2:], "="))
			}
		}
		if len(failed) > 0 {
			errs = append(errs, fmt.Errorf("Failed to install the following packages: %s. See associated package manager logs for more details.", strings.Join(failed, ", ")))
		}
	}
	return errors.Join(errs...)
}

func managerNames(l []managerPackages) string {
	var n []string
	for _, m := range l {
		n = append(n, m.Manager)
	}
	return strings.Join(n, ", ")
}

func pkgNames(l []distro.Package) string {
	var n []string
	for _, p := range l {
		n = append(n, p.Name)
	}
	return strings.Join(n, ", ")
}

// RebootWait is how long cloud-init waits for a requested reboot to take
// the system down before it calls the reboot failed (1+2+…+32 s).
const RebootWait = 63 * time.Second

// rebootIfRequired reboots when a marker exists; if the system is still
// running RebootWait later the reboot failed.
func (r *pkgRun) rebootIfRequired(ctx context.Context) error {
	marker := ""
	for _, m := range RebootMarkers {
		if fi, err := r.c.Root.Stat(m); err == nil && fi.Mode().IsRegular() {
			marker = m
			break
		}
	}
	if marker == "" {
		return nil
	}
	r.c.Log.Warn(fmt.Sprintf("***WARNING*** Rebooting after upgrade or install per %s", marker))
	if err := r.run(ctx, []distro.Cmd{{Argv: RebootCommand}}); err != nil {
		return fmt.Errorf("Requested reboot did not happen!: %w", err)
	}
	t := time.NewTimer(RebootWait)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
	}
	return fmt.Errorf("Requested reboot did not happen!: Reboot did not happen after %d seconds!", int(RebootWait.Seconds()))
}
