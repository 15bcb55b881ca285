// Command cloudroot is the front of the in-root agent: the installed
// /usr/bin/cloudroot and /usr/bin/cloud-init. Scripts and people run it
// often and want quick answers (`cloud-init status --wait`, `--version`,
// `query`, `schema`, `analyze`, `cloud-id`, the devel tools), and a
// Go program runs the package initialisation of everything it links before
// main, so this binary links only what those answers need (pkg/cli built
// with the cloudroot_front tag, as `just agent` builds it) and answers them
// itself; every other command line it hands to the full agent
// (cmds/cloudroot-agent, /usr/lib/cloudroot/cloudroot-agent) by exec, with
// argv and the environment unchanged. The boot's units call the full agent
// directly. docs/performance.md ("A front binary") has the measurements.
package main

import (
	"context"
	"os"
	"syscall"

	"github.com/cloudroot/cloudroot/pkg/cli"
)

func main() {
	self, err := os.Executable()
	if err != nil {
		self = ""
	}
	f := front{
		Self:   self,
		Agents: agentCandidates(self),
		Exec:   syscall.Exec,
		Stderr: os.Stderr,
	}
	os.Exit(f.run(context.Background(), os.Args, os.Environ(), cli.DefaultEnv))
}
