//go:build !cloudroot_front

package cli

// The plan of `cloudroot install`: what goes where in a root, per init
// system. Building the plan only reads the root; applying it writes through
// pkg/target (confined, atomic) and skips what is already in place, so a
// second install changes nothing.

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/cloudroot/cloudroot/pkg/target"
	"github.com/cloudroot/cloudroot/templates"
)

// Init systems `cloudroot install` knows.
const (
	InitSystemd  = "systemd"
	InitOpenRC   = "openrc"
	InitSysvinit = "sysvinit"
)

// Paths inside the root.
const (
	// installAgentPath is the full agent; the boot's units and the
	// generator run it directly.
	installAgentPath = "/usr/lib/cloudroot/cloudroot-agent"
	// installFrontPath is the front binary (cmds/cloudroot): it answers
	// --version, status, query, schema, analyze, cloud-id, features and devel
	// (but hotplug-hook) itself and execs the full agent for the rest.
	installFrontPath     = "/usr/bin/cloudroot"
	installCloudInitPath = "/usr/bin/cloud-init"
	installCloudIDPath   = "/usr/bin/cloud-id"
	installCloudCfgPath  = "/etc/cloud/cloud.cfg"
	systemdUnitDir       = "/usr/lib/systemd/system"
	systemdEtcDir        = "/etc/systemd/system"
	systemdGeneratorDir  = "/usr/lib/systemd/system-generators"
)

// cloud-init's own systemd units and generator, masked when
// --replace-cloud-init takes a root over from the package.
var cloudInitUnits = []string{
	"cloud-init-local.service", "cloud-init-main.service", "cloud-init-network.service",
	"cloud-init.service", "cloud-config.service", "cloud-final.service",
	"cloud-init-hotplugd.service", "cloud-init-hotplugd.socket",
}

// cloud-init's own OpenRC / sysvinit scripts, unlinked from the runlevels
// when --replace-cloud-init takes a root over.
var cloudInitScripts = []string{"cloud-init-local", "cloud-init", "cloud-config", "cloud-final", "cloud-init-ds-identify", "cloud-init-hotplug"}

// sysvinit runlevels the stage scripts are linked into, and their order
// (plain sysv-rc and busybox run S links in name order; insserv-based
// systems renumber them with update-rc.d).
var (
	sysvRunlevels = []string{"2", "3", "4", "5"}
	sysvOrder     = sync.OnceValue(func() map[string]string {
		return map[string]string{"cloudroot-config": "S90", "cloudroot-final": "S91"}
	})
)

// actionKind is what an action does to its path.
type actionKind string

const (
	actWrite  actionKind = "write"
	actLink   actionKind = "link"
	actRemove actionKind = "remove"
)

// action is one change to the root.
type action struct {
	Kind   actionKind
	Path   string
	Data   []byte      // actWrite
	Mode   fs.FileMode // actWrite
	Target string      // actLink
	Why    string
}

// installPlan is the list of actions for one root.
type installPlan struct {
	Init    string
	Replace bool // cloud-init's package is present and is being replaced
	Actions []action
}

// cloudInitPresence lists the evidence that cloud-init's own package is
// installed in r: the dpkg or apk database naming it, or its units, init
// scripts or Python /usr/bin/cloud-init. An rpm-based root is recognised by
// the files the rpm installs (its database is not read).
func cloudInitPresence(r *target.Root) []string {
	var ev []string
	if b, err := r.ReadFile("/var/lib/dpkg/status"); err == nil && dpkgInstalled(b, "cloud-init") {
		ev = append(ev, "/var/lib/dpkg/status: package cloud-init is installed")
	}
	if b, err := r.ReadFile("/lib/apk/db/installed"); err == nil && slices.Contains(strings.Split(string(b), "\n"), "P:cloud-init") {
		ev = append(ev, "/lib/apk/db/installed: package cloud-init is installed")
	}
	for _, p := range []string{
		"/usr/lib/systemd/system/cloud-init-local.service", "/lib/systemd/system/cloud-init-local.service",
		"/usr/lib/systemd/system/cloud-init-main.service", "/lib/systemd/system/cloud-init-main.service",
		"/etc/init.d/cloud-init-local",
	} {
		if r.Exists(p) {
			ev = append(ev, p+" exists")
		}
	}
	if fi, err := r.Lstat(installCloudInitPath); err == nil && fi.Mode().IsRegular() {
		if b, err := r.ReadFile(installCloudInitPath); err == nil && bytes.HasPrefix(b, []byte("#!")) {
			ev = append(ev, installCloudInitPath+" is a script (cloud-init's Python entry point)")
		}
	}
	return ev
}

