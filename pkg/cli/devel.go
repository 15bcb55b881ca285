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
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cloudroot/cloudroot/pkg/internal/pyval"
	"github.com/cloudroot/cloudroot/pkg/state"
	"github.com/cloudroot/cloudroot/pkg/userdata"
)

// ---------------------------------------------------------------------------
// argparse emulation

// argOpt is one optional argument. metavar "" makes it a flag.
type argOpt struct {
	short, long string // "-i", "--instance-data" (either may be "")
	dest        string
	metavar     string
	choices     []string
	repeat      bool // action="append"
	longFirst   bool // declared as ("--long", "-s"): errors say --long/-s
	required    bool // required=True
}

func (o argOpt) display() string {
	switch {
	case o.short != "" && o.long != "" && o.longFirst:
		return o.long + "/" + o.short
	case o.short != "" && o.long != "":
		return o.short + "/" + o.long
	case o.long != "":
		return o.long
	}
	return o.short
}

// argParser parses the way Python's argparse does for the option shapes
// cloud-init's subcommands use: long options by unique prefix, --opt=value,
// -ovalue, clustered short flags, "--" ending options.
type argParser struct {
	prog  string // "cloud-init query"
	usage string // "usage: ...\n"
	help  string // the rest of --help after the usage
	opts  []argOpt
	// positionals are the positional names in order; required says how many
	// of them must be given (the rest are nargs="?").
	positionals []string
	required    int
	// variadic makes the last positional nargs="*" (it takes the rest).
	variadic bool
}

type parsedArgs struct {
	flags  map[string]bool
	values map[string][]string
	set    map[string]bool
	pos    []string
}

func (a *parsedArgs) flag(dest string) bool { return a.flags[dest] }

// value is the last value given for dest ("" if none).
func (a *parsedArgs) value(dest string) string {
	v := a.values[dest]
	if len(v) == 0 {
		return ""
	}
	return v[len(v)-1]
}

var errArgHelp = errors.New("help requested")

func (p *argParser) findLong(name string) (argOpt, error) {
	if name == "help" {
		return argOpt{short: "-h", long: "--help", dest: "help"}, nil
	}
	var matches []argOpt
	for _, o := range p.opts {
		if o.long == "--"+name {
			return o, nil
		}
		if o.long != "" && strings.HasPrefix(o.long, "--"+name) {
			matches = append(matches, o)
		}
	}
	if strings.HasPrefix("help", name) {
		matches = append(matches, argOpt{short: "-h", long: "--help", dest: "help"})
	}
	switch len(matches) {
	case 0:
		return argOpt{}, nil
	case 1:
		return matches[0], nil
	}
	names := make([]string, len(matches))
	for i, m := range matches {
		names[i] = m.long
	}
	return argOpt{}, fmt.Errorf("ambiguous option: --%s could match %s", name, strings.Join(names, ", "))
}

func (p *argParser) findShort(c byte) (argOpt, bool) {
	if c == 'h' {
		return argOpt{short: "-h", long: "--help", dest: "help"}, true
	}
	for _, o := range p.opts {
		if o.short == "-"+string(c) {
			return o, true
		}
	}
	return argOpt{}, false
}

