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
	"github.com/cloudroot/cloudroot/pkg/stages"
	"github.com/cloudroot/cloudroot/pkg/state"
	"github.com/cloudroot/cloudroot/pkg/target"
)

func modulesCommand() Command {
	return Command{
		Name:  "modules",
		Short: "Activate modules using a given configuration key.",
		Run:   runModules,
	}
}

func runModules(ctx context.Context, env *Env, args []string) int {
	mode := "config"
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--mode" || a == "-m":
			if i+1 >= len(args) {
				fmt.Fprintln(env.Stderr, "error: argument --mode/-m: expected one argument")
				return 2
			}
			mode = args[i+1]
			i++
		case strings.HasPrefix(a, "--mode="):
			mode = strings.TrimPrefix(a, "--mode=")
		case strings.HasPrefix(a, "-m") && len(a) > 2:
			mode = a[2:]
		case a == "--file" || a == "-f":
			fmt.Fprintln(env.Stderr, "error: --file is not supported by cloudroot yet")
			return 2
		case a == "-h" || a == "--help":
			fmt.Fprintln(env.Stdout, "usage: cloud-init modules [-h] [--mode {init,config,final}]")
			return 0
		default:
			fmt.Fprintf(env.Stderr, "error: unrecognized arguments: %s\n", a)
			return 2
		}
	}
	var stage modules.Stage
	switch mode {
	case "config":
		stage = modules.StageConfig
	case "final":
		stage = modules.StageFinal
	case "init":
		fmt.Fprintln(env.Stderr, "error: modules --mode init runs inside the initramfs (cloudroot-init); nothing to do here")
		return 1
	default:
		fmt.Fprintf(env.Stderr, "error: argument --mode/-m: invalid choice: '%s' (choose from 'init', 'config', 'final')\n", mode)
		return 2
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
	logw, outw, closeLogs := openLogs(env)
	defer closeLogs()
	log := slog.New(slog.NewMultiHandler(
		cilog.NewHandler(logw, cilog.Options{Level: slog.LevelDebug, Logger: "stages.py"}),
		env.Log.Handler(),
	)).With("stage", "modules-"+mode)
	if rc, err := root.Recover(); err != nil {
		log.Warn("recovering an interrupted account commit", "err", err)
	} else if !rc.Empty() {
		log.Warn("finished an account commit interrupted by a power cut", "rolled_forward", rc.RolledForward, "rolled_back", rc.RolledBack)
	}
	start := time.Now()
	_, _ = io.WriteString(outw, stages.Welcome(Version, "modules:"+mode, env.Now(), env.Uptime()))
	log.Info("cloudroot agent starting", "version", Version, "mode", mode)
	errs, power, err := stages.Modules(ctx, stages.AgentOptions{
		Root: root, Log: log, Out: outw, Now: env.Now, Uptime: env.Uptime, Version: Version,
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
		fmt.Fprintf(env.Stderr, "cloudroot: %s\n", e)
	}
	if power != nil {
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