// dpkgInstalled reports whether the dpkg status database b has pkg in state
// "install ok installed" (or any installed-but-unconfigured state).
func dpkgInstalled(b []byte, pkg string) bool {
	for stanza := range strings.SplitSeq(string(b), "\n\n") {
		var name, status string
		sc := bufio.NewScanner(strings.NewReader(stanza))
		sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if v, ok := strings.CutPrefix(line, "Package: "); ok {
				name = strings.TrimSpace(v)
			} else if v, ok := strings.CutPrefix(line, "Status: "); ok {
				status = strings.TrimSpace(v)
			}
		}
		if name != pkg {
			continue
		}
		f := strings.Fields(status)
		if len(f) == 3 && f[2] != "not-installed" && f[2] != "config-files" {
			return true
		}
	}
	return false
}

// detectInit tells the root's init system from its files.
func detectInit(r *target.Root) (string, error) {
	switch {
	case r.Exists("/usr/lib/systemd/systemd") || r.Exists("/lib/systemd/systemd"):
		return InitSystemd, nil
	case r.Exists("/sbin/openrc-run") || r.Exists("/usr/sbin/openrc-run") || r.Exists("/sbin/openrc"):
		return InitOpenRC, nil
	case r.Exists("/etc/inittab") || r.Exists("/sbin/init"):
		return InitSysvinit, nil
	}
	return "", errors.New("cannot tell the root's init system (no systemd, OpenRC, /etc/inittab or /sbin/init): pass --init")
}

// Binaries are the two programs an install writes: the full agent
// (cmds/cloudroot-agent) and the front binary (cmds/cloudroot). A single
// binary that serves every command (the full agent built as cloudroot) may
// be both.
type Binaries struct {
	Front, Agent []byte
}

// buildPlan lists what installing bins (the binaries' bytes) into a root
// with init system initSys means. replace is set when cloud-init's package
// is present and --replace-cloud-init allowed taking over. cloudCfg, when
// not nil, is written as /etc/cloud/cloud.cfg (the default of variant).
func buildPlan(initSys string, bins Binaries, replace bool, cloudCfg []byte, variant string) (*installPlan, error) {
	p := &installPlan{Init: initSys, Replace: replace}
	add := func(a action) { p.Actions = append(p.Actions, a) }
	add(action{Kind: actWrite, Path: installAgentPath, Data: bins.Agent, Mode: 0o755, Why: "the agent"})
	add(action{Kind: actWrite, Path: installFrontPath, Data: bins.Front, Mode: 0o755, Why: "the front: --version, status, query, schema, analyze, cloud-id, features and devel, the rest handed to the agent"})
	add(action{Kind: actLink, Path: installCloudInitPath, Target: "cloudroot", Why: "the cloud-init name, for tools that run `cloud-init status --wait`"})
	add(action{Kind: actLink, Path: installCloudIDPath, Target: "cloudroot", Why: "the cloud-id name, as cloud-init's package installs it"})

	switch initSys {
	case InitSystemd:
		if err := planSystemd(p, add); err != nil {
			return nil, err
		}
	case InitOpenRC:
		if err := planScripts(p, add, "openrc", func(name string) []string {
			return []string{"/etc/runlevels/default/" + name}
		}, func(name string) []string {
			var out []string
			for _, lvl := range []string{"boot", "default", "sysinit"} {
				out = append(out, "/etc/runlevels/"+lvl+"/"+name)
			}
			return out
		}); err != nil {
			return nil, err
		}
	case InitSysvinit:
		if err := planScripts(p, add, "sysvinit", func(name string) []string {
			var out []string
			for _, lvl := range sysvRunlevels {
				out = append(out, "/etc/rc"+lvl+".d/"+sysvOrder()[name]+name)
			}
			return out
		}, nil); err != nil {
			return nil, err
		}
	default:
		return nil, errUnknownInit(initSys)
	}
	if cloudCfg != nil {
		add(action{Kind: actWrite, Path: installCloudCfgPath, Data: cloudCfg, Mode: 0o644, Why: "the distro's default cloud.cfg (" + variant + ")"})
	}
	return p, nil
}

