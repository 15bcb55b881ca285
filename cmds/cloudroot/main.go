// Command cloudroot is the in-root agent and CLI. It runs the config and
// final stages from the state cloudroot-init handed over, and answers as
// `cloud-init` (when invoked under that name) for tools that script it.
package main

import (
	"context"
	"os"

	"github.com/cloudroot/cloudroot/pkg/cli"
)

func main() {
	os.Exit(cli.Run(context.Background(), cli.DefaultEnv(), os.Args[1:]))
}
