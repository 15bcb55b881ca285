//go:build !cloudroot_front

package cli

// `cloudroot install --root DIR [--init systemd|openrc|sysvinit] [--dry-run]
// [--replace-cloud-init] [--agent FILE] [--front FILE]`
//
// The contract (how an image builder puts cloudroot into a root):
//
//   - The full agent (this binary, or --agent FILE) becomes
//     DIR/usr/lib/cloudroot/cloudroot-agent, which the units and the
//     generator run. The front binary (--front FILE; default: cloudroot
//     beside the agent, else /usr/bin/cloudroot) becomes DIR/usr/bin/cloudroot
//     and DIR/usr/bin/cloud-init a symlink to it, so tools that run
//     `cloud-init status --wait` keep working: it answers --version and
//     status itself and execs the agent for the rest.
//   - systemd (the default when DIR has /lib/systemd/systemd): every unit of
//     templates/systemd into /usr/lib/systemd/system, enabled as its
//     [Install] section says (links in /etc/systemd/system, as `systemctl
//     enable` makes them), cloud-config.service and cloud-final.service as
//     aliases, and /usr/lib/systemd/system-generators/cloudroot-generator
//     (a link to the agent) that adds cloud-init.target to multi-user.target
//     unless cloud-init is disabled. OpenRC: the scripts of templates/openrc
//     in /etc/init.d, linked into the default runlevel. sysvinit: those of
//     templates/sysvinit, linked into runlevels 2-5.
//   - A root where cloud-init's own package is installed (dpkg or apk
//     database, its units or init scripts, a Python /usr/bin/cloud-init) is
//     refused, listing the evidence, unless --replace-cloud-init: then
//     cloud-init's units and generator are masked (systemd) or its scripts
//     unlinked from the runlevels, and the aliases are not made.
//   - /etc/cloud/cloud.cfg, when the root has none: the default cloud.cfg
//     cloud-init's package installs on the root's distro (os-release), as
//     pkg/distro renders it. An existing cloud.cfg is never touched.
//   - Every write goes through pkg/target (confined to DIR, atomic). What is
//     already in place is left alone: a second run changes nothing.
//     --dry-run prints what would change and writes nothing.
//   - Output: one line per path, "write", "link" or "remove" and why, or
//     "unchanged". Exit 0 done, 1 refused or failed, 2 bad arguments.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/distro"
	"github.com/cloudroot/cloudroot/pkg/target"
)

func installCommand() Command {
	return Command{
		Name:  "install",
		Short: "Install the agent, its service units and generator into a root (install --root DIR [--init systemd|openrc|sysvinit] [--dry-run]).",
		Run:   runInstall,
	}
}

const installUsage = "usage: cloudroot install [-h] --root DIR [--init systemd|openrc|sysvinit] [--dry-run] [--replace-cloud-init] [--agent FILE] [--front FILE]\n"

func runInstall(_ context.Context, env *Env, args []string) int {
	var root, initSys, agentPath, frontPath string
	var dryRun, replace bool
	fl := flag.NewFlagSet("install", flag.ContinueOnError)
	fl.SetOutput(env.Stderr)
	fl.Usage = func() {
		fmt.Fprint(fl.Output(), installUsage+"\nInstall cloudroot into the root filesystem DIR of an image: the agent as\n/usr/lib/cloudroot/cloudroot-agent, its front as /usr/bin/cloudroot and\n/usr/bin/cloud-init, its units or init scripts, enabled.\n\noptions:\n")
		fl.PrintDefaults()
	}
	fl.StringVar(&root, "root", "", "the image's root `DIR` (required)")
	fl.StringVar(&initSys, "init", "", "the root's init system: systemd, openrc or sysvinit (default: detected from DIR)")
	fl.BoolVar(&dryRun, "dry-run", false, "print what would be written, write nothing")
	fl.BoolVar(&replace, "replace-cloud-init", false, "take over a root where cloud-init's own package is installed (mask its units)")
	fl.StringVar(&agentPath, "agent", "", "the full agent binary to install (default: this program)")
	fl.StringVar(&frontPath, "front", "", "the front binary to install (default: cloudroot beside the agent, else /usr/bin/cloudroot)")
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fl.SetOutput(env.Stdout)
			fl.Usage()
			return 0
		}
		return 2
	}
	if root == "" || fl.NArg() != 0 {
		fmt.Fprint(env.Stderr, installUsage)
		if root == "" {
			fmt.Fprintln(env.Stderr, "error: --root is required")
		} else {
			fmt.Fprintf(env.Stderr, "error: unexpected arguments: %s\n", strings.Join(fl.Args(), " "))
		}
		return 2
	}
	if err := install(env, root, initSys, agentPath, frontPath, dryRun, replace); err != nil {
		fmt.Fprintf(env.Stderr, "error: %v\n", err)
		return 1
	}
	return 0
}