// planSystemd installs every unit of templates/systemd, enables each as its
// [Install] section says (what `systemctl enable` would link), and adds the
// generator.
func planSystemd(p *installPlan, add func(action)) error {
	names, err := fs.Glob(templates.FS, "systemd/*")
	if err != nil {
		return fmt.Errorf("listing the systemd templates: %w", err)
	}
	for _, n := range names {
		data, err := templates.FS.ReadFile(n)
		if err != nil {
			return fmt.Errorf("reading template %s: %w", n, err)
		}
		unit := path.Base(n)
		unitPath := path.Join(systemdUnitDir, unit)
		add(action{Kind: actWrite, Path: unitPath, Data: data, Mode: 0o644, Why: "unit"})
		inst := parseInstall(data)
		for _, t := range inst.wantedBy {
			add(action{Kind: actLink, Path: path.Join(systemdEtcDir, t+".wants", unit), Target: unitPath, Why: "enable (WantedBy=" + t + ")"})
		}
		for _, t := range inst.requiredBy {
			add(action{Kind: actLink, Path: path.Join(systemdEtcDir, t+".requires", unit), Target: unitPath, Why: "enable (RequiredBy=" + t + ")"})
		}
		for _, a := range inst.alias {
			if p.Replace {
				continue // the name is cloud-init's own unit; it is masked below
			}
			add(action{Kind: actLink, Path: path.Join(systemdEtcDir, a), Target: unitPath, Why: "alias (`systemctl status " + strings.TrimSuffix(a, ".service") + "`)"})
		}
	}
	add(action{Kind: actLink, Path: path.Join(systemdGeneratorDir, GeneratorName), Target: installAgentPath, Why: "generator: adds cloud-init.target to multi-user.target unless cloud-init is disabled"})
	if p.Replace {
		for _, u := range cloudInitUnits {
			add(action{Kind: actLink, Path: path.Join(systemdEtcDir, u), Target: "/dev/null", Why: "mask cloud-init's own unit"})
		}
		add(action{Kind: actLink, Path: "/etc/systemd/system-generators/cloud-init-generator", Target: "/dev/null", Why: "mask cloud-init's own generator"})
	}
	return nil
}

