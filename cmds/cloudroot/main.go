// Command cloudroot is the in-root agent and CLI. It runs the config and
// final stages from the state cloudroot-init handed over, and answers as
// `cloud-init` (when invoked under that name) for tools that script it, and
// as `cloud-id` under that name.
package main

import (
	"context"
	"os"
	"path/filepath"

	"github.com/cloudroot/cloudroot/pkg/cli"
)

func main() {
	args := os.Args[1:]
	if filepath.Base(os.Args[0]) == "cloud-id" {
		args = append([]string{"cloud-id"}, args...)
	}
	os.Exit(cli.Run(context.Background(), cli.DefaultEnv(), args))
}
