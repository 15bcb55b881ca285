package cli

// `cloud-init status [--format {json,tabular,yaml}] [-l|--long] [-w|--wait]`
//
// The contract, after cloud-init 26.x cloudinit/cmd/status.py:
//
//   - status.json is read from <root>/run/cloud-init/status.json, falling back
//     to <root>/var/lib/cloud/data/status.json when that copy was written
//     during this boot (mtime at or after Now-Uptime). result.json is read
//     beside whichever status.json was used.
//   - boot_status_code follows cloud-init's order: no /run/systemd/system
//     directory (not booted by systemd) gives enabled-by-sysvinit before
//     anything else is looked at; then cloud-init=enabled on the
//     kernel command line, /etc/cloud/cloud-init.disabled, cloud-init=disabled
//     on the command line, /run/cloud-init/disabled, /run/cloud-init/enabled,
//     else "unknown"; that code decides "disabled". The code printed is the
//     one status.json records, if any (26.x merges status.json's v1 over
//     its own keys), else that one.
//   - running status: disabled (a disabled-* code), running (status.json with
//     a started stage, and no result.json or a stage started but unfinished),
//     done (any start/finished time), else not started.
//   - condition: error when any stage (or result.json) has errors, degraded
//     when only recoverable_errors exist.
//   - output: tabular (status line; --long adds extended_status,
//     boot_status_code, last_update, detail, errors, recoverable_errors),
//     json (Python json.dumps indent=2, sort_keys) or yaml (PyYAML
//     safe_dump, indent=4, explicit ---/...), byte for byte as cloud-init
//     prints them.
//   - --wait polls every 0.25s while not started or running, printing "."
//     per poll in tabular mode; the status line follows the dots directly
//     (26.x dropped the newline older releases printed first).
//   - exit: 1 on error, 2 when degraded, else 0; 2 for bad arguments.
//
// status.json is decoded preserving key order because cloud-init's tabular
// recoverable_errors listing follows the order Python's json.load saw.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/cloudroot/cloudroot/pkg/internal/pyval"
	"github.com/cloudroot/cloudroot/pkg/state"
)

// StatusPollInterval is how often status --wait re-reads status.json.
const StatusPollInterval = 250 * time.Millisecond

// markerDisabledFile is cloud-init's persistent "never run" marker.
const markerDisabledFile = "/etc/cloud/cloud-init.disabled"

// Boot status codes as cloud-init's EnabledStatus spells them.
const (
	bootDisabledByGenerator = "disabled-by-generator"
	bootDisabledByCmdline   = "disabled-by-kernel-cmdline"
	bootDisabledByMarker    = "disabled-by-marker-file"
	bootDisabledByEnv       = "disabled-by-environment-variable"
	bootEnabledByGenerator  = "enabled-by-generator"
	bootEnabledByCmdline    = "enabled-by-kernel-cmdline"
	bootEnabledBySysvinit   = "enabled-by-sysvinit"
	bootUnknown             = "unknown"
)

// bootReasons is cloud-init's description of each boot status code, shown
// as detail when status.json names neither a datasource nor a stage.
var bootReasons = sync.OnceValue(func() map[string]string {
	return map[string]string{
		bootEnabledBySysvinit:   "Cloud-init enabled on sysvinit",
		bootEnabledByCmdline:    "Cloud-init enabled by kernel command line cloud-init=enabled",
		bootDisabledByMarker:    "Cloud-init disabled by " + markerDisabledFile,
		bootDisabledByCmdline:   "Cloud-init disabled by kernel parameter cloud-init=disabled",
		bootDisabledByEnv:       "Cloud-init disabled by environment variable KERNEL_CMDLINE=cloud-init=disabled",
		bootDisabledByGenerator: "Cloud-init disabled by cloud-init-generator",
		bootEnabledByGenerator:  "Cloud-init enabled by systemd cloud-init-generator",
		bootUnknown:             "Systemd generator may not have run yet.",
	}
})

// Running statuses and conditions, cloud-init's values.
const (
	runNotStarted = "not started"
	runRunning    = "running"
	runDone       = "done"
	runDisabled   = "disabled"

	condError    = "error"
	condDegraded = "degraded"
	condHealthy  = "healthy"
)