// planScripts installs the init scripts of templates/<dir> into /etc/init.d
// and links each into the runlevels links(name) gives. With --replace, the
// links of cloud-init's own scripts that oldLinks gives (or the runlevel
// links of the sysvinit layout) are removed.
func planScripts(p *installPlan, add func(action), dir string, links func(string) []string, oldLinks func(string) []string) error {
	names, err := fs.Glob(templates.FS, dir+"/*")
	if err != nil {
		return fmt.Errorf("listing the %s templates: %w", dir, err)
	}
	for _, n := range names {
		data, err := templates.FS.ReadFile(n)
		if err != nil {
			return fmt.Errorf("reading template %s: %w", n, err)
		}
		name := path.Base(n)
		script := "/etc/init.d/" + name
		add(action{Kind: actWrite, Path: script, Data: data, Mode: 0o755, Why: "init script"})
		for _, l := range links(name) {
			add(action{Kind: actLink, Path: l, Target: script, Why: "enable"})
		}
	}
	if p.Replace {
		for _, s := range cloudInitScripts {
			var old []string
			if oldLinks != nil {
				old = oldLinks(s)
			} else {
				for _, lvl := range append([]string{"S"}, sysvRunlevels...) {
					old = append(old, "/etc/rc"+lvl+".d/S??"+s)
				}
			}
			for _, l := range old {
				add(action{Kind: actRemove, Path: l, Why: "disable cloud-init's own " + s})
			}
		}
	}
	return nil
}

// unitInstall is a unit's [Install] section, the part `systemctl enable`
// acts on.
type unitInstall struct {
	wantedBy, requiredBy, alias []string
}

// parseInstall reads the [Install] section of a unit file.
func parseInstall(b []byte) unitInstall {
	var u unitInstall
	in := false
	for line := range strings.SplitSeq(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if strings.HasPrefix(line, "[") {
			in = line == "[Install]"
			continue
		}
		if !in {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		vals := strings.Fields(v)
		switch strings.TrimSpace(k) {
		case "WantedBy":
			u.wantedBy = append(u.wantedBy, vals...)
		case "RequiredBy":
			u.requiredBy = append(u.requiredBy, vals...)
		case "Alias":
			u.alias = append(u.alias, vals...)
		}
	}
	return u
}

// applied is what happened to one action.
type applied struct {
	action
	Changed bool
}

// applyPlan carries out p in r; with dryRun it only reports what would
// change. Actions already in place are reported unchanged.
func applyPlan(r *target.Root, p *installPlan, dryRun bool) ([]applied, error) {
	var out []applied
	for _, a := range p.Actions {
		switch a.Kind {
		case actRemove:
			matches, err := r.Glob(a.Path)
			if err != nil {
				return out, fmt.Errorf("listing %s: %w", a.Path, err)
			}
			// Glob follows links; a dangling runlevel link is still a link.
			if len(matches) == 0 && !strings.ContainsAny(a.Path, "*?[") {
				if _, err := r.Lstat(a.Path); err == nil {
					matches = []string{a.Path}
				}
			}
			for _, m := range matches {
				b := a
				b.Path = m
				if !dryRun {
					if err := r.Remove(m); err != nil {
						return out, fmt.Errorf("removing %s: %w", m, err)
					}
				}
				out = append(out, applied{action: b, Changed: true})
			}
			continue
		case actWrite:
			same := fileIs(r, a.Path, a.Data, a.Mode)
			if !same && !dryRun {
				if err := r.WriteFile(a.Path, a.Data, a.Mode); err != nil {
					return out, fmt.Errorf("writing %s: %w", a.Path, err)
				}
			}
			out = append(out, applied{action: a, Changed: !same})
		case actLink:
			cur, err := r.Readlink(a.Path)
			same := err == nil && cur == a.Target
			if !same && !dryRun {
				if err := r.Symlink(a.Target, a.Path); err != nil {
					return out, fmt.Errorf("linking %s: %w", a.Path, err)
				}
			}
			out = append(out, applied{action: a, Changed: !same})
		}
	}
	return out, nil
}

// fileIs reports whether p is a regular file with exactly data and mode.
func fileIs(r *target.Root, p string, data []byte, mode fs.FileMode) bool {
	fi, err := r.Lstat(p)
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != mode.Perm() {
		return false
	}
	b, err := r.ReadFile(p)
	return err == nil && bytes.Equal(b, data)
}

func errUnknownInit(initSys string) error {
	return fmt.Errorf("unknown init system %q (want %s, %s or %s)", initSys, InitSystemd, InitOpenRC, InitSysvinit)
}
