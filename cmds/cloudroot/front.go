package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/cloudroot/cloudroot/pkg/cli"
)

// The contract:
//
//   - served says which command lines the front answers itself:
//     `--version`/`-v`, `status`, `query`, `schema` and `devel net-convert`
//     (each with any of its flags, its --help and its argument errors),
//     possibly after the global -d/--debug and --force. Anything else —
//     other subcommands, devel's other tools and its own options, --help,
//     --all-stages, unknown or abbreviated options, no arguments, and the
//     cloud-id and cloudroot-generator names — goes to the full agent,
//     which prints exactly what it always printed (errors and help
//     included).
//   - The full agent is the first of Agents that exists: cloudroot-agent
//     beside this program (a build directory), then AgentPath. It is exec'd
//     with this process's argv (argv[0] included: it selects cloud-init,
//     cloud-id, generator or cloudroot behaviour) and environment.
//   - No agent found: one line on stderr naming every file looked for,
//     exit 1. An exec that fails: the path and the error, exit 1.

// AgentPath is where packages and `cloudroot install` put the full agent.
const AgentPath = "/usr/lib/cloudroot/cloudroot-agent"

// AgentName is the full agent's file name.
const AgentName = "cloudroot-agent"

// execFunc replaces the process (syscall.Exec); it returns only on failure.
type execFunc func(path string, argv []string, envv []string) error

// front is the front binary's wiring; tests give it a fake Exec.
type front struct {
	Self   string   // this program's path ("" when unknown)
	Agents []string // where to look for the full agent, in order
	Exec   execFunc
	Stderr io.Writer
	// Stat checks that a candidate exists (os.Stat when nil).
	Stat func(string) (fs.FileInfo, error)
}

// agentCandidates lists where the full agent may be for a front at self;
// never self (a front installed in the agent's place would exec itself
// forever).
func agentCandidates(self string) []string {
	var out []string
	for _, p := range []string{filepath.Join(filepath.Dir(self), AgentName), AgentPath} {
		if self != "" && p != self && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	if self == "" {
		out = []string{AgentPath}
	}
	return out
}

// served reports whether the front answers argv (a process's os.Args)
// itself.
func served(argv []string) bool {
	if len(argv) == 0 {
		return false
	}
	switch filepath.Base(argv[0]) {
	case cli.GeneratorName:
		return false
	case "cloud-id":
		return true
	}
	for i, a := range argv[1:] {
		switch a {
		case "-d", "--debug", "--force":
			continue
		case "--version", "-v", "status", "query", "schema", "analyze", "cloud-id", "features":
			return true
		case "devel":
			// Every devel tool, devel's help and its argument errors, but
			// not hotplug-hook, which links the stages (a command line
			// naming it anywhere goes to the agent, which answers every
			// one the same).
			return !slices.Contains(argv[i+2:], "hotplug-hook")
		}
		return false
	}
	return false
}

// run answers argv itself or execs the full agent; it returns the exit code.
func (f front) run(ctx context.Context, argv, environ []string, env func() *cli.Env) int {
	if served(argv) {
		return cli.Run(ctx, env(), cli.Argv(argv))
	}
	agent, err := f.findAgent()
	if err != nil {
		fmt.Fprintf(f.Stderr, "%s: %v\n", progName(argv), err)
		return 1
	}
	err = f.Exec(agent, argv, environ)
	fmt.Fprintf(f.Stderr, "%s: running the full agent %s: %v\n", progName(argv), agent, err)
	return 1
}

// findAgent returns the first of f.Agents that exists.
func (f front) findAgent() (string, error) {
	stat := f.Stat
	if stat == nil {
		stat = os.Stat
	}
	var missing []string
	for _, p := range f.Agents {
		_, err := stat(p)
		if err == nil {
			return p, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("the full agent %s: %w", p, err)
		}
		missing = append(missing, p)
	}
	switch len(missing) {
	case 0:
		return "", fmt.Errorf("the full agent is missing: %s is this front binary, not the agent (reinstall cloudroot)", AgentPath)
	case 1:
		return "", fmt.Errorf("the full agent %s is missing (this command runs in it; reinstall cloudroot)", missing[0])
	}
	return "", fmt.Errorf("the full agent is missing: neither %s nor %s exists (this command runs in it; reinstall cloudroot)", missing[0], joinOr(missing[1:]))
}

func joinOr(s []string) string {
	out := s[0]
	for _, p := range s[1:] {
		out += " nor " + p
	}
	return out
}

func progName(argv []string) string {
	if len(argv) == 0 || argv[0] == "" {
		return "cloudroot"
	}
	return filepath.Base(argv[0])
}
