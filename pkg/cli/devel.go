package cli

// `cloud-init devel {net-convert,render,make-mime}` and the small argparse
// emulation query, schema and the devel tools share.
//
// The contract, after cloud-init 26.x cloudinit/cmd/devel/{parser,render,
// make_mime}.py:
//
//   - devel without a subcommand, or with one it does not know, prints the
//     usage and an argparse error on stderr and exits 2. hotplug-hook is
//     hotplug.go's documented refusal (cloudroot has no hotplug handler).
//   - render USER_DATA [-i FILE] [-d]: the instance data is -i, else
//     instance-data-sensitive.json for root (instance-data.json, with a
//     warning, when that is missing) and instance-data.json for others. A
//     missing instance-data or user-data file, a file that is not a
//     "## template: jinja" document, unreadable instance data, a template
//     syntax error or an empty rendering log an error and exit 1; the
//     rendered document is written to stdout as is (no newline added).
//   - make-mime -a FILE:TYPE... [-l] [-f]: -l prints the content types one a
//     line; otherwise the attachments become a multipart/mixed message
//     printed with a trailing newline (Python's print). An unknown content
//     type is an "ERROR:" line per attachment plus "Invalid content-types,
//     override with --force" on stderr and exit 1; with --force the lines
//     say "WARNING:" and the message is printed (exit 0).
//   - net-convert is netconvert.go's command.
//   - argument errors: usage plus "<prog>: error: <msg>" on stderr, exit 2;
//     -h/--help prints the help on stdout, exit 0.
//
// Log lines use the format cloud-init 26.x's command line configures on the
// root logger: "<UTC time> - <file>.py[<LEVEL>]: <message>".

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/userdata"
)

// ---------------------------------------------------------------------------
// devel

func develCommand() Command {
	return Command{
		Name:  "devel",
		Short: "Run development tools.",
		Run:   runDevel,
	}
}

func runDevel(ctx context.Context, env *Env, args []string) int {
	usageErr := func(msg string) int {
		fmt.Fprintf(env.Stderr, "%scloud-init devel: error: %s\n", develUsage, msg)
		return 2
	}
	// Options before the subcommand: only -h/--help exists.
	for len(args) > 0 && looksLikeOption(args[0]) {
		switch {
		case args[0] == "-h" || (strings.HasPrefix(args[0], "--") && len(args[0]) > 2 && strings.HasPrefix("--help", args[0])):
			io.WriteString(env.Stdout, develUsage+develHelp)
			return 0
		case args[0] == "--":
			args = args[1:]
			goto sub
		}
		return usageErr(fmt.Sprintf("unrecognized arguments: %s", args[0]))
	}
sub:
	if len(args) == 0 {
		return usageErr("the following arguments are required: subcommand")
	}
	switch args[0] {
	case "hotplug-hook":
		return runHotplug(ctx, env, args[1:])
	case "net-convert":
		return netConvertCommand().Run(ctx, env, args[1:])
	case "render":
		return runRender(ctx, env, args[1:])
	case "make-mime":
		return runMakeMIME(ctx, env, args[1:])
	}
	return usageErr(fmt.Sprintf("argument subcommand: invalid choice: '%s' (choose from %s)", args[0], pyChoices(develSubcommands)))
}

// ---------------------------------------------------------------------------
// devel render

var renderArgs = &argParser{
	prog:  "cloud-init devel render",
	usage: "usage: cloud-init devel render [-h] [-i INSTANCE_DATA] [-d] user_data\n",
	help: `
positional arguments:
  user_data             Path to the user-data file to render

options:
  -h, --help            show this help message and exit
  -i INSTANCE_DATA, --instance-data INSTANCE_DATA
                        Optional path to instance-data.json file. Defaults to
                        /run/cloud-init
  -d, --debug           Add verbose messages during template render
`,
	opts: []argOpt{
		{short: "-i", long: "--instance-data", dest: "instance_data", metavar: "INSTANCE_DATA"},
		{short: "-d", long: "--debug", dest: "debug"},
	},
	positionals: []string{"user_data"},
	required:    1,
}

