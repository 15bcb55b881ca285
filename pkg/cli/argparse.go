package cli

// The small argparse emulation, log lines and instance-data helpers that
// query, schema and the devel tools share (devel.go has the contract).

import (
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

// jinjaHeaderRE is cloud-init's detect_template test for jinja.
var jinjaHeaderRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)^##\s*template:\s*jinja\s*$`) })

func isJinja(b []byte) bool {
	first, _, _ := strings.Cut(string(b), "\n")
	return jinjaHeaderRE().MatchString(strings.TrimRight(first, "\r"))
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