// install does the work of `cloudroot install`.
func install(env *Env, dir, initSys, agentPath, frontPath string, dryRun, replace bool) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("root %s: %w", dir, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("root %s: not a directory", dir)
	}
	r, err := target.New(dir)
	if err != nil {
		return fmt.Errorf("opening root %s: %w", dir, err)
	}
	if initSys == "" {
		if initSys, err = detectInit(r); err != nil {
			return err
		}
	}
	switch initSys {
	case InitSystemd, InitOpenRC, InitSysvinit:
	default:
		return errUnknownInit(initSys)
	}
	present := cloudInitPresence(r)
	if len(present) > 0 && !replace {
		return fmt.Errorf("cloud-init's own package is installed in %s (%s): remove it from the image (apt-get purge cloud-init, dnf remove cloud-init, apk del cloud-init), or pass --replace-cloud-init to mask it",
			dir, strings.Join(present, "; "))
	}
	if agentPath == "" {
		if agentPath, err = os.Executable(); err != nil {
			return fmt.Errorf("finding this program: %w (pass --agent)", err)
		}
	}
	agent, err := os.ReadFile(agentPath)
	if err != nil {
		return fmt.Errorf("reading the agent: %w", err)
	}
	if frontPath == "" {
		frontPath = findFront(agentPath)
	}
	front, err := os.ReadFile(frontPath)
	if err != nil {
		return fmt.Errorf("reading the front binary: %w (pass --front)", err)
	}
	// The distro's default cloud.cfg, unless the image has its own.
	var cloudCfg []byte
	info := distro.Detect(r.ReadFile)
	if !r.Exists(installCloudCfgPath) {
		if cloudCfg, err = distro.DefaultCloudConfig(info); err != nil {
			return fmt.Errorf("rendering the default cloud.cfg for %s: %w", info.Variant(), err)
		}
	}
	plan, err := buildPlan(initSys, Binaries{Front: front, Agent: agent}, len(present) > 0, cloudCfg, info.Variant())
	if err != nil {
		return err
	}
	done, err := applyPlan(r, plan, dryRun)
	verb := ""
	if dryRun {
		verb = "would "
	}
	changed := 0
	for _, a := range done {
		switch {
		case !a.Changed:
			fmt.Fprintf(env.Stdout, "unchanged %s\n", a.Path)
		case a.Kind == actLink:
			changed++
			fmt.Fprintf(env.Stdout, "%slink %s -> %s (%s)\n", verb, a.Path, a.Target, a.Why)
		case a.Kind == actWrite:
			changed++
			fmt.Fprintf(env.Stdout, "%swrite %s (%s, %04o)\n", verb, a.Path, a.Why, a.Mode.Perm())
		default:
			changed++
			fmt.Fprintf(env.Stdout, "%s%s %s (%s)\n", verb, a.Kind, a.Path, a.Why)
		}
	}
	if err != nil {
		return err
	}
	if len(present) > 0 {
		fmt.Fprintf(env.Stdout, "replaced cloud-init's package (%s); its files stay on disk and a package upgrade may restore /usr/bin/cloud-init\n", strings.Join(present, "; "))
	}
	env.Log.Info("install", "path", dir, "init", initSys, "changed", changed, "dry_run", dryRun)
	return nil
}

// findFront is where the front binary that goes with the agent at
// agentPath is: cloudroot beside it (a build directory), else the installed
// /usr/bin/cloudroot.
func findFront(agentPath string) string {
	beside := filepath.Join(filepath.Dir(agentPath), "cloudroot")
	if _, err := os.Stat(beside); err == nil {
		return beside
	}
	return installFrontPath
}
