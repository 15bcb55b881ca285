package cli

// `cloud-init single --name M [--frequency F] [--report] [--file F]... [arg...]`
// after cloud-init 26.x's main_single: one module run by hand from this
// boot's hand-off state (cloudroot's trusted datasource), whatever the
// stage lists, distro or activation keys say.
//
// The contract:
//   - --name takes any spelling cloud-init accepts (ssh-import-id,
//     cc_write_files); --frequency instance|always|once replaces the
//     module's default, and the semaphore is that frequency's
//     (instance/sem/config_NAME, sem/config_NAME.once; none for always).
//     A module whose semaphore exists is not run again and that is success.
//   - Exit 0 when the module ran (or had already run), 1 when it failed
//     ("Ran M but it failed!"), when no module has that name ("Did not run
//     M, does it exist?"), or when there is no hand-off state ("Failed to
//     fetch your datasource, likely bad things to come!").
//   - The welcome line goes to stderr; warnings go to stderr in cloud-init's
//     log format; everything goes to /var/log/cloud-init.log with a
//     "single/config-M" event. status.json is left alone. --report is
//     accepted (reporting always goes to the log); extra arguments are
//     logged and ignored (no cloudroot module takes any).

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"

	"github.com/cloudroot/cloudroot/pkg/cilog"
	"github.com/cloudroot/cloudroot/pkg/modules"
	"github.com/cloudroot/cloudroot/pkg/stages"
	"github.com/cloudroot/cloudroot/pkg/state"
	"github.com/cloudroot/cloudroot/pkg/target"
)

func singleCommand() Command {
	return Command{Name: "single", Short: "Run a single module.", Run: runSingle}
}

var singleArgs = &argParser{
	prog: "cloud-init single",
	usage: "usage: cloud-init single [-h] --name NAME [--frequency {instance,always,once}]\n" +
		"                         [--report] [--file FILES]\n" +
		"                         [argument ...]\n",
	help: `
positional arguments:
  argument              Any additional arguments to pass to this module.

options:
  -h, --help            show this help message and exit
  --name NAME, -n NAME  Module name to run.
  --frequency {instance,always,once}
                        Module frequency for this run.
  --report              Enable reporting.
  --file FILES, -f FILES
                        Use additional yaml configuration files.
`,
	opts: []argOpt{
		{short: "-n", long: "--name", dest: "name", metavar: "NAME", required: true, longFirst: true},
		{long: "--frequency", dest: "frequency", metavar: "FREQUENCY", choices: []string{"instance", "always", "once"}},
		{long: "--report", dest: "report"},
		{short: "-f", long: "--file", dest: "files", metavar: "FILES", repeat: true, longFirst: true},
	},
	positionals: []string{"argument"},
	variadic:    true,
}

// singleFrequencies maps --frequency to cloud-init's frequency names.
var singleFrequencies = sync.OnceValue(func() map[string]state.Frequency {
	return map[string]state.Frequency{"instance": state.PerInstance, "always": state.PerAlways, "once": state.PerOnce}
})

func runSingle(ctx context.Context, env *Env, args []string) int {
	a, rc, ok := singleArgs.run(env, args)
	if !ok {
		return rc
	}
	name := a.value("name")
	root, err := target.New(env.Root)
	if err != nil {
		fmt.Fprintln(env.Stderr, err)
		return 1
	}
	logw, outw, closeLogs := openLogs(env)
	defer closeLogs()
	log := slog.New(slog.NewMultiHandler(
		cilog.NewHandler(logw, cilog.Options{Level: slog.LevelDebug, Logger: "main.py"}),
		cilog.NewHandler(env.Stderr, cilog.Options{Level: slog.LevelWarn, Logger: "main.py"}),
	)).With("stage", "single")
	io.WriteString(env.Stderr, stages.Welcome(Version, "single", env.Now(), env.Uptime()))
	if len(a.pos) > 0 {
		log.Debug(fmt.Sprintf("Using passed in arguments %v", a.pos))
	}
	freq := singleFrequencies()[a.value("frequency")]
	if freq != "" {
		log.Debug(fmt.Sprintf("Using passed in frequency %s", freq))
	}
	if _, err := stages.LoadState(root); errors.Is(err, state.ErrNoState) {
		// No hand-off for this boot: find the datasource here (the
		// configured datasource_list, None included) and process its
		// user-data, as 26.x's single fetches, then run the module.
		log.Info("no hand-off state for this boot: searching for the datasource in the root", "mode", stages.ModeInRoot)
		runInRoot(ctx, env, inRootOptions{Stage: inRootFetch, Root: root, Log: log, Out: outw})
	}
	o := stages.AgentOptions{
		Root: root, Log: log, Out: outw, Now: env.Now, Uptime: env.Uptime, Version: Version,
		Files: readConfigFiles(env, log, a.values["files"]),
	}
	res, power, err := stages.Single(ctx, o, name, freq)
	if res == (modules.SingleResult{}) && err != nil {
		log.Error("Failed to fetch your datasource, likely bad things to come!", "err", err)
		fmt.Fprintf(env.Stderr, "Failed to fetch your datasource, likely bad things to come!\n%s\n", err)
		return 1
	}
	if err != nil {
		log.Error(fmt.Sprintf("Running module %s (cc_%s) failed", name, modules.CanonicalName(name)), "err", err)
	}
	// The runner logged why a name resolved to no module (removed, or
	// not found).
	if msg, rc := modules.SingleVerdict(name, res, err); rc != 0 {
		log.Warn(msg)
		return rc
	}
	if power != nil {
		if perr := doPower(ctx, env, root, power, outw, log); perr != nil {
			log.Warn(fmt.Sprintf("power_state_change: %v", perr))
			return 1
		}
	}
	return 0
}