func statusCommand() Command {
	return Command{
		Name:  "status",
		Short: "Report cloud-init status or wait on completion.",
		Run:   runStatus,
	}
}

type statusOptions struct {
	format string // tabular, json or yaml
	long   bool
	wait   bool
}

const statusUsage = "usage: cloud-init status [-h] [--format {json,tabular,yaml}] [-l] [-w]\n"

const statusHelp = statusUsage + `
options:
  -h, --help            show this help message and exit
  --format {json,tabular,yaml}
                        Specify output format for cloud-id (default: tabular)
  -l, --long            Report long format of statuses including run stage
                        name and error messages
  -w, --wait            Block waiting on cloud-init to complete
`

// errStatusHelp is returned by parseStatusArgs for -h/--help.
var errStatusHelp = errors.New("help requested")

// parseStatusArgs parses args the way argparse would: long options by unique
// prefix, --opt=value, clustered short flags.
func parseStatusArgs(args []string) (statusOptions, error) {
	o := statusOptions{format: "tabular"}
	var unrecognized []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			unrecognized = append(unrecognized, args[i+1:]...)
			i = len(args)
		case strings.HasPrefix(a, "--"):
			name, val, hasVal := strings.Cut(a[2:], "=")
			opt := matchLongOption(name)
			switch opt {
			case "":
				unrecognized = append(unrecognized, a)
			case "format":
				if !hasVal {
					if i+1 >= len(args) || looksLikeOption(args[i+1]) {
						return o, errors.New("argument --format: expected one argument")
					}
					i++
					val = args[i]
				}
				switch val {
				case "json", "tabular", "yaml":
					o.format = val
				default:
					return o, fmt.Errorf("argument --format: invalid choice: '%s' (choose from 'json', 'tabular', 'yaml')", val)
				}
			default:
				if hasVal {
					return o, fmt.Errorf("argument %s: ignored explicit argument '%s'", flagDisplay(opt), val)
				}
				if err := setStatusFlag(&o, opt); err != nil {
					return o, err
				}
			}
		case len(a) > 1 && a[0] == '-' && !looksNumeric(a):
			for j := 1; j < len(a); j++ {
				var opt string
				switch a[j] {
				case 'l':
					opt = "long"
				case 'w':
					opt = "wait"
				case 'h':
					opt = "help"
				}
				if opt == "" {
					if j == 1 {
						unrecognized = append(unrecognized, a)
						break
					}
					return o, fmt.Errorf("argument %s: ignored explicit argument '%s'", flagDisplay(shortName(a[j-1])), a[j:])
				}
				if err := setStatusFlag(&o, opt); err != nil {
					return o, err
				}
			}
		default:
			unrecognized = append(unrecognized, a)
		}
	}
	if len(unrecognized) > 0 {
		return o, fmt.Errorf("unrecognized arguments: %s", strings.Join(unrecognized, " "))
	}
	return o, nil
}

func setStatusFlag(o *statusOptions, opt string) error {
	switch opt {
	case "long":
		o.long = true
	case "wait":
		o.wait = true
	case "help":
		return errStatusHelp
	}
	return nil
}

func shortName(c byte) string {
	switch c {
	case 'l':
		return "long"
	case 'w':
		return "wait"
	}
	return "help"
}

func flagDisplay(opt string) string {
	switch opt {
	case "long":
		return "-l/--long"
	case "wait":
		return "-w/--wait"
	}
	return "-h/--help"
}

// matchLongOption resolves an exact or unambiguous-prefix long option name.
func matchLongOption(name string) string {
	if name == "" {
		return ""
	}
	var match string
	for _, o := range []string{"format", "help", "long", "wait"} {
		if strings.HasPrefix(o, name) {
			if match != "" {
				return ""
			}
			match = o
		}
	}
	return match
}

// looksNumeric is argparse's negative-number test, `^-\d+$|^-\d*\.\d+$`
// (ASCII digits), written out: a regexp compiled here cost every command
// with an option a few dozen page faults of fresh heap.
func looksNumeric(a string) bool {
	digits := func(s string) bool { return s != "" && strings.Trim(s, "0123456789") == "" }
	if len(a) < 2 || a[0] != '-' {
		return false
	}
	intPart, frac, dot := strings.Cut(a[1:], ".")
	if !dot {
		return digits(intPart)
	}
	return (intPart == "" || digits(intPart)) && digits(frac)
}

