package cli

// cloud-init devel net-convert: read a network config in one format, render
// it with one renderer under a directory, in cloud-init's layout. Flags and
// exit codes follow cloud-init (2 for usage errors, 1 when the input cannot
// be read or converted).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/netconfig"
)

// netConvertDistros are the -D choices (cloud-init's OSFAMILIES members).
var netConvertDistros = []string{
	"alpine", "arch", "debian", "ubuntu", "freebsd", "dragonfly", "gentoo", "cos", "netbsd", "openbsd",
	"almalinux", "amazon", "centos", "cloudlinux", "eurolinux", "fedora", "mariner", "miraclelinux",
	"openEuler", "openmandriva", "photon", "rhel", "rocky", "virtuozzo", "opensuse", "sles",
}

var (
	netConvertKinds   = []string{"eni", "network_data.json", "yaml", "azure-imds", "vmware-imc"}
	netConvertOutputs = []string{"eni", "netplan", "networkd", "sysconfig", "network-manager"}
)

const netConvertUsage = `usage: cloud-init devel net-convert [-h] -p PATH -k {eni,network_data.json,yaml,azure-imds,vmware-imc}
                                  -d PATH -D DISTRO [-m name,mac] [--debug]
                                  -O {eni,netplan,networkd,sysconfig,network-manager}
`

func netConvertCommand() Command {
	return Command{
		Name:  "net-convert",
		Short: "Convert network config between formats.",
		Run:   runNetConvert,
	}
}

type netConvertArgs struct {
	input, kind, dir, distro, output string
	macs                             []string
	debug                            bool
}

func netConvertUsageError(env *Env, format string, a ...any) int {
	fmt.Fprint(env.Stderr, netConvertUsage)
	fmt.Fprintf(env.Stderr, "cloud-init devel net-convert: error: "+format+"\n", a...)
	return 2
}

func oneOf(v string, choices []string) bool {
	for _, c := range choices {
		if v == c {
			return true
		}
	}
	return false
}

func quoteChoices(c []string) string {
	q := make([]string, len(c))
	for i, s := range c {
		q[i] = "'" + s + "'"
	}
	return strings.Join(q, ", ")
}

func parseNetConvertArgs(env *Env, args []string) (*netConvertArgs, int, bool) {
	a := &netConvertArgs{}
	type opt struct {
		short, long string
		dst         *string
		choices     []string
	}
	opts := []opt{
		{"-p", "--network-data", &a.input, nil},
		{"-k", "--kind", &a.kind, netConvertKinds},
		{"-d", "--directory", &a.dir, nil},
		{"-D", "--distro", &a.distro, netConvertDistros},
		{"-O", "--output-kind", &a.output, netConvertOutputs},
	}
	for i := 0; i < len(args); i++ {
		arg := args[i]
		switch arg {
		case "-h", "--help":
			fmt.Fprint(env.Stdout, netConvertUsage)
			return nil, 0, false
		case "--debug":
			a.debug = true
			continue
		}
		name, val, hasVal := arg, "", false
		if strings.HasPrefix(arg, "--") {
			name, val, hasVal = strings.Cut(arg, "=")
		} else if strings.HasPrefix(arg, "-") && len(arg) > 2 {
			name, val, hasVal = arg[:2], arg[2:], true
		}
		takeValue := func() (string, bool) {
			if hasVal {
				return val, true
			}
			if i+1 >= len(args) {
				return "", false
			}
			i++
			return args[i], true
		}
		if name == "-m" || name == "--mac" {
			v, ok := takeValue()
			if !ok {
				return nil, netConvertUsageError(env, "argument -m/--mac: expected one argument"), false
			}
			a.macs = append(a.macs, v)
			continue
		}
		matched := false
		for _, o := range opts {
			if name != o.short && name != o.long {
				continue
			}
			matched = true
			v, ok := takeValue()
			if !ok {
				return nil, netConvertUsageError(env, "argument %s/%s: expected one argument", o.short, o.long), false
			}
			if o.choices != nil && !oneOf(v, o.choices) {
				return nil, netConvertUsageError(env, "argument %s/%s: invalid choice: '%s' (choose from %s)",
					o.short, o.long, v, quoteChoices(o.choices)), false
			}
			*o.dst = v
		}
		if !matched {
			return nil, netConvertUsageError(env, "unrecognized arguments: %s", arg), false
		}
	}
	var missing []string
	for _, o := range opts {
		if *o.dst == "" {
			missing = append(missing, o.short+"/"+o.long)
		}
	}
	if len(missing) > 0 {
		return nil, netConvertUsageError(env, "the following arguments are required: %s", strings.Join(missing, ", ")), false
	}
	return a, 0, true
}

