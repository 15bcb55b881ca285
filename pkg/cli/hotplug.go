//go:build !cloudroot_front

package cli

// `cloud-init devel hotplug-hook -s net {query,handle,enable}`: a
// documented refusal. cloud-init's hook re-reads the datasource's metadata
// when udev reports a new NIC and re-renders the network configuration;
// cloudroot renders the network configuration once, in the initramfs, and
// has no hotplug handler, so for it hotplug is never enabled:
//
//   - query: "disabled", exit 0 (26.x's answer when the datasource or the
//     config does not allow hotplug); with no hand-off state, 26.x's
//     "Unable to determine hotplug state. No datasource detected", exit 1.
//   - handle -d PATH -u add: logs "hotplug not enabled for event of type
//     net" and exits 0, as 26.x does for an event it is not enabled for, so
//     a udev rule left from cloud-init does no harm.
//   - enable: not root → "Root is required. Try prepending your command
//     with sudo." exit 1; otherwise 26.x's refusal for a datasource without
//     hotplug support, "hotplug not supported for event of net" on stderr,
//     exit 1. No udev rule or unit is installed.

import (
	"context"
	"fmt"
	"io"
	"slices"

	"github.com/cloudroot/cloudroot/pkg/stages"
	"github.com/cloudroot/cloudroot/pkg/target"
)

var hotplugArgs = &argParser{
	prog:  "cloud-init devel hotplug-hook",
	usage: "usage: cloud-init devel hotplug-hook [-h] -s {net} {query,handle,enable} ...\n",
	help: `
Handle reconfiguration on hotplug events.

options:
  -h, --help            show this help message and exit
  -s {net}, --subsystem {net}
                        subsystem to act on

Hotplug Action:
  {query,handle,enable}
    query               Query if hotplug is enabled for given subsystem.
    handle              Handle the hotplug event.
    enable              Enable hotplug for a given subsystem.
`,
	opts: []argOpt{
		{short: "-s", long: "--subsystem", dest: "subsystem", metavar: "SUBSYSTEM", choices: []string{"net"}, required: true},
	},
	positionals: []string{"hotplug_action"},
	required:    1,
}

var hotplugSimpleHelp = "\noptions:\n  -h, --help  show this help message and exit\n"

var hotplugQueryArgs = &argParser{
	prog:  "cloud-init devel hotplug-hook query",
	usage: "usage: cloud-init devel hotplug-hook query [-h]\n",
	help:  hotplugSimpleHelp,
}

var hotplugEnableArgs = &argParser{
	prog:  "cloud-init devel hotplug-hook enable",
	usage: "usage: cloud-init devel hotplug-hook enable [-h]\n",
	help:  hotplugSimpleHelp,
}

var hotplugHandleArgs = &argParser{
	prog:  "cloud-init devel hotplug-hook handle",
	usage: "usage: cloud-init devel hotplug-hook handle [-h] -d PATH -u {add}\n",
	help: `
options:
  -h, --help            show this help message and exit
  -d PATH, --devpath PATH
                        Sysfs path to hotplugged device
  -u {add}, --udevaction {add}
                        Specify action to take.
`,
	opts: []argOpt{
		{short: "-d", long: "--devpath", dest: "devpath", metavar: "PATH", required: true},
		{short: "-u", long: "--udevaction", dest: "udevaction", metavar: "UDEVACTION", choices: []string{"add"}, required: true},
	},
}

// splitAtAction splits args at the first positional (the action), skipping
// the value of -s/--subsystem.
func splitAtAction(args []string) (before []string, action string, after []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "-s" || a == "--subsystem" || (len(a) > 2 && len(a) < len("--subsystem") && "--subsystem"[:len(a)] == a) {
			i++
			continue
		}
		if !looksLikeOption(a) {
			return args[:i], a, args[i+1:]
		}
	}
	return args, "", nil
}

func runHotplug(_ context.Context, env *Env, args []string) int {
	before, action, after := splitAtAction(args)
	parseArgs := before
	if action != "" {
		parseArgs = append(append([]string{}, before...), action)
	}
	if p, ok := map[string]*argParser{"query": hotplugQueryArgs, "handle": hotplugHandleArgs, "enable": hotplugEnableArgs}[action]; ok && (slices.Contains(after, "-h") || slices.Contains(after, "--help")) {
		io.WriteString(env.Stdout, p.usage+p.help)
		return 0
	}
	if slices.Contains(before, "-h") || slices.Contains(before, "--help") {
		io.WriteString(env.Stdout, hotplugArgs.usage+hotplugArgs.help)
		return 0
	}
	if _, rc, ok := hotplugArgs.run(env, parseArgs); !ok {
		return rc
	}
	if !slices.Contains(hotplugActions, action) {
		fmt.Fprintf(env.Stderr, "%s%s: error: argument hotplug_action: invalid choice: '%s' (choose from %s)\n", hotplugArgs.usage, hotplugArgs.prog, action, pyChoices(hotplugActions))
		return 2
	}
	p := map[string]*argParser{"query": hotplugQueryArgs, "handle": hotplugHandleArgs, "enable": hotplugEnableArgs}[action]
	if _, rc, ok := p.run(env, after); !ok {
		return rc
	}
	switch action {
	case "query":
		root, err := target.New(env.Root)
		if err == nil {
			_, err = stages.LoadState(root)
		}
		if err != nil {
			fmt.Fprintln(env.Stdout, "Unable to determine hotplug state. No datasource detected")
			return 1
		}
		fmt.Fprintln(env.Stdout, "disabled")
	case "handle":
		cliLog(env, "hotplug_hook.py", "DEBUG", "hotplug not enabled for event of type net")
	case "enable":
		if !env.IsRoot {
			io.WriteString(env.Stderr, "Root is required. Try prepending your command with sudo.\n")
			return 1
		}
		fmt.Fprintln(env.Stderr, "hotplug not supported for event of net")
		return 1
	}
	return 0
}