func looksLikeOption(a string) bool {
	return len(a) > 1 && a[0] == '-' && !looksNumeric(a)
}

func runStatus(ctx context.Context, env *Env, args []string) int {
	opts, err := parseStatusArgs(args)
	if errors.Is(err, errStatusHelp) {
		io.WriteString(env.Stdout, statusHelp)
		return 0
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "%scloud-init status: error: %s\n", statusUsage, err)
		return 2
	}
	d, err := readStatusDetails(env)
	if err != nil {
		fmt.Fprintf(env.Stderr, "cloud-init status: error: %s\n", err)
		return 1
	}
	if opts.wait {
		for d.running == runNotStarted || d.running == runRunning {
			if opts.format == "tabular" {
				io.WriteString(env.Stdout, ".")
			}
			if d, err = readStatusDetails(env); err != nil {
				fmt.Fprintf(env.Stderr, "\ncloud-init status: error: %s\n", err)
				return 1
			}
			if err := env.Sleep(ctx, StatusPollInterval); err != nil {
				io.WriteString(env.Stdout, "\n")
				return 130
			}
		}
	}
	var out bytes.Buffer
	d.print(&out, opts)
	env.Stdout.Write(out.Bytes())
	switch d.condition {
	case condError:
		return 1
	case condDegraded:
		return 2
	}
	return 0
}

// statusDetails is cloud-init's StatusDetails.
type statusDetails struct {
	running     string
	condition   string
	bootCode    string // get_bootstatus's code: decides "disabled"
	shownCode   string // what is printed: status.json's record wins, as in 26.x's dict merge
	description string
	errors      []any
	// recoverable maps level to a list of messages, in first-seen order.
	recoverable *jsonObject
	lastUpdate  string
	// datasource is the short lowercased name, "" without status.json, nil
	// when status.json says null.
	datasource any
	// v1 is status.json's v1 object.
	v1 *jsonObject
}

// readStatusDetails gathers everything status prints from env.Root.
func readStatusDetails(env *Env) (*statusDetails, error) {
	now := time.Now
	if env.Now != nil {
		now = env.Now
	}
	var uptime float64
	if env.Uptime != nil {
		uptime = env.Uptime()
	}
	boot := now().Add(-time.Duration(uptime * float64(time.Second)))

	statusPath, resultPath := env.Path(state.RunStatusLink), env.Path(state.RunResultLink)
	statusExists := fileExists(statusPath)
	if !statusExists {
		fallback := env.Path(state.StatusFile)
		if fi, err := os.Stat(fallback); err == nil && (uptime <= 0 || !fi.ModTime().Before(boot)) {
			statusPath, resultPath, statusExists = fallback, env.Path(state.ResultFile), true
		}
	}
	v1 := newJSONObject()
	if statusExists {
		var err error
		if v1, err = readV1(statusPath); err != nil {
			return nil, err
		}
	}
	var resultErrors []any
	resultExists := fileExists(resultPath)
	if resultExists {
		r, err := readV1(resultPath)
		if err != nil {
			return nil, err
		}
		if l, ok := r.get("errors").([]any); ok {
			resultErrors = l
		}
	}

	d := &statusDetails{v1: v1, datasource: ""}
	dsRaw, hasDS := v1.lookup("datasource")
	if hasDS {
		d.datasource = dsRaw
	}
	if s, ok := dsRaw.(string); ok && s != "" {
		short, _, _ := strings.Cut(s, " ")
		d.datasource = strings.ReplaceAll(strings.ToLower(short), "datasource", "")
	}

	var bootReason string
	d.bootCode, bootReason = bootStatus(env)
	d.shownCode = d.bootCode
	if recorded, _ := v1.get("boot_status_code").(string); recorded != "" {
		// cloudroot's own spelling of the kernel command line codes.
		if r, ok := strings.CutSuffix(recorded, "-kernel-command-line"); ok {
			recorded = r + "-kernel-cmdline"
		}
		d.shownCode = recorded
	}
	switch {
	case truthy(dsRaw):
		d.description = pyval.Str(dsRaw)
	case truthy(v1.get("stage")):
		d.description = "Running in stage: " + pyval.Str(v1.get("stage"))
	default:
		d.description = bootReason
	}

	latest, started, unfinished := 0.0, false, false
	for _, k := range v1.keys {
		st, ok := v1.vals[k].(*jsonObject)
		if !ok {
			continue
		}
		start, fin := jsonFloat(st.get("start")), jsonFloat(st.get("finished"))
		latest = math.Max(latest, math.Max(start, fin))
		if start != 0 {
			started = true
			if fin == 0 {
				unfinished = true
			}
		}
	}
	if latest > 0 {
		sec := math.Floor(float64(boot.UnixNano())/1e9 + latest)
		d.lastUpdate = time.Unix(int64(sec), 0).UTC().Format("Mon, 02 Jan 2006 15:04:05 -0700")
	}

	d.errors, d.recoverable = collectErrors(v1)
	if len(d.errors) == 0 && len(resultErrors) > 0 {
		d.errors = append(d.errors, resultErrors...)
	}
	switch {
	case len(d.errors) > 0:
		d.condition = condError
	case len(d.recoverable.keys) > 0:
		d.condition = condDegraded
	default:
		d.condition = condHealthy
	}

	switch {
	case strings.HasPrefix(d.bootCode, "disabled-"):
		d.running = runDisabled
	case statusExists && started && (!resultExists || unfinished):
		d.running = runRunning
	case latest > 0:
		d.running = runDone
	default:
		d.running = runNotStarted
	}
	return d, nil
}

