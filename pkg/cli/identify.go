//go:build !cloudroot_front

package cli

// `cloudroot identify [--root DIR] [--force] [--json]`
//
// The contract, after cloud-init's tools/ds-identify run as
// `PATH_ROOT=DIR ds-identify [--force]` by cloud-init-generator:
//
//   - Without --force, a previous answer is reused when
//     DIR/run/cloud-init/cloud.cfg and .ds-identify.result both exist and the
//     result is 0, 1 or 2; nothing is written then.
//   - Otherwise the inputs are read from under DIR (identify.FromRoot; the
//     virtualization type from $SYSTEMD_VIRTUALIZATION, VMware's
//     VMX_GUESTINFO* and WSL's USERPROFILE/WSL_DISTRO_NAME from the
//     environment), the decision is made (identify.Identify), and
//     DIR/run/cloud-init/ gets: cloud.cfg (when ds-identify writes one),
//     ds-identify.log (appended, with uptime stamps), .ds-identify.result
//     (the exit code), and, as cloud-init-generator does, the marker
//     `enabled` (exit 0) or `disabled` (otherwise), removing the other.
//   - stdout: a short summary (decision, reason, the datasource_list), or
//     with --json the whole identify.Result.
//   - exit: 0 found/enabled, 1 nothing found or disabled by policy, 2
//     disabled by kernel command line, marker file or environment — the
//     codes of ds-identify; 3 for bad arguments or I/O failures (ds-identify's
//     "unexpected").

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/identify"
)

// identifyFailed is the exit code for bad arguments and I/O failures.
const identifyFailed = 3

// identifyEnvVars are the environment variables ds-identify consults.
func identifyEnvVars() []string {
	return []string{
		"KERNEL_CMDLINE", "SYSTEMD_VIRTUALIZATION",
		"VMX_GUESTINFO", "VMX_GUESTINFO_METADATA", "VMX_GUESTINFO_USERDATA", "VMX_GUESTINFO_VENDORDATA",
		"USERPROFILE", "WSL_DISTRO_NAME",
	}
}

func identifyCommand() Command {
	return Command{
		Name:  "identify",
		Short: "Decide whether to run and which datasources to try (ds-identify).",
		Run:   runIdentify,
	}
}

type identifyOptions struct {
	root  string
	force bool
	json  bool
}

func runIdentify(_ context.Context, env *Env, args []string) int {
	opts, code, ok := parseIdentifyArgs(env, args)
	if !ok {
		return code
	}
	if !opts.force {
		if code, ok := cachedIdentify(opts.root); ok {
			if opts.json {
				identifyJSON(env, map[string]any{"cached": true, "exitCode": code})
			} else {
				fmt.Fprintf(env.Stdout, "cached result %d (pass --force to re-run)\n", code)
			}
			return code
		}
	}
	r, err := dsIdentify(env, opts.root, opts.force)
	if err != nil {
		fmt.Fprintf(env.Stderr, "error: %v\n", err)
		return identifyFailed
	}
	if opts.json {
		identifyJSON(env, r)
	} else {
		fmt.Fprintf(env.Stdout, "%s: %s\n", r.Decision, r.Reason)
		if r.List != nil {
			fmt.Fprintln(env.Stdout, identify.FormatList(r.List))
		}
		for _, c := range r.Found {
			if c.Result != identify.NotFound {
				fmt.Fprintf(env.Stdout, "  %s: %s (%s)\n", c.Name, c.Result, c.Reason)
			}
		}
	}
	return r.ExitCode
}

const identifyUsage = "usage: cloudroot identify [-h] [--root DIR] [--force] [--json]\n"

func parseIdentifyArgs(env *Env, args []string) (identifyOptions, int, bool) {
	root := env.Root
	if root == "" {
		root = "/"
	}
	opts := identifyOptions{root: root}
	fl := flag.NewFlagSet("identify", flag.ContinueOnError)
	fl.SetOutput(env.Stderr)
	fl.Usage = func() {
		fmt.Fprint(fl.Output(), identifyUsage+"\noptions:\n")
		fl.PrintDefaults()
	}
	fl.StringVar(&opts.root, "root", opts.root, "the root to identify (`DIR` is ds-identify's PATH_ROOT)")
	fl.BoolVar(&opts.force, "force", false, "ignore a previous result and decide again")
	fl.BoolVar(&opts.json, "json", false, "print the whole result as JSON")
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fl.SetOutput(env.Stdout)
			fl.Usage()
			return opts, 0, false
		}
		return opts, identifyFailed, false
	}
	if fl.NArg() > 0 {
		fmt.Fprintf(env.Stderr, "%serror: unrecognized arguments: %s\n", identifyUsage, strings.Join(fl.Args(), " "))
		return opts, identifyFailed, false
	}
	return opts, 0, true
}

// dsIdentify decides for the root at dir as ds-identify does (its inputs
// from under dir and the environment) and writes its outputs into
// dir/run/cloud-init: cloud.cfg, ds-identify.log, .ds-identify.result and
// the enabled or disabled marker. Warnings go to stderr.
func dsIdentify(env *Env, dir string, force bool) (identify.Result, error) {
	start := identifyUptime(env)
	in, err := identify.FromRoot(dir)
	if err != nil {
		return identify.Result{}, err
	}
	in.Env = map[string]string{}
	for _, k := range identifyEnvVars() {
		if v, ok := os.LookupEnv(k); ok && v != "" {
			in.Env[k] = v
		}
	}
	r := identify.Identify(in)
	for _, w := range r.Warnings {
		fmt.Fprintln(env.Stderr, w)
	}
	frame := identify.LogFrame{Start: start, End: identifyUptime(env), PID: os.Getpid(), PPID: os.Getppid()}
	if force {
		frame.Args = "--force"
	}
	if err := identify.WriteOutputs(filepath.Join(dir, "run", "cloud-init"), r, r.FormatLog(frame)); err != nil {
		return r, err
	}
	return r, nil
}

// cachedIdentify is ds-identify's reuse of an earlier answer.
func cachedIdentify(root string) (int, bool) {
	if _, err := os.Stat(filepath.Join(root, identify.PathRunCloudCfg)); err != nil {
		return 0, false
	}
	b, err := os.ReadFile(filepath.Join(root, identify.PathRunResult))
	if err != nil {
		return 0, false
	}
	line, _, _ := strings.Cut(string(b), "\n")
	switch code := strings.TrimSpace(line); code {
	case "0", "1", "2":
		n, _ := strconv.Atoi(code)
		return n, true
	}
	return 0, false
}

func identifyJSON(env *Env, v any) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		fmt.Fprintf(env.Stderr, "error: encoding JSON: %v\n", err)
		return
	}
	env.Stdout.Write(append(b, '\n'))
}

func identifyUptime(env *Env) float64 {
	if env.Uptime == nil {
		return -1
	}
	return env.Uptime()
}