func (p *argParser) parse(args []string) (*parsedArgs, error) {
	r := &parsedArgs{flags: map[string]bool{}, values: map[string][]string{}, set: map[string]bool{}}
	var extra []string
	store := func(o argOpt, v string) error {
		if o.choices != nil && !slices.Contains(o.choices, v) {
			return fmt.Errorf("argument %s: invalid choice: '%s' (choose from %s)", o.display(), v, pyChoices(o.choices))
		}
		if o.repeat {
			r.values[o.dest] = append(r.values[o.dest], v)
		} else {
			r.values[o.dest] = []string{v}
		}
		r.set[o.dest] = true
		return nil
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			r.pos = append(r.pos, args[i+1:]...)
			i = len(args)
		case strings.HasPrefix(a, "--") && len(a) > 2:
			name, val, hasVal := strings.Cut(a[2:], "=")
			o, err := p.findLong(name)
			if err != nil {
				return nil, err
			}
			if o.dest == "" {
				extra = append(extra, a)
				continue
			}
			if o.dest == "help" {
				return nil, errArgHelp
			}
			if o.metavar == "" {
				if hasVal {
					return nil, fmt.Errorf("argument %s: ignored explicit argument '%s'", o.display(), val)
				}
				r.flags[o.dest] = true
				r.set[o.dest] = true
				continue
			}
			if !hasVal {
				if i+1 >= len(args) || looksLikeOption(args[i+1]) {
					return nil, fmt.Errorf("argument %s: expected one argument", o.display())
				}
				i++
				val = args[i]
			}
			if err := store(o, val); err != nil {
				return nil, err
			}
		case looksLikeOption(a):
			if name, val, ok := strings.Cut(a, "="); ok && len(name) == 2 {
				o, found := p.findShort(name[1])
				if found && o.metavar != "" {
					if err := store(o, val); err != nil {
						return nil, err
					}
					continue
				}
			}
			for j := 1; j < len(a); j++ {
				o, found := p.findShort(a[j])
				if !found {
					if j == 1 {
						extra = append(extra, a)
						break
					}
					prev, _ := p.findShort(a[j-1])
					return nil, fmt.Errorf("argument %s: ignored explicit argument '%s'", prev.display(), a[j:])
				}
				if o.dest == "help" {
					return nil, errArgHelp
				}
				if o.metavar == "" {
					r.flags[o.dest] = true
					r.set[o.dest] = true
					continue
				}
				val := a[j+1:]
				if val == "" {
					if i+1 >= len(args) || looksLikeOption(args[i+1]) {
						return nil, fmt.Errorf("argument %s: expected one argument", o.display())
					}
					i++
					val = args[i]
				}
				if err := store(o, val); err != nil {
					return nil, err
				}
				break
			}
		default:
			r.pos = append(r.pos, a)
		}
	}
	if len(r.pos) > len(p.positionals) && !p.variadic {
		extra = append(extra, r.pos[len(p.positionals):]...)
		r.pos = r.pos[:len(p.positionals)]
	}
	var missing []string
	for _, o := range p.opts {
		if o.required && !r.set[o.dest] {
			missing = append(missing, o.display())
		}
	}
	if len(r.pos) < p.required {
		missing = append(missing, p.positionals[len(r.pos):p.required]...)
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("the following arguments are required: %s", strings.Join(missing, ", "))
	}
	if len(extra) > 0 {
		return nil, fmt.Errorf("unrecognized arguments: %s", strings.Join(extra, " "))
	}
	return r, nil
}

// pyChoices lists choices as the argparse of Debian 12's Python 3.11 (the
// one upstream's goldens are made with) does: repr'd, comma-separated.
func pyChoices(cs []string) string {
	q := make([]string, len(cs))
	for i, c := range cs {
		q[i] = "'" + c + "'"
	}
	return strings.Join(q, ", ")
}

// run parses args; on -h it prints the help (exit 0), on a bad argument the
// usage and the error (exit 2). ok is false when the caller must return rc.
func (p *argParser) run(env *Env, args []string) (a *parsedArgs, rc int, ok bool) {
	a, err := p.parse(args)
	if errors.Is(err, errArgHelp) {
		io.WriteString(env.Stdout, p.usage+p.help)
		return nil, 0, false
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s%s: error: %s\n", p.usage, p.prog, err)
		return nil, 2, false
	}
	return a, 0, true
}

// ---------------------------------------------------------------------------
// logging and shared helpers

// cliLog writes one log line the way cloud-init's command line does.
func cliLog(env *Env, file, level, format string, a ...any) {
	now := time.Now
	if env.Now != nil {
		now = env.Now
	}
	t := now().UTC()
	fmt.Fprintf(env.Stderr, "%s,%03d - %s[%s]: %s\n", t.Format("2006-01-02 15:04:05"), t.Nanosecond()/1e6, file, level, fmt.Sprintf(format, a...))
}

// defaultInstanceData picks the instance-data file render and query read
// when -i is not given: the sensitive file for root (the redacted one, with
// a warning, when it is missing), the redacted one otherwise. It returns
// the path to show and the host path to open.
func defaultInstanceData(env *Env, logFile string) (shown, host string) {
	if env.IsRoot {
		if _, err := os.Stat(env.Path(state.InstanceDataSens)); err == nil {
			return state.InstanceDataSens, env.Path(state.InstanceDataSens)
		}
		cliLog(env, logFile, "WARNING", "Missing root-readable %s. Using redacted %s instead.", state.InstanceDataSens, state.InstanceDataFile)
	}
	return state.InstanceDataFile, env.Path(state.InstanceDataFile)
}

// decodeInstanceJSON decodes instance data keeping numbers as json.Number
// (so integers and floats print as Python prints them).
func decodeInstanceJSON(b []byte) (map[string]any, error) {
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("trailing data after JSON value")
	}
	if m == nil {
		return nil, errors.New("instance data is not a JSON object")
	}
	return m, nil
}

// jinjaData converts decoded instance data for the template engine:
// json.Number becomes int64 or float64.
func jinjaData(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[k] = jinjaData(e)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = jinjaData(e)
		}
		return out
	case json.Number:
		if i, err := t.Int64(); err == nil {
			return i
		}
		if f, err := t.Float64(); err == nil {
			return f
		}
		return string(t)
	}
	return v
}

