package cli

// The top-level parser: cloud-init 26.x's global options, its help and its
// argument errors (cloudinit/cmd/main.py).
//
// The contract:
//
//   - Options before the subcommand: -h/--help (the help, exit 0),
//     --version/-v ("<prog> <version>", prog being the name the program was
//     called by, exit 0), --debug/-d, --force, --all-stages; long options
//     by unique prefix, short flags clustered (-dv).
//   - No argument at all: "error: a subcommand is required", a blank line
//     and the help on stderr, exit 2. Options but no subcommand: the usage
//     on stdout, "\nNo Subcommand specified. Please specify a subcommand in
//     addition to the option" on stderr, exit 1. --all-stages without a
//     subcommand runs every stage in one process (allstages.go).
//   - An argument error anywhere is reported as 26.x's
//     SubcommandAwareArgumentParser does: "error: <message>", a blank line,
//     then the help of the parser that failed (for an unrecognized
//     argument, the help of the first subcommand named on the line) on
//     stderr, exit 2. Subcommands that print Python's default layout
//     ("usage: ...\n<prog>: error: <message>") are rewritten into it by
//     usageRewriter, so every parser gets the layout from one place.
//   - Called as `cloud-init` the help lists 26.x's subcommands exactly;
//     called by another name (cloudroot) it lists cloudroot's own too.

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// upstreamSubcommands are 26.x's subcommands in its help order.
var upstreamSubcommands = []string{"init", "modules", "single", "query", "features", "analyze", "devel", "collect-logs", "clean", "status", "schema"}

// topHelpBody is 26.x's help after the usage, for its own subcommands.
const topHelpBody = `
options:
  -h, --help            show this help message and exit
  --version, -v         Show program's version number and exit.
  --debug, -d           Show additional pre-action logging (default: False).
  --force               Force running even if no datasource is found (use at
                        your own risk).
  --all-stages          Run cloud-init's stages under a single process using a
                        synchronization protocol. This is not intended for CLI
                        usage.

Subcommands:
  {init,modules,single,query,features,analyze,devel,collect-logs,clean,status,schema}
    init                Initialize cloud-init and perform initial modules.
    modules             Activate modules using a given configuration key.
    single              Run a single module.
    query               Query standardized instance metadata from the command
                        line.
    features            List defined features.
    analyze             Devel tool: Analyze cloud-init logs and data.
    devel               Run development tools.
    collect-logs        Collect and tar all cloud-init debug info.
    clean               Remove logs and artifacts so cloud-init can re-run.
    status              Report cloud-init status or wait on completion.
    schema              Validate cloud-config files using jsonschema.
`

// progName is the name the program was called by, as argparse's %(prog)s.
func (e *Env) progName() string {
	if e.Prog != "" {
		return e.Prog
	}
	return "cloud-init"
}

// asCloudInit reports whether the program was called as cloud-init.
func (e *Env) asCloudInit() bool { return filepath.Base(e.progName()) == "cloud-init" }

// topUsage is the usage line, wrapped as argparse wraps it.
func topUsage(prog string) string {
	indent := strings.Repeat(" ", len("usage: "+prog+" "))
	return "usage: " + prog + " [-h] [--version] [--debug] [--force] [--all-stages]\n" +
		indent + "{" + strings.Join(upstreamSubcommands, ",") + "}\n" +
		indent + "...\n"
}

// topHelp is the whole --help text.
func topHelp(env *Env) string {
	s := topUsage(env.progName()) + topHelpBody
	if env.asCloudInit() {
		return s
	}
	var b strings.Builder
	b.WriteString(s)
	b.WriteString("\ncloudroot's own subcommands:\n")
	for _, c := range Commands() {
		if isUpstreamSubcommand(c.Name) {
			continue
		}
		fmt.Fprintf(&b, "    %-19s %s\n", c.Name, c.Short)
	}
	return b.String()
}

func isUpstreamSubcommand(name string) bool {
	for _, n := range upstreamSubcommands {
		if n == name {
			return true
		}
	}
	return false
}

// topError reports an argument error the way 26.x does: the message, a
// blank line and the help of the first subcommand named in args (else the
// top-level help) on stderr. It returns 2.
func topError(ctx context.Context, env *Env, args []string, msg string) int {
	fmt.Fprintf(env.Stderr, "error: %s\n\n", msg)
	for _, a := range args {
		if _, ok := lookup(a); ok && isUpstreamSubcommand(a) {
			io.WriteString(env.Stderr, subcommandHelp(ctx, env, []string{a}))
			return 2
		}
	}
	io.WriteString(env.Stderr, topHelp(env))
	return 2
}

// subcommandHelp is what `cloud-init <words...> --help` prints.
func subcommandHelp(ctx context.Context, env *Env, words []string) string {
	var out bytes.Buffer
	henv := *env
	henv.Stdout = &out
	henv.Stderr = io.Discard
	c, ok := lookup(words[0])
	if !ok {
		return ""
	}
	c.Run(ctx, &henv, append(append([]string{}, words[1:]...), "--help"))
	return out.String()
}

type topOptions struct {
	debug, force, allStages bool
}

var topLongOpts = []string{"--help", "--version", "--debug", "--force", "--all-stages"}