func runRender(_ context.Context, env *Env, args []string) int {
	a, rc, ok := renderArgs.run(env, args)
	if !ok {
		return rc
	}
	const logFile = "render.py"
	udPath := a.pos[0]
	shown, host := a.value("instance_data"), a.value("instance_data")
	if shown == "" {
		shown, host = defaultInstanceData(env, logFile)
	}
	if _, err := os.Stat(host); err != nil {
		cliLog(env, logFile, "ERROR", "Missing instance-data.json file: %s", shown)
		return 1
	}
	ud, err := os.ReadFile(udPath)
	if err != nil {
		cliLog(env, logFile, "ERROR", "Missing user-data file: %s", udPath)
		return 1
	}
	if !isJinja(ud) {
		cliLog(env, logFile, "ERROR", "Cannot render from instance data due to exception: NotJinjaError('Payload is not a jinja template')")
		return 1
	}
	data, msg := loadJinjaInstanceData(host, shown)
	if msg != "" {
		cliLog(env, logFile, "ERROR", "Cannot render from instance data due to exception: JinjaLoadError(%s)", pyQuote(msg))
		return 1
	}
	out, ok := renderPayload(env, ud, udPath, data, a.flag("debug"), func(syntax string) {
		cliLog(env, logFile, "ERROR", "Failed to render templated user-data file '%s'. %s", udPath, syntax)
	})
	if !ok {
		return 1
	}
	if len(out) == 0 {
		cliLog(env, logFile, "ERROR", "Unable to render user-data file: %s", udPath)
		return 1
	}
	env.Stdout.Write(out)
	return 0
}

// ---------------------------------------------------------------------------
// devel make-mime

var makeMIMEArgs = &argParser{
	prog:  "cloud-init devel make-mime",
	usage: "usage: cloud-init devel make-mime [-h] [-a <file>:<content-type>] [-l] [-f]\n",
	help: `
Generate multi-part mime messages for user-data.

options:
  -h, --help            show this help message and exit
  -a <file>:<content-type>, --attach <file>:<content-type>
                        attach the given file as the specified content-type
  -l, --list-types      List support cloud-init content types.
  -f, --force           Ignore unknown content-type warnings

Example: make-mime -a config.yaml:cloud-config -a script.sh:x-shellscript >
user-data
`,
	opts: []argOpt{
		{short: "-a", long: "--attach", dest: "files", metavar: "<file>:<content-type>", repeat: true},
		{short: "-l", long: "--list-types", dest: "list_types"},
		{short: "-f", long: "--force", dest: "force"},
	},
}

func runMakeMIME(_ context.Context, env *Env, args []string) int {
	a, rc, ok := makeMIMEArgs.run(env, args)
	if !ok {
		return rc
	}
	// argparse converts each -a as it parses, so a bad one is a usage error
	// even with --list-types.
	var parts []userdata.Attachment
	for _, spec := range a.values["files"] {
		name, typ, found := strings.Cut(spec, ":")
		if !found {
			fmt.Fprintf(env.Stderr, "%scloud-init devel make-mime: error: Invalid value for '%s'\n", makeMIMEArgs.usage, spec)
			return 2
		}
		b, err := os.ReadFile(name)
		if err != nil {
			fmt.Fprintf(env.Stderr, "%scloud-init devel make-mime: error: argument -a/--attach: can't open '%s': %s\n", makeMIMEArgs.usage, name, pyOSError(err))
			return 2
		}
		parts = append(parts, userdata.Attachment{Filename: name, Type: strings.TrimSpace(typ), Content: b})
	}
	if a.flag("list_types") {
		io.WriteString(env.Stdout, strings.Join(userdata.ListTypes(), "\n")+"\n")
		return 0
	}
	msg, err := userdata.MakeMIME(parts)
	if err != nil && !errors.Is(err, userdata.ErrUnknownType) {
		fmt.Fprintf(env.Stderr, "Error: %s\n", err)
		return 1
	}
	if err != nil {
		level := "ERROR"
		if a.flag("force") {
			level = "WARNING"
		}
		known := userdata.ListTypes()
		for i, p := range parts {
			sub := strings.ToLower(strings.TrimPrefix(p.Type, "text/"))
			if !slices.Contains(known, sub) {
				fmt.Fprintf(env.Stderr, "%s: content type 'text/%s' for attachment %d may be incorrect!\n", level, sub, i+1)
			}
		}
		io.WriteString(env.Stderr, "Invalid content-types, override with --force\n")
		if !a.flag("force") {
			return 1
		}
	}
	env.Stdout.Write(msg)
	io.WriteString(env.Stdout, "\n")
	return 0
}