// bootStatus returns the boot status code and its description.
func bootStatus(env *Env) (code, reason string) {
	cmdline := ""
	if b, err := os.ReadFile(env.Path("/proc/cmdline")); err == nil {
		cmdline = " " + strings.Join(strings.Fields(string(b)), " ") + " "
	}
	switch {
	case !isDir(env.Path("/run/systemd/system")) && fileExists(env.Path(state.DisabledMarker)):
		// Deliberately unlike 26.x, which without systemd reports every
		// boot "enabled-by-sysvinit" (not started, and `status --wait`
		// never returns): there only the systemd generator writes this
		// marker, but cloudroot's initramfs plays ds-identify's and the
		// generator's part on every init system and writes it when it
		// disabled provisioning for this boot.
		code = bootDisabledByGenerator
	case !isDir(env.Path("/run/systemd/system")):
		// 26.x's uses_systemd(): without systemd every boot is
		// "enabled-by-sysvinit", whatever else is found (OpenRC,
		// busybox init and sysvinit alike).
		code = bootEnabledBySysvinit
	case strings.Contains(cmdline, " cloud-init=enabled "):
		code = bootEnabledByCmdline
	case fileExists(env.Path(markerDisabledFile)):
		code = bootDisabledByMarker
	case strings.Contains(cmdline, " cloud-init=disabled "):
		code = bootDisabledByCmdline
	case fileExists(env.Path(state.DisabledMarker)):
		code = bootDisabledByGenerator
	case fileExists(env.Path(state.EnabledMarker)):
		code = bootEnabledByGenerator
	default:
		code = bootUnknown
	}
	reason, ok := bootReasons()[code]
	if !ok {
		reason = "Cloud-init boot status: " + code
	}
	return code, reason
}

// collectErrors is cloud-init's get_errors: stages in sorted key order,
// recoverable errors merged by level in first-seen order.
func collectErrors(v1 *jsonObject) ([]any, *jsonObject) {
	errs := []any{}
	rec := newJSONObject()
	keys := append([]string(nil), v1.keys...)
	sort.Strings(keys)
	for _, k := range keys {
		st, ok := v1.vals[k].(*jsonObject)
		if !ok {
			continue
		}
		if l, ok := st.get("errors").([]any); ok {
			errs = append(errs, l...)
		}
		r, ok := st.get("recoverable_errors").(*jsonObject)
		if !ok {
			continue
		}
		for _, level := range r.keys {
			msgs, _ := r.vals[level].([]any)
			prev, _ := rec.get(level).([]any)
			rec.set(level, append(append([]any{}, prev...), msgs...))
		}
	}
	return errs, rec
}

