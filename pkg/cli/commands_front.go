//go:build cloudroot_front

package cli

import (
	"context"
	"fmt"
)

// Commands is what the front binary (cmds/cloudroot, built with the
// cloudroot_front tag) knows: status, query, schema, analyze, cloud-id,
// features and devel's net-convert, render and make-mime run here
// (besides the top level's --version); every other
// subcommand is only its name and help line (commandIndex), for the help
// and argument errors these print, since the front hands those command
// lines to the full agent before Run sees them. This package then links
// none of the other commands' dependencies (docs/performance.md, "A front
// binary").
func Commands() []Command {
	served := map[string]func() Command{
		"status": statusCommand, "query": queryCommand, "schema": schemaCommand, "analyze": analyzeCommand,
		"cloud-id": cloudIDCommand, "features": featuresCommand, "devel": develCommand,
	}
	cmds := commandIndex()
	for i, c := range cmds {
		if mk, ok := served[c.Name]; ok {
			cmds[i] = mk()
		} else {
			cmds[i].Run = runInAgent
		}
	}
	return cmds
}

// runHotplug is hotplug.go's in the agent (it links the stages): devel's
// hotplug-hook is handed to the agent before Run sees it (cmds/cloudroot's
// served), so the front's devel never gets here.
func runHotplug(ctx context.Context, env *Env, args []string) int {
	return runInAgent(ctx, env, args)
}

// runInAgent stands for a subcommand that only the full agent runs.
func runInAgent(_ context.Context, env *Env, _ []string) int {
	fmt.Fprintf(env.Stderr, "%s: this command runs in the full agent\n", env.progName())
	return 1
}
