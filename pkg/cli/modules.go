//go:build !cloudroot_front

package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/cloudroot/cloudroot/pkg/cilog"
	"github.com/cloudroot/cloudroot/pkg/modules"
	"github.com/cloudroot/cloudroot/pkg/secret"
	"github.com/cloudroot/cloudroot/pkg/stages"
	"github.com/cloudroot/cloudroot/pkg/state"
	"github.com/cloudroot/cloudroot/pkg/target"
	"github.com/cloudroot/cloudroot/pkg/yaml11"
)

func modulesCommand() Command {
	return Command{
		Name:  "modules",
		Short: "Activate modules using a given configuration key.",
		Run:   runModules,
	}
}

var modulesArgs = &argParser{
	prog:  "cloud-init modules",
	usage: "usage: cloud-init modules [-h] [--mode {init,config,final}] [--file FILES]\n",
	help: `
options:
  -h, --help            show this help message and exit
  --mode {init,config,final}, -m {init,config,final}
                        Module configuration name to use (default: config).
                        ` + "`init`" + ` is deprecated in 24.1 and scheduled to be
                        removed in 29.1. Use ` + "`cloud-init init`" + ` instead.
  --file FILES, -f FILES
                        Use additional yaml configuration files.
`,
	opts: []argOpt{
		{short: "-m", long: "--mode", dest: "mode", metavar: "MODE", choices: []string{"init", "config", "final"}, longFirst: true},
		{short: "-f", long: "--file", dest: "files", metavar: "FILES", repeat: true, longFirst: true},
	},
}

// readConfigFiles reads --file configs as cloud-init's read_conf does: a
// file that cannot be read or parsed is logged and left out; a document
// that is not a mapping counts as empty.
func readConfigFiles(env *Env, log *slog.Logger, files []string) []map[string]any {
	var out []map[string]any
	for _, f := range files {
		p := f
		if abs, err := filepath.Abs(f); err == nil {
			p = abs
		}
		b, err := os.ReadFile(p)
		if err != nil {
			log.Warn(fmt.Sprintf("Failed loading of configuration from %s", p), "err", err)
			continue
		}
		v, _, err := yaml11.Load(p, b)
		if err != nil {
			log.Warn(fmt.Sprintf("Failed loading of configuration from %s", p), "err", err)
			continue
		}
		m, _ := v.(map[string]any)
		if m == nil {
			m = map[string]any{}
		}
		out = append(out, m)
	}
	return out
}

func runModules(ctx context.Context, env *Env, args []string) int {
	a, rc, ok := modulesArgs.run(env, args)
	if !ok {
		return rc
	}
	mode := a.value("mode")
	if mode == "" {
		mode = "config"
	}
	return runStage(ctx, env, mode, a.values["files"], false)
}

