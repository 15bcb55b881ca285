// Command cloudroot is the in-root agent and CLI. It runs the config and
// final stages from the state cloudroot-init handed over, and answers as
// `cloud-init` (when invoked under that name) for tools that script it, and
// as `cloud-id` under that name, and runs as the systemd generator when
// invoked as cloudroot-generator.
package main

import (
	"context"
	"os"

	"github.com/cloudroot/cloudroot/pkg/cli"
)

func main() {
	os.Exit(cli.Run(context.Background(), cli.DefaultEnv(), cli.Argv(os.Args)))
}
