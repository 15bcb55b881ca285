//go:build !cloudroot_front

package cli

// `cloud-init init [--local] [--file F]...` in the booted root.
//
// In cloud-init, `init --local` (the local stage: find a local datasource,
// write the network configuration) and `init` (the network stage: network
// datasources, user-data, the init modules) run before and after the
// network comes up. In cloudroot both happen in the initramfs
// (cloudroot-init) before switch_root, and their result is the hand-off
// state in /run/cloud-init. So, by hand in the booted root:
//
//   - `init` runs the init stage's modules (cloud_init_modules) again from
//     the hand-off state with the same semaphores (per-instance modules that
//     ran do not run again; bootcmd-like per-always ones do), --file configs
//     on top, and records the "init" stage in status.json. Exit 0, or 1 when
//     a module failed or there is no hand-off state.
// When there is no hand-off state for this boot (no initramfs ran: a
// chroot, a container, the distribution's own initrd), both run the stages
// in the root instead (inroot.go), as cloud-init does.
//
//   - `init --local` says where that work happened and what it found (the
//     datasource and instance-id of the hand-off state, the local stage's
//     errors from status.json). Probing again from the booted root would
//     be a different machine state from the one the boot used, so it does
//     not. Exit 0 when the hand-off state exists and the local stage had no
//     errors, 1 otherwise; 0 with a note when cloud-init is disabled.

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/cloudroot/cloudroot/pkg/stages"
	"github.com/cloudroot/cloudroot/pkg/state"
	"github.com/cloudroot/cloudroot/pkg/target"
)

func initCommand() Command {
	return Command{Name: "init", Short: "Initialize cloud-init and perform initial modules.", Run: runInit}
}

var initArgs = &argParser{
	prog:  "cloud-init init",
	usage: "usage: cloud-init init [-h] [--local] [--file FILES]\n",
	help: `
options:
  -h, --help            show this help message and exit
  --local, -l           Start in local mode (default: False).
  --file FILES, -f FILES
                        Use additional yaml configuration files.
`,
	opts: []argOpt{
		{short: "-l", long: "--local", dest: "local", longFirst: true},
		{short: "-f", long: "--file", dest: "files", metavar: "FILES", repeat: true, longFirst: true},
	},
}

func runInit(ctx context.Context, env *Env, args []string) int {
	a, rc, ok := initArgs.run(env, args)
	if !ok {
		return rc
	}
	root, err := target.New(env.Root)
	if err != nil {
		fmt.Fprintln(env.Stderr, err)
		return 1
	}
	if _, err := stages.LoadState(root); errors.Is(err, state.ErrNoState) {
		stage := inRootNetwork
		if a.flag("local") {
			stage = inRootLocal
		}
		return runInRootCommand(ctx, env, root, stage)
	}
	if !a.flag("local") {
		// cloudroot-network.service after an in-root local stage that
		// found a local source: that stage ran the init modules already
		// (as the initramfs does); running them again would run the
		// always-frequency ones (bootcmd...) twice in one boot.
		if s, err := stages.LoadState(root); err == nil && s.Mode == stages.ModeInRoot && root.Exists(state.InRootMarker) {
			if st := stages.ReadStatus(root).Get(state.StageInit); st.Finished != nil {
				fmt.Fprintln(env.Stdout, "cloudroot: the in-root local stage ran the init stage for this boot already; nothing to do")
				return 0
			}
		}
		return runStage(ctx, env, "init", a.values["files"], true)
	}
	io.WriteString(env.Stderr, stages.Welcome(Version, "init-local", env.Now(), env.Uptime()))
	fmt.Fprintln(env.Stdout, "cloudroot: the local stage (datasource search, network configuration) ran in the initramfs (cloudroot-init) before switch_root; it does not run again from the booted root.")
	s, err := stages.LoadState(root)
	if err != nil {
		fmt.Fprintf(env.Stdout, "cloudroot: no hand-off state for this boot: %v\n", err)
		return 1
	}
	if s.Disabled {
		fmt.Fprintf(env.Stdout, "cloudroot: cloud-init is disabled for this boot (%s); nothing to do\n", s.DisabledReason)
		return 0
	}
	fmt.Fprintf(env.Stdout, "cloudroot: this boot's datasource: %s, instance-id: %s (from %s)\n", s.Datasource.Description, s.InstanceID, state.StateFile)
	st := stages.ReadStatus(root)
	errs := st.Get(state.StageInitLocal).Errors
	for _, e := range errs {
		fmt.Fprintf(env.Stdout, "cloudroot: init-local error: %s\n", e)
	}
	fmt.Fprintln(env.Stdout, "cloudroot: to run the init modules again use `cloud-init init`; to start afresh next boot, `cloud-init clean` and reboot.")
	if len(errs) > 0 {
		return 1
	}
	return 0
}
