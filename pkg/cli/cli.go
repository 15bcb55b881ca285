// Package cli is the cloudroot agent's command line, which also answers as
// `cloud-init` for tools that script cloud-init: the same subcommands, flags,
// output shapes and exit codes. One file per subcommand.
package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"
)

// Version is reported by --version and written where cloud-init writes its own.
var Version = "26.2-cloudroot"

// Env is everything a subcommand touches outside its arguments.
type Env struct {
	// Root is the filesystem root the command works on ("/" normally; a
	// temp dir in tests). Paths like /run/cloud-init resolve under it.
	Root   string
	Stdout io.Writer
	Stderr io.Writer
	Log    *slog.Logger
	// Now and Uptime are clocks (tests fix them).
	Now    func() time.Time
	Uptime func() float64
	// Sleep waits (status --wait polls with it).
	Sleep func(ctx context.Context, d time.Duration) error
	// IsRoot reports whether the caller is uid 0 (query redaction).
	IsRoot bool
	// Prog is the name the program was called by (argv[0]), which
	// --version and the help print; "" means cloud-init.
	Prog string
	// Force is the global --force.
	Force bool
	// StdinTTY is whether stdin is a terminal (--all-stages skips its
	// socket protocol then); NotifySocket is $NOTIFY_SOCKET.
	StdinTTY     bool
	NotifySocket string
}

// Path returns p under Env.Root.
func (e *Env) Path(p string) string { return filepath.Join(e.Root, p) }

// DefaultEnv is the environment of a real process.
func DefaultEnv() *Env {
	return &Env{
		Root:   "/",
		Stdout: os.Stdout,
		Stderr: os.Stderr,
		Log:    slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
		Now:    time.Now,
		Uptime: ReadUptime,
		Sleep: func(ctx context.Context, d time.Duration) error {
			t := time.NewTimer(d)
			defer t.Stop()
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-t.C:
				return nil
			}
		},
		IsRoot: os.Geteuid() == 0,
		Prog:   progFromArgs(os.Args),

		StdinTTY:     stdinIsTerminal(),
		NotifySocket: os.Getenv("NOTIFY_SOCKET"),
	}
}

// Command is one subcommand.
type Command struct {
	Name  string
	Short string
	Run   func(ctx context.Context, env *Env, args []string) int
}

// lookup finds a subcommand in the explicit list of commands.go.
func lookup(name string) (Command, bool) {
	for _, c := range Commands() {
		if c.Name == name {
			return c, true
		}
	}
	return Command{}, false
}

// Run runs the command line args (without argv[0]) and returns the exit code.
func Run(ctx context.Context, env *Env, args []string) int {
	if len(args) == 0 {
		return topError(ctx, env, nil, "a subcommand is required")
	}
	o, rest, rc, done := parseTop(ctx, env, args)
	if done {
		return rc
	}
	if o.debug {
		env.Log = debugLogger(env.Stderr)
	}
	if env.Log == nil {
		env.Log = slog.New(slog.DiscardHandler)
	}
	env.Force = o.force
	if len(rest) == 0 {
		if o.allStages {
			return runAllStages(ctx, env)
		}
		io.WriteString(env.Stdout, topUsage(env.progName()))
		io.WriteString(env.Stderr, "\nNo Subcommand specified. Please specify a subcommand in addition to the option")
		return 1
	}
	c, _ := lookup(rest[0])
	if o.allStages {
		// 26.x parses the subcommand and then ignores it for --all-stages.
		return runAllStages(ctx, env)
	}
	return runSubcommand(ctx, env, c, rest)
}

// ReadUptime returns seconds since boot: CLOCK_BOOTTIME where available
// (the clock the initramfs stamps status.json with), else /proc/uptime.
func ReadUptime() float64 {
	if up, ok := bootTime(); ok {
		return up
	}
	b, err := os.ReadFile("/proc/uptime")
	if err != nil {
		return 0
	}
	var up float64
	fmt.Sscanf(string(b), "%f", &up)
	return up
}

func progFromArgs(a []string) string {
	if len(a) == 0 {
		return "cloud-init"
	}
	return a[0]
}

// GeneratorName is the generator's file name; the agent runs as the
// generator when invoked under it (see Argv).
const GeneratorName = "cloudroot-generator"

// Argv turns a process's os.Args into the arguments Run takes: invoked as
// cloudroot-generator (the generator link), the agent runs `generator`;
// invoked as cloud-id, `cloud-id`.
func Argv(osArgs []string) []string {
	if len(osArgs) == 0 {
		return nil
	}
	switch filepath.Base(osArgs[0]) {
	case GeneratorName:
		return append([]string{"generator"}, osArgs[1:]...)
	case "cloud-id":
		return append([]string{"cloud-id"}, osArgs[1:]...)
	}
	return osArgs[1:]
}
