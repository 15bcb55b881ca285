// Command cloudroot-agent is the full in-root agent and CLI, installed as
// /usr/lib/cloudroot/cloudroot-agent. It runs the config and final stages
// from the state cloudroot-init handed over (the boot's units call it
// directly), and every subcommand the front binary (cmds/cloudroot, the
// installed /usr/bin/cloudroot and cloud-init) hands over with its argv
// unchanged: argv[0] still says whether it answers as `cloud-init`, as
// `cloud-id`, as cloudroot-generator (the systemd generator) or as
// cloudroot.
package main

import (
	"context"
	"os"

	"github.com/cloudroot/cloudroot/pkg/cli"
)

func main() {
	os.Exit(cli.Run(context.Background(), cli.DefaultEnv(), cli.Argv(os.Args)))
}