// translate is cloud-init's translate_status: (status, extended_status).
func (d *statusDetails) translate() (string, string) {
	switch {
	case d.condition == condError:
		return condError, condError + " - " + d.running
	case d.condition == condDegraded && (d.running == runDone || d.running == runRunning):
		return d.running, condDegraded + " " + d.running
	}
	return d.running, d.running
}

// dict is the mapping cloud-init prints as json or yaml.
func (d *statusDetails) dict() *jsonObject {
	status, extended := d.translate()
	m := newJSONObject()
	m.set("datasource", d.datasource)
	m.set("boot_status_code", d.shownCode)
	m.set("status", status)
	m.set("extended_status", extended)
	m.set("detail", d.description)
	m.set("errors", d.errors)
	m.set("recoverable_errors", d.recoverable)
	m.set("last_update", d.lastUpdate)
	for _, k := range d.v1.keys {
		// datasource is popped by cloud-init; boot_status_code is cloudroot's
		// record, already in d.shownCode.
		if k == "datasource" || k == "boot_status_code" {
			continue
		}
		m.set(k, d.v1.vals[k])
	}
	return m
}

func (d *statusDetails) print(w *bytes.Buffer, opts statusOptions) {
	switch opts.format {
	case "json":
		s, err := pyval.JSONDumps(d.dict(), pyval.JSONOptions{Indent: 2, SortKeys: true})
		if err != nil { // d.dict holds decoded JSON only
			s = fmt.Sprint(err)
		}
		w.WriteString(s + "\n")
	case "yaml":
		w.WriteString(pyYAMLDump(d.dict()))
		w.WriteString("\n")
	default:
		status, extended := d.translate()
		fmt.Fprintf(w, "status: %s\n", status)
		if !opts.long {
			return
		}
		fmt.Fprintf(w, "extended_status: %s\n", extended)
		fmt.Fprintf(w, "boot_status_code: %s\n", d.shownCode)
		if mode, _ := d.v1.get("mode").(string); mode != "" {
			// cloudroot's: the stages ran in the root, not the initramfs.
			fmt.Fprintf(w, "mode: %s\n", mode)
		}
		if d.lastUpdate != "" {
			fmt.Fprintf(w, "last_update: %s\n", d.lastUpdate)
		}
		fmt.Fprintf(w, "detail: %s\n", d.description)
		w.WriteString("errors:")
		if len(d.errors) == 0 {
			w.WriteString(" []")
		}
		for _, e := range d.errors {
			w.WriteString("\n\t- " + pyval.Str(e))
		}
		w.WriteString("\nrecoverable_errors:")
		if len(d.recoverable.keys) == 0 {
			w.WriteString(" {}")
		} else {
			for _, level := range d.recoverable.keys {
				msgs, _ := d.recoverable.vals[level].([]any)
				parts := make([]string, len(msgs))
				for j, m := range msgs {
					parts[j] = strings.ReplaceAll(pyval.Str(m), "\n", " ")
				}
				w.WriteString("\n" + level + ":\n\t- " + strings.Join(parts, "\n\t- "))
			}
		}
		w.WriteString("\n")
	}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// readV1 reads a {"v1": {...}} file; a missing or non-object v1 is empty.
func readV1(path string) (*jsonObject, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	v, err := decodeOrderedJSON(b)
	if err != nil {
		return nil, fmt.Errorf("parsing %s: %w", path, err)
	}
	top, ok := v.(*jsonObject)
	if !ok {
		return nil, fmt.Errorf("parsing %s: not a JSON object", path)
	}
	if v1, ok := top.get("v1").(*jsonObject); ok {
		return v1, nil
	}
	return newJSONObject(), nil
}

// truthy is Python truthiness for decoded JSON values.
func truthy(v any) bool {
	switch v := v.(type) {
	case nil:
		return false
	case bool:
		return v
	case string:
		return v != ""
	case json.Number:
		return jsonFloat(v) != 0
	case []any:
		return len(v) > 0
	case *jsonObject:
		return len(v.keys) > 0
	}
	return true
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}
