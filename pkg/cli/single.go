//go:build !cloudroot_front

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
//     ("Ran M but it failed!") or when no module has that name ("Did not
//     run M, does it exist?").
//   - No hand-off state: the datasource is searched here (in-root mode).
//     None found: a WARNING "Failed to fetch your datasource, likely bad
//     things to come!" and print_exc's frame around cloud-init's
//     DataSourceNotFoundException line on stderr, exit 1, nothing written.
//     With the global --force 26.x goes on and cannot: the welcome, the
//     module name resolved, "RuntimeError: Datasource is not
//     initialized." (cloudify's), exit 1, no module run.
//   - Until the fetch, warnings go to stderr; after it, as 26.x's output
//     redirection (`| tee -a /var/log/cloud-init-output.log`) sends them,
//     the welcome line and warnings go to stdout and the output log, in
//     cloud-init's console format (no attributes). Everything goes to
//     /var/log/cloud-init.log with a "single/config-M" event. status.json
//     is left alone. --report is accepted (reporting always goes to the
//     log); extra arguments are logged and ignored (no cloudroot module
//     takes any).
// testdata/inroot-nostate holds 26.2's own records of these lines.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"

	"github.com/cloudroot/cloudroot/pkg/cilog"
	"github.com/cloudroot/cloudroot/pkg/modules"
	modbuiltin "github.com/cloudroot/cloudroot/pkg/modules/builtin"
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
	fileLog := cilog.NewHandler(logw, cilog.Options{Level: slog.LevelDebug, Logger: "main.py"})
	// Until the datasource is fetched, warnings go to stderr; then, as
	// 26.x's fixup_output sends both streams through `output` (`| tee -a
	// /var/log/cloud-init-output.log`), to stdout and the output log.
	log := slog.New(slog.NewMultiHandler(fileLog, consoleOnly(env.Stderr))).With("stage", "single")
	freq := singleFrequencies()[a.value("frequency")]
	searched, fetched := singleFetch(ctx, env, root, log, outw)
	if !fetched {
		log.Warn("Failed to fetch your datasource, likely bad things to come!")
		printExc(env.Stderr, "Failed to fetch your datasource, likely bad things to come!",
			"cloudinit.sources.DataSourceNotFoundException: "+notFoundMessage(searched))
		if !env.Force {
			return 1
		}
	}
	log = slog.New(slog.NewMultiHandler(fileLog, consoleOnly(outw))).With("stage", "single")
	if len(a.pos) > 0 {
		log.Debug(fmt.Sprintf("Using passed in arguments %v", a.pos))
	}
	if freq != "" {
		log.Debug(fmt.Sprintf("Using passed in frequency %s", freq))
	}
	io.WriteString(outw, stages.Welcome(Version, "single", env.Now(), env.Uptime()))
	if !fetched {
		// --force: 26.x resolves the module name, then fails building the
		// module's Cloud (cloudify: "Datasource is not initialized."),
		// uncaught: no module runs, exit 1.
		mc := modules.NewContext(root, modules.Options{Log: log, Out: outw, Now: env.Now, Uptime: env.Uptime, Version: Version,
			Modules: modbuiltin.Modules()})
		modules.ResolveSingle(mc, name, freq)
		log.Debug("no datasource: no module can run (26.x's cloudify raises RuntimeError)")
		io.WriteString(outw, "RuntimeError: Datasource is not initialized.\n")
		return 1
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

// singleFetch is main_single's init.fetch(existing="trust"): this boot's
// hand-off state, or, without one, the datasource searched here (the
// configured datasource_list, None included) and its user-data processed.
// It returns the datasources searched and whether a state is there now.
func singleFetch(ctx context.Context, env *Env, root *target.Root, log *slog.Logger, out io.Writer) ([]string, bool) {
	_, err := stages.LoadState(root)
	if !errors.Is(err, state.ErrNoState) {
		// A state, or one that cannot be read (stages.Single says why).
		return nil, true
	}
	log.Info("no hand-off state for this boot: searching for the datasource in the root", "mode", stages.ModeInRoot)
	b, found := runInRoot(ctx, env, inRootOptions{Stage: inRootFetch, Root: root, Log: log, Out: out})
	return b.State.DatasourceList, found
}

// notFoundMessage is sources.find_source's DataSourceNotFoundException
// text for the datasources searched (their class names).
func notFoundMessage(searched []string) string {
	classes := make([]string, len(searched))
	for i, n := range searched {
		classes[i] = "DataSource" + n
	}
	return "Did not find any data source, searched classes: (" + strings.Join(classes, ", ") + ")"
}

// printExc is main.py's print_exc: the message, then the exception between
// two rulers (cloudroot has no Python traceback: the exception's line).
func printExc(w io.Writer, msg, exc string) {
	ruler := strings.Repeat("-", 60)
	fmt.Fprintf(w, "%s\n%s\n%s\n%s\n", msg, ruler, exc, ruler)
}

// consoleOnly is cloud-init's console log handler (WARNING and up, the
// arg0Formatter's "time - file[LEVEL]: message"): the attributes cloudroot
// adds for cloud-init.log are left out.
func consoleOnly(w io.Writer) slog.Handler {
	return messageOnly{cilog.NewHandler(w, cilog.Options{Level: slog.LevelWarn, Logger: "main.py"})}
}

// messageOnly passes records to h without their attributes, except the
// one naming the logging file.
type messageOnly struct{ h slog.Handler }

func (m messageOnly) Enabled(ctx context.Context, l slog.Level) bool { return m.h.Enabled(ctx, l) }

func (m messageOnly) WithAttrs(as []slog.Attr) slog.Handler {
	var keep []slog.Attr
	for _, a := range as {
		if a.Key == cilog.LoggerKey {
			keep = append(keep, a)
		}
	}
	if len(keep) == 0 {
		return m
	}
	return messageOnly{m.h.WithAttrs(keep)}
}

func (m messageOnly) WithGroup(string) slog.Handler { return m }

func (m messageOnly) Handle(ctx context.Context, r slog.Record) error {
	n := slog.NewRecord(r.Time, r.Level, r.Message, r.PC)
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == cilog.LoggerKey {
			n.AddAttrs(a)
		}
		return true
	})
	return m.h.Handle(ctx, n)
}