// runStage runs one of the agent's stages: config or final (what the boot
// runs), or init (the init stage's modules again, from the hand-off; asInit
// is `cloud-init init`, which records the stage in status.json, where
// 26.x's deprecated `modules --mode init` does not).
func runStage(ctx context.Context, env *Env, mode string, files []string, asInit bool) int {
	var stage modules.Stage
	switch mode {
	case "config":
		stage = modules.StageConfig
	case "final":
		stage = modules.StageFinal
	case "init":
		stage = modules.StageInit
	}
	// Writes are atomic (temp file + rename) but not fsynced one by one:
	// during the boot every fsync waits for an ext4 journal commit of
	// everything else being written, and a stage makes dozens (semaphores,
	// status.json, module files). One syncfs at the end of the stage makes
	// them durable, before any power_state action. cloud-init does not
	// fsync these writes at all.
	root, err := target.New(env.Root, target.WithDeferredSync())
	if err != nil {
		fmt.Fprintln(env.Stderr, err)
		return 1
	}
	rawLog, rawOut, closeLogs := openLogs(env)
	defer closeLogs()
	stageName, action := "modules-"+mode, "modules:"+mode
	if asInit {
		stageName, action = "init", "init"
	}
	// Credentials of the state (passwords, tokens) are scrubbed from the
	// log, the output log and the console once the state is read.
	known := &secret.Known{}
	logw, outw := &secret.Writer{W: rawLog, Known: known}, &secret.Writer{W: rawOut, Known: known}
	// What the scrubbers hold back (a command's last line without a
	// newline) is written at the end of the stage, before the logs close.
	defer outw.Close()
	defer logw.Close()
	log := slog.New(slog.NewMultiHandler(
		cilog.NewHandler(logw, cilog.Options{Level: slog.LevelDebug, Logger: "stages.py"}),
		secret.NewHandler(env.Log.Handler(), known),
	)).With("stage", stageName)
	if rc, err := root.Recover(); err != nil {
		log.Warn("recovering an interrupted account commit", "err", err)
	} else if !rc.Empty() {
		log.Warn("finished an account commit interrupted by a power cut", "rolled_forward", rc.RolledForward, "rolled_back", rc.RolledBack)
	}
	start := time.Now()
	_, _ = io.WriteString(outw, stages.Welcome(Version, action, env.Now(), env.Uptime()))
	log.Info("cloudroot agent starting", "version", Version, "mode", mode)
	if stage == modules.StageFinal {
		finishBackgroundHostKeys(ctx, env, root, log, outw)
	}
	if stage == modules.StageInit && !asInit {
		log.Warn("`--mode init` is deprecated in 24.1 and scheduled to be removed in 29.1. Use `cloud-init init` instead.")
	}
	errs, power, err := stages.Modules(ctx, stages.AgentOptions{
		Root: root, Log: log, Out: outw, Now: env.Now, Uptime: env.Uptime, Version: Version,
		Secrets: known.Set,
		Files:   readConfigFiles(env, log, files), NoStatus: stage == modules.StageInit && !asInit,
	}, stage)
	if serr := root.Sync(); serr != nil {
		log.Warn("sync the root after the stage", "err", serr)
	}
	if errors.Is(err, stages.ErrDisabled) {
		log.Info("cloud-init is disabled for this boot; nothing to do")
		fmt.Fprintf(env.Stdout, "cloud-init is disabled for this boot; modules --mode %s has nothing to do\n", mode)
		return 0
	}
	log.Info("cloudroot agent finished", "mode", mode, "duration", time.Since(start).Seconds(), "errors", len(errs))
	if err != nil {
		fmt.Fprintf(env.Stderr, "cloudroot: %v\n", err)
		return 1
	}
	for _, e := range errs {
		fmt.Fprintf(env.Stderr, "cloudroot: %s\n", secret.Scrub(e, known.Values()))
	}
	if power != nil {
		_ = outw.Flush()
		_ = logw.Flush()
		if perr := doPower(ctx, env, root, power, outw, log); perr != nil {
			fmt.Fprintf(env.Stderr, "cloudroot: power_state_change: %v\n", perr)
			return 1
		}
	}
	if len(errs) > 0 {
		return 1
	}
	return 0
}

// openLogs opens /var/log/cloud-init.log (the debug log) and tees command
// output to stdout and /var/log/cloud-init-output.log.
func openLogs(env *Env) (io.Writer, io.Writer, func()) {
	var closers []io.Closer
	open := func(p string) io.Writer {
		hp := env.Path(p)
		if err := os.MkdirAll(filepath.Dir(hp), 0o755); err != nil {
			return io.Discard
		}
		f, err := os.OpenFile(hp, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o640)
		if err != nil {
			return io.Discard
		}
		closers = append(closers, f)
		return f
	}
	logw := open(state.LogFile)
	outw := io.MultiWriter(env.Stdout, open(state.OutputLogFile))
	return logw, outw, func() {
		for _, c := range closers {
			c.Close()
		}
	}
}

// doPower carries out power_state_change once the final stage is on disk:
// the condition is checked, the message printed, then `shutdown` (systemd,
// sysvinit) or busybox's poweroff/reboot/halt runs.
func doPower(ctx context.Context, env *Env, root *target.Root, a *modules.PowerAction, out io.Writer, log *slog.Logger) error {
	if a.ConditionShell != "" || len(a.Condition) > 0 {
		argv := a.Condition
		if a.ConditionShell != "" {
			argv = []string{"/bin/sh", "-c", a.ConditionShell}
		}
		err := root.Run(ctx, target.Cmd{Argv: argv, Stdout: out, Stderr: out})
		var ee *target.ExitError
		switch {
		case err == nil:
		case errors.As(err, &ee) && ee.Code == 1:
			log.Info("Condition was false. Will not perform state change.")
			return nil
		default:
			return fmt.Errorf("condition %v: %w", argv, err)
		}
	}
	if a.Message != "" {
		fmt.Fprintln(out, a.Message)
	}
	argv := a.ShutdownArgv()
	if _, err := exec.LookPath("shutdown"); err != nil {
		// busybox: no shutdown applet; poweroff/reboot/halt take -d SECONDS.
		argv = []string{a.Mode, "-d", fmt.Sprint(int(a.Delay / time.Second))}
	}
	log.Info("power_state_change: running", "argv", strings.Join(argv, " "))
	return root.Run(ctx, target.Cmd{Argv: argv, Stdout: out, Stderr: out})
}