// plainValue turns the mapping types the template layer uses (named map
// types) back into map[string]any, so printers and walkers see one shape.
func plainValue(v any) any {
	switch t := v.(type) {
	case nil, string, bool, json.Number, int64, float64, int:
		return v
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[k] = plainValue(e)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = plainValue(e)
		}
		return out
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Map:
		if rv.Type().Key().Kind() != reflect.String {
			break
		}
		out := make(map[string]any, rv.Len())
		it := rv.MapRange()
		for it.Next() {
			out[it.Key().String()] = plainValue(it.Value().Interface())
		}
		return out
	case reflect.Slice:
		out := make([]any, rv.Len())
		for i := range out {
			out[i] = plainValue(rv.Index(i).Interface())
		}
		return out
	}
	return fmt.Sprint(v)
}

// jsonDumps is cloud-init's atomic_helper.json_dumps: json.dumps(indent=1,
// sort_keys=True, separators=(",", ": ")), ASCII-escaped.
func jsonDumps(v any) string {
	s, err := pyval.JSONDumps(v, pyval.JSONOptions{Indent: 1, SortKeys: true, Default: plainValue})
	if err != nil { // plainValue makes everything a plain value
		return fmt.Sprint(v)
	}
	return s
}

// ---------------------------------------------------------------------------
// devel

var develSubcommands = []string{"hotplug-hook", "net-convert", "render", "make-mime"}

const develUsage = "usage: cloud-init devel [-h] {hotplug-hook,net-convert,render,make-mime} ...\n"

const develHelp = `
options:
  -h, --help            show this help message and exit

Subcommands:
  {hotplug-hook,net-convert,render,make-mime}
    hotplug-hook        Handle reconfiguration on hotplug events.
    net-convert         Debug network config format conversions.
    render              Debug jinja template rendering of user-data.
    make-mime           Generate multi-part mime messages for user-data.
`

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

// jinjaHeaderRE is cloud-init's detect_template test for jinja.
var jinjaHeaderRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)^##\s*template:\s*jinja\s*$`) })

func isJinja(b []byte) bool {
	first, _, _ := strings.Cut(string(b), "\n")
	return jinjaHeaderRE().MatchString(strings.TrimRight(first, "\r"))
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

// loadJinjaInstanceData reads instance data for a template the way
// render_jinja_payload_from_file does; msg is its JinjaLoadError message.
func loadJinjaInstanceData(host, shown string) (map[string]any, string) {
	b, err := os.ReadFile(host)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, "Cannot render jinja template vars. Instance data not yet present at " + shown
		}
		if errors.Is(err, os.ErrPermission) {
			return nil, fmt.Sprintf("Cannot render jinja template vars. No read permission on '%s'. Try sudo", shown)
		}
		return nil, "Loading Jinja instance data failed"
	}
	m, err := decodeInstanceJSON(b)
	if err != nil {
		return nil, "Loading Jinja instance data failed"
	}
	return m, ""
}

// renderPayload is cloud-init's render_jinja_payload: it renders tmpl (a
// "## template: jinja" document) with data, warns about undefined
// variables, and reports a syntax error through syntaxErr. ok is false when
// nothing was rendered.
func renderPayload(env *Env, tmpl []byte, name string, data map[string]any, debug bool, syntaxErr func(string)) ([]byte, bool) {
	const logFile = "jinja_template.py"
	vars := jinjaData(data).(map[string]any)
	if debug {
		cliLog(env, logFile, "DEBUG", "Converted jinja variables\n%s", jsonDumps(plainValue(userdata.JinjaVars(vars))))
	}
	out, missing, err := userdata.RenderJinja(tmpl, vars)
	if err != nil {
		var se *userdata.JinjaSyntaxError
		if errors.As(err, &se) {
			syntaxErr(se.Error())
			return nil, false
		}
		cliLog(env, logFile, "WARNING", "Ignoring jinja template for %s: %s", name, err.Error())
		return nil, false
	}
	if len(missing) > 0 {
		q := make([]string, len(missing))
		for i, m := range missing {
			q[i] = "'" + m + "'"
		}
		cliLog(env, logFile, "WARNING", "Could not render jinja template variables in file '%s': %s", name, strings.Join(q, ", "))
	}
	return out, true
}

// pyQuote is Python's repr of a str (for exception reprs in messages).
func pyQuote(s string) string {
	if strings.Contains(s, "'") && !strings.Contains(s, `"`) {
		return `"` + s + `"`
	}
	return "'" + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), "'", `\'`) + "'"
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

// pyOSError formats an open error as Python's OSError str does.
func pyOSError(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		switch {
		case errors.Is(err, os.ErrNotExist):
			return fmt.Sprintf("[Errno 2] No such file or directory: '%s'", pe.Path)
		case errors.Is(err, os.ErrPermission):
			return fmt.Sprintf("[Errno 13] Permission denied: '%s'", pe.Path)
		}
		return fmt.Sprintf("%s: '%s'", pe.Err, pe.Path)
	}
	return err.Error()
}
