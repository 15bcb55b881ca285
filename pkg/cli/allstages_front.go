//go:build cloudroot_front

package cli

import (
	"context"
	"io"
)

// runAllStages is allstages.go's in the full agent; the front binary
// (cmds/cloudroot) hands --all-stages to the agent before cli.Run sees it.
func runAllStages(_ context.Context, env *Env) int {
	io.WriteString(env.Stderr, "--all-stages runs in the full agent\n")
	return 1
}
