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
	"sort"
	"strings"
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
	// Global flags cloud-init accepts before the subcommand.
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		switch args[0] {
		case "--version", "-v":
			fmt.Fprintf(env.Stdout, "/usr/bin/cloud-init %s\n", Version)
			return 0
		case "--debug", "-d":
			env.Log = slog.New(slog.NewTextHandler(env.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
		case "--force":
		case "-h", "--help":
			usage(env.Stdout)
			return 0
		default:
			fmt.Fprintf(env.Stderr, "error: unrecognized argument %s\n", args[0])
			usage(env.Stderr)
			return 2
		}
		args = args[1:]
	}
	if len(args) == 0 {
		usage(env.Stderr)
		return 2
	}
	c, ok := lookup(args[0])
	if !ok {
		fmt.Fprintf(env.Stderr, "error: invalid choice: %q\n", args[0])
		usage(env.Stderr)
		return 2
	}
	return c.Run(ctx, env, args[1:])
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: cloud-init [-h] [--version] [--debug] [--force] {subcommand} ...")
	fmt.Fprintln(w, "\nsubcommands:")
	cs := Commands()
	sort.Slice(cs, func(i, j int) bool { return cs[i].Name < cs[j].Name })
	for _, c := range cs {
		fmt.Fprintf(w, "  %-14s %s\n", c.Name, c.Short)
	}
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
