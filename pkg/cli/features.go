package cli

// features: the feature flags this build supports, one per line, sorted,
// as cloud-init 26.x's `cloud-init features` lists version.FEATURES.

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// Features are the capabilities cloudroot advertises under cloud-init's
// names: it reads network-config version 1 and version 2 (pkg/netconfig).
var Features = []string{"NETWORK_CONFIG_V1", "NETWORK_CONFIG_V2"}

func featuresCommand() Command {
	return Command{
		Name:  "features",
		Short: "List defined features.",
		Run:   runFeatures,
	}
}

const featuresHelp = "usage: cloud-init features [-h]\n\noptions:\n  -h, --help  show this help message and exit\n"

func runFeatures(_ context.Context, env *Env, args []string) int {
	for _, a := range args {
		if a == "-h" || a == "--help" {
			fmt.Fprint(env.Stdout, featuresHelp)
			return 0
		}
		// 26.x's SubcommandAwareArgumentParser: the error, then the
		// subcommand's help.
		fmt.Fprintf(env.Stderr, "error: unrecognized arguments: %s\n\n%s", strings.Join(args, " "), featuresHelp)
		return 2
	}
	f := slices.Clone(Features)
	slices.Sort(f)
	fmt.Fprint(env.Stdout, strings.Join(f, "\n")+"\n")
	return 0
}
