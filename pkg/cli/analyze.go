package cli

// analyze: cloud-init's `analyze show|blame|dump|boot` over
// /var/log/cloud-init.log (pkg/cilog reads the events as cloud-init does),
// plus `analyze plot`, the boot as a picture (analyze_plot.go).
//
// Output and exit codes follow cloud-init 26.x: a missing input file is
// "Cannot open file F" and exit 1, an empty one "Empty file F" and exit 1;
// boot exits 1 when the kernel and init timestamps are unknown.

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/cloudroot/cloudroot/pkg/cilog"
	"github.com/cloudroot/cloudroot/pkg/state"
)

func analyzeCommand() Command {
	return Command{
		Name:  "analyze",
		Short: "Devel tool: Analyze cloud-init logs and data.",
		Run:   runAnalyze,
	}
}

const analyzeUsage = "usage: cloud-init analyze [-h] {blame,show,dump,boot,plot} ...\n"

type analyzeOptions struct {
	sub, in, out, format, plotFormat string
}

const analyzeHelp = "\nSubcommands:\n" +
	"    blame   Print list of executed stages ordered by time to init\n" +
	"    show    Print list of in-order events during execution\n" +
	"    dump    Dump cloud-init events in JSON format\n" +
	"    boot    Print list of boot times for kernel and cloud-init\n" +
	"    plot    Draw the last boot as a timeline: -o boot.svg [--format svg|html] (cloudroot)\n"

func parseAnalyzeArgs(env *Env, args []string) (analyzeOptions, int, bool) {
	o := analyzeOptions{in: state.LogFile, out: "-", format: "%I%D @%Es +%ds", plotFormat: "svg"}
	if len(args) == 0 {
		fmt.Fprint(env.Stderr, analyzeUsage+"cloud-init analyze: error: the following arguments are required: subcommand\n")
		return o, 2, false
	}
	o.sub = args[0]
	switch o.sub {
	case "show", "blame", "dump", "boot", "plot":
	case "-h", "--help":
		fmt.Fprint(env.Stdout, analyzeUsage+analyzeHelp)
		return o, 0, false
	default:
		fmt.Fprintf(env.Stderr, analyzeUsage+"cloud-init analyze: error: argument subcommand: invalid choice: '%s' (choose from 'blame', 'show', 'dump', 'boot', 'plot')\n", o.sub)
		return o, 2, false
	}
	sub := "usage: cloud-init analyze " + o.sub + " [-h] [-i INFILE] [-o OUTFILE]\n"
	if o.sub == "plot" {
		sub = "usage: cloud-init analyze plot [-h] [-i INFILE] [-o OUTFILE] [--format {svg,html}]\n"
	}
	rest := args[1:]
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		val := func() (string, bool) {
			if i+1 >= len(rest) {
				fmt.Fprintf(env.Stderr, "%scloud-init analyze %s: error: argument %s: expected one argument\n", sub, o.sub, a)
				return "", false
			}
			i++
			return rest[i], true
		}
		var ok bool
		switch {
		case a == "-i" || a == "--infile":
			o.in, ok = val()
		case a == "-o" || a == "--outfile":
			o.out, ok = val()
		case (a == "-f" || a == "--format") && o.sub == "show":
			o.format, ok = val()
		case a == "--format" && o.sub == "plot":
			o.plotFormat, ok = val()
			if ok && o.plotFormat != "svg" && o.plotFormat != "html" {
				fmt.Fprintf(env.Stderr, "%scloud-init analyze plot: error: argument --format: invalid choice: '%s' (choose from 'svg', 'html')\n", sub, o.plotFormat)
				return o, 2, false
			}
		case a == "-h" || a == "--help":
			fmt.Fprint(env.Stdout, sub)
			return o, 0, false
		default:
			fmt.Fprintf(env.Stderr, "%scloud-init analyze: error: unrecognized arguments: %s\n", analyzeUsage, a)
			return o, 2, false
		}
		if !ok {
			return o, 2, false
		}
	}
	return o, 0, true
}

func runAnalyze(_ context.Context, env *Env, args []string) int {
	o, code, ok := parseAnalyzeArgs(env, args)
	if !ok {
		return code
	}
	var data []byte
	var err error
	name := o.in
	if o.in == "-" {
		name = "<stdin>"
		data, err = io.ReadAll(os.Stdin)
	} else {
		data, err = os.ReadFile(hostPath(env, o.in))
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "Cannot open file %s\n", o.in)
		return 1
	}
	out := env.Stdout
	if o.out != "-" {
		f, err := os.Create(hostPath(env, o.out))
		if err != nil {
			fmt.Fprintf(env.Stderr, "Cannot open file %s\n", o.out)
			return 1
		}
		defer f.Close()
		out = f
	}
	if len(bytes.TrimSpace(data)) == 0 {
		fmt.Fprintf(env.Stderr, "Empty file %s\n", name)
		return 1
	}
	events, err := cilog.ParseEvents(data, env.Stderr, env.Now())
	if err != nil {
		fmt.Fprintf(env.Stderr, "analyze: %v\n", err)
		return 1
	}
	switch o.sub {
	case "show":
		err = cilog.Show(out, events, o.format)
	case "blame":
		err = cilog.Blame(out, events)
	case "dump":
		err = cilog.Dump(out, events)
	case "boot":
		return analyzeBoot(env, out, events)
	case "plot":
		err = analyzePlot(env, out, events, o.plotFormat)
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "analyze %s: %v\n", o.sub, err)
		return 1
	}
	return 0
}

// hostPath resolves an absolute path under env.Root; a relative one is
// the caller's.
func hostPath(env *Env, p string) string {
	if filepath.IsAbs(p) {
		return env.Path(p)
	}
	return p
}

// analyzeFailureMsg is what analyze boot prints when it cannot tell when
// the kernel and the init system started.
const analyzeFailureMsg = "Your Linux distro or container does not support this functionality.\n" +
	"You must be running a Kernel Telemetry supported distro.\n" +
	"Please check https://docs.cloud-init.io/en/latest/topics/analyze.html for more information on supported distros.\n"

// analyzeBoot is analyze boot. cloud-init asks systemctl for the kernel's
// and cloud-init-local's timestamps; cloudroot has no cloud-init-local unit
// (that stage ran in the initramfs), so it answers as cloud-init does on a
// system where those are unknown.
func analyzeBoot(env *Env, out io.Writer, _ []cilog.LogEvent) int {
	fmt.Fprint(out, analyzeFailureMsg)
	return 1
}
