//go:build cloudroot_front

package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
)

// Commands is what the front binary (cmds/cloudroot, built with the
// cloudroot_front tag) knows: status, query, schema, analyze and devel's
// net-convert run here (besides the top level's --version); every other
// subcommand is only its name and help line (commandIndex), for the help
// and argument errors these print, since the front hands those command
// lines to the full agent before Run sees them. This package then links
// none of the other commands' dependencies (docs/performance.md, "A front
// binary").
func Commands() []Command {
	cmds := commandIndex()
	for i, c := range cmds {
		switch c.Name {
		case "status":
			cmds[i] = statusCommand()
		case "query":
			cmds[i] = queryCommand()
		case "schema":
			cmds[i] = schemaCommand()
		case "analyze":
			cmds[i] = analyzeCommand()
		case "devel":
			cmds[i].Run = runDevelFront
		default:
			cmds[i].Run = runInAgent
		}
	}
	return cmds
}

// runDevelFront is devel.go's runDevel for `devel net-convert`, the one
// devel tool the front serves, and for devel's --help, which net-convert's
// argument errors print (subcommandHelp).
func runDevelFront(ctx context.Context, env *Env, args []string) int {
	switch {
	case len(args) == 0:
	case args[0] == "net-convert":
		return netConvertCommand().Run(ctx, env, args[1:])
	case args[0] == "-h" || (strings.HasPrefix(args[0], "--") && len(args[0]) > 2 && strings.HasPrefix("--help", args[0])):
		io.WriteString(env.Stdout, develUsage+develHelp)
		return 0
	}
	return runInAgent(ctx, env, args)
}

// runInAgent stands for a subcommand that only the full agent runs.
func runInAgent(_ context.Context, env *Env, _ []string) int {
	fmt.Fprintf(env.Stderr, "%s: this command runs in the full agent\n", env.progName())
	return 1
}