func runNetConvert(ctx context.Context, env *Env, args []string) int {
	a, rc, ok := parseNetConvertArgs(env, args)
	if !ok {
		return rc
	}
	input := a.input
	if !filepath.IsAbs(input) && env.Root != "" && env.Root != "/" {
		input = filepath.Join(env.Root, input)
	}
	data, err := os.ReadFile(input)
	if err != nil {
		return netConvertUsageError(env, "argument -p/--network-data: can't open '%s': %v", a.input, errors.Unwrap(err))
	}
	macs := netconfig.MACs{}
	for _, m := range a.macs {
		name, mac, ok := strings.Cut(m, ",")
		if !ok {
			fmt.Fprintf(env.Stderr, "error: -m/--mac %q: expected name,mac\n", m)
			return 1
		}
		macs[mac] = name
	}
	var cfg *netconfig.Config
	switch a.kind {
	case "yaml":
		cfg, err = netconfig.Parse(data, macs)
	case "eni":
		cfg, err = netconfig.ParseENI(data)
	case "network_data.json":
		cfg, err = netconfig.ParseNetworkData(data, macs)
	case "azure-imds":
		// The whole IMDS instance document (cloud-init reads its
		// "network" key) or just that key's value.
		var imds map[string]any
		if err = json.Unmarshal(data, &imds); err == nil {
			cfg, err = netconfig.ConvertAzure(imds, macs)
		}
	case "vmware-imc":
		// cust.cfg; as in cloud-init (use_system_devices=False) the NICs
		// are named after their sections and -m is not used.
		var cust netconfig.VMwareCustCfg
		if cust, err = netconfig.ParseVMwareCustCfg(data); err == nil {
			cfg, err = netconfig.ConvertVMware(cust, nil)
		}
	default:
		fmt.Fprintf(env.Stderr, "error: input kind %s is not supported by cloudroot yet\n", a.kind)
		return 1
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "error: reading %s input from %s: %v\n", a.kind, a.input, err)
		return 1
	}
	if a.debug {
		dumpNetConfig(env.Stderr, data, cfg)
	}
	for _, w := range cfg.Warnings {
		fmt.Fprintf(env.Stderr, "WARNING: %s\n", w)
	}
	dir := a.dir
	if !strings.HasSuffix(dir, "/") {
		dir += "/"
	}
	outDir := dir
	if !filepath.IsAbs(outDir) && env.Root != "" && env.Root != "/" {
		outDir = filepath.Join(env.Root, outDir)
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		fmt.Fprintf(env.Stderr, "error: creating %s: %v\n", dir, err)
		return 1
	}
	if cfg.Disabled {
		fmt.Fprintf(env.Stderr, "Read input format '%s' from '%s'.\nNetwork configuration is disabled; nothing written to '%s'\n\n", a.kind, a.input, dir)
		return 0
	}
	out, err := netconfig.Render(a.output, cfg)
	if err != nil {
		fmt.Fprintf(env.Stderr, "error: rendering %s: %v\n", a.output, err)
		return 1
	}
	for _, w := range out.Warnings {
		fmt.Fprintf(env.Stderr, "WARNING: %s\n", w)
	}
	fmt.Fprintf(env.Stderr, "Read input format '%s' from '%s'.\nWrote output format '%s' to '%s'\n\n", a.kind, a.input, a.output, dir)
	if err := writeRendered(outDir, out); err != nil {
		fmt.Fprintf(env.Stderr, "error: %v\n", err)
		return 1
	}
	return 0
}

// writeRendered writes the rendered files under dir (paths are absolute on
// the target; IfMissing files only when absent).
func writeRendered(dir string, out *netconfig.Output) error {
	for _, p := range out.Paths() {
		f := out.Files[p]
		dst := filepath.Join(dir, filepath.FromSlash(strings.TrimPrefix(p, "/")))
		if f.IfMissing {
			if _, err := os.Lstat(dst); err == nil {
				continue
			}
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return fmt.Errorf("creating %s: %w", filepath.Dir(dst), err)
		}
		if err := os.WriteFile(dst, f.Data, f.Mode); err != nil {
			return fmt.Errorf("writing %s: %w", dst, err)
		}
		if err := os.Chmod(dst, f.Mode); err != nil {
			return fmt.Errorf("setting mode of %s: %w", dst, err)
		}
	}
	return nil
}

func dumpNetConfig(w io.Writer, input []byte, cfg *netconfig.Config) {
	fmt.Fprintf(w, "Input\n%s\n", input)
	b, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		fmt.Fprintf(w, "Internal State: %v\n", err)
		return
	}
	fmt.Fprintf(w, "\nInternal State\n%s\n\n", b)
}