// parseTop consumes the global options before the subcommand. done means
// the caller returns rc (help, version or an error was printed).
func parseTop(ctx context.Context, env *Env, args []string) (o topOptions, rest []string, rc int, done bool) {
	all := args
	var unknown []string
	for len(args) > 0 && strings.HasPrefix(args[0], "-") && args[0] != "-" {
		a := args[0]
		args = args[1:]
		if a == "--" {
			break
		}
		var names []string
		if strings.HasPrefix(a, "--") {
			name, _, _ := strings.Cut(a, "=")
			var match []string
			for _, l := range topLongOpts {
				if l == name {
					match = []string{l}
					break
				}
				if strings.HasPrefix(l, name) {
					match = append(match, l)
				}
			}
			switch len(match) {
			case 0:
				unknown = append(unknown, a)
				continue
			case 1:
				names = match
			default:
				return o, nil, topError(ctx, env, all, fmt.Sprintf("ambiguous option: %s could match %s", name, strings.Join(match, ", "))), true
			}
		} else {
			short := map[byte]string{'h': "--help", 'v': "--version", 'd': "--debug"}
			for j := 1; j < len(a); j++ {
				n, ok := short[a[j]]
				if ok {
					names = append(names, n)
					continue
				}
				if j == 1 {
					unknown = append(unknown, a)
					break
				}
				return o, nil, topError(ctx, env, all, fmt.Sprintf("argument %s: ignored explicit argument '%s'", shortDisplay(names[len(names)-1]), a[j:])), true
			}
		}
		for _, n := range names {
			switch n {
			case "--help":
				io.WriteString(env.Stdout, topHelp(env))
				return o, nil, 0, true
			case "--version":
				fmt.Fprintf(env.Stdout, "%s %s\n", env.progName(), Version)
				return o, nil, 0, true
			case "--debug":
				o.debug = true
			case "--force":
				o.force = true
			case "--all-stages":
				o.allStages = true
			}
		}
	}
	if len(args) == 0 {
		if len(unknown) > 0 {
			return o, nil, topError(ctx, env, all, "unrecognized arguments: "+strings.Join(unknown, " ")), true
		}
		return o, nil, 0, false
	}
	if _, ok := lookup(args[0]); !ok {
		choices := upstreamSubcommands
		if !env.asCloudInit() {
			choices = nil
			for _, c := range Commands() {
				choices = append(choices, c.Name)
			}
		}
		q := make([]string, len(choices))
		for i, c := range choices {
			q[i] = "'" + c + "'"
		}
		return o, nil, topError(ctx, env, all, fmt.Sprintf("argument subcommand: invalid choice: '%s' (choose from %s)", args[0], strings.Join(q, ", "))), true
	}
	if len(unknown) > 0 {
		return o, nil, topError(ctx, env, all, "unrecognized arguments: "+strings.Join(unknown, " ")), true
	}
	return o, args, 0, false
}

func shortDisplay(long string) string {
	switch long {
	case "--version":
		return "--version/-v"
	case "--debug":
		return "--debug/-d"
	}
	return long
}

// usageRewriter holds back a subcommand's stderr while it could still be
// Python's default argparse error ("usage: ...\n<prog>: error: <msg>\n")
// and passes everything else straight through.
type usageRewriter struct {
	w       io.Writer
	buf     bytes.Buffer
	passing bool
}

func (u *usageRewriter) Write(p []byte) (int, error) {
	if u.passing {
		return u.w.Write(p)
	}
	u.buf.Write(p)
	b := u.buf.Bytes()
	n := min(len(b), len("usage: "))
	if !bytes.HasPrefix(b, []byte("usage: ")[:n]) {
		u.passing = true
		_, err := u.w.Write(b)
		u.buf.Reset()
		return len(p), err
	}
	return len(p), nil
}

var argparseErrorRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?s)^usage: .*?\n(cloud-init(?: [a-z-]+)*): error: ([^\n]*)\n$`)
})

var develSubcommands = []string{"hotplug-hook", "net-convert", "render", "make-mime"}

var hotplugActions = []string{"query", "handle", "enable"}

// subChoices are the subcommands of each cloud-init parser that has any,
// by its words after "cloud-init".
var subChoices = sync.OnceValue(func() map[string][]string {
	return map[string][]string{
		"":                   upstreamSubcommands,
		"devel":              develSubcommands,
		"devel hotplug-hook": hotplugActions,
		"analyze":            {"blame", "show", "dump", "boot"},
	}
})

// finish writes what was held back: rewritten into 26.x's layout when it is
// an argparse error of a cloud-init parser (exit 2), as it was otherwise.
// 26.x's error() prints the help of the failing parser's first subcommand
// named anywhere in the arguments, else its own; an unrecognized argument
// is reported by the top-level parser.
func (u *usageRewriter) finish(ctx context.Context, env *Env, rc int, args []string) {
	if u.passing || u.buf.Len() == 0 {
		return
	}
	m := argparseErrorRE().FindStringSubmatch(u.buf.String())
	if rc != 2 || m == nil {
		u.w.Write(u.buf.Bytes())
		return
	}
	words := strings.Fields(m[1])[1:]
	if strings.HasPrefix(m[2], "unrecognized arguments:") {
		words = nil
	}
	if choices, ok := subChoices()[strings.Join(words, " ")]; ok {
		for _, a := range args {
			if slices.Contains(choices, a) {
				words = append(words, a)
				break
			}
		}
	}
	var help string
	if len(words) == 0 {
		help = topHelp(env)
	} else {
		help = subcommandHelp(ctx, env, words)
	}
	fmt.Fprintf(u.w, "error: %s\n\n%s", m[2], help)
}

// runSubcommand runs c with argparse errors rewritten into 26.x's layout;
// args are the arguments from the subcommand's name on.
func runSubcommand(ctx context.Context, env *Env, c Command, args []string) int {
	rw := &usageRewriter{w: env.Stderr}
	cenv := *env
	cenv.Stderr = rw
	rc := c.Run(ctx, &cenv, args[1:])
	rw.finish(ctx, env, rc, args)
	return rc
}

func debugLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}
