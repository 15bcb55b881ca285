package cli

// `cloud-init query [varname] [-a] [-l] [-f TMPL] [-i FILE] [-u FILE]
// [-v FILE] [-d]`
//
// The contract, after cloud-init 26.x cloudinit/cmd/query.py:
//
//   - one of --all, --format, --list-keys or a (non-empty) varname is
//     required; without one the error is logged, the help of "query" is
//     printed on stdout and the exit is 1.
//   - the instance data is -i, else <root>/run/cloud-init/instance-data-
//     sensitive.json for root (instance-data.json, with a warning, when it
//     is missing) and instance-data.json for everyone else. A missing or
//     unreadable file is logged ("Missing instance-data file: <path>", "No
//     read permission on '<path>'. Try sudo") and exits 1.
//   - three keys are added: userdata and vendordata (the contents of -u/-v,
//     default /var/lib/cloud/instance/{user,vendor}-data.txt; "" when
//     missing, gunzipped when not UTF-8) and combined_cloud_config
//     (/run/cloud-init/combined-cloud-config.json, null when missing). For
//     non-root all three are "<redacted for non-root user> file:<path>".
//   - --format renders "## template: jinja\n<TMPL>" with the jinja variables
//     (userdata.RenderJinja: v<N> keys at top level, operator keys aliased
//     with "_", undefined variables as CI_MISSING_JINJA_VAR/<name> with a
//     warning) and prints it with a newline; an empty rendering exits 1, a
//     syntax error logs "Failed to render templated data. ..." and exits 1.
//   - otherwise the response is the instance data with every v<N> mapping
//     also copied to the top level (no aliases). varname, a dot path, walks
//     it, each part matching a key or its underscore alias; a miss logs
//     "Undefined instance-data key '<varname>'" (first part) or
//     "instance-data '<walked.path>' has no '<part>'" and exits 1.
//     --list-keys prints the sorted keys of the response one a line ("--
//     list-keys provided but '<varname>' is not a dict" otherwise). A string
//     response is printed raw, anything else as util.json_dumps (indent 1,
//     sorted keys).

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"regexp"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/cloudroot/cloudroot/pkg/secret"
	"github.com/cloudroot/cloudroot/pkg/state"
	"github.com/cloudroot/cloudroot/pkg/target"
	"github.com/cloudroot/cloudroot/pkg/userdata"
)

func queryCommand() Command {
	return Command{
		Name:  "query",
		Short: "Query standardized instance metadata from the command line.",
		Run:   runQuery,
	}
}

// queryDescription is the bare parser's description (cloud-init prints it
// only from a parser of its own, not under `cloud-init query --help`).
const queryDescription = `
Query standardized instance metadata provided to machine, returning a JSON
structure. Some instance-data values may be binary on some platforms, such as
userdata and vendordata. Attempt to decompress and decode UTF-8 any binary
values. Any binary values in the instance metadata will be base64-encoded and
prefixed with "ci-b64:" in the output. userdata and, where applicable,
vendordata may be provided to the machine gzip-compressed (and therefore as
binary data). query will attempt to decompress these to a string before
emitting the JSON output; if this fails, they are treated as binary.
`

const queryOptionsHelp = `
positional arguments:
  varname               A dot-delimited specific variable to query from
                        instance-data. For example: v1.local_hostname. If the
                        value is not JSON serializable, it will be
                        base64-encoded and will contain the prefix "ci-b64:".

options:
  -h, --help            show this help message and exit
  -d, --debug           Add verbose messages during template render
  -i INSTANCE_DATA, --instance-data INSTANCE_DATA
                        Path to instance-data.json file. Default is
                        /run/cloud-init/instance-data.json
  -l, --list-keys       List query keys available at the provided instance-
                        data <varname>.
  -u USER_DATA, --user-data USER_DATA
                        Path to user-data file. Default is
                        /var/lib/cloud/instance/user-data.txt
  -v VENDOR_DATA, --vendor-data VENDOR_DATA
                        Path to vendor-data file. Default is
                        /var/lib/cloud/instance/vendor-data.txt
  -a, --all             Dump all available instance-data
  -f FORMAT, --format FORMAT
                        Optionally specify a custom output format string. Any
                        instance-data variable can be specified between
                        double-curly braces. For example -f "{{ v2.cloud_name
                        }}"
`

var queryArgs = &argParser{
	prog: "cloud-init query",
	usage: "usage: cloud-init query [-h] [-d] [-i INSTANCE_DATA] [-l] [-u USER_DATA]\n" +
		"                        [-v VENDOR_DATA] [-a] [-f FORMAT]\n" +
		"                        [varname]\n",
	help: queryOptionsHelp,
	opts: []argOpt{
		{short: "-d", long: "--debug", dest: "debug"},
		{short: "-i", long: "--instance-data", dest: "instance_data", metavar: "INSTANCE_DATA"},
		{short: "-l", long: "--list-keys", dest: "list_keys"},
		{short: "-u", long: "--user-data", dest: "user_data", metavar: "USER_DATA"},
		{short: "-v", long: "--vendor-data", dest: "vendor_data", metavar: "VENDOR_DATA"},
		{short: "-a", long: "--all", dest: "dump_all"},
		{short: "-f", long: "--format", dest: "format", metavar: "FORMAT"},
	},
	positionals: []string{"varname"},
}

// queryBareUsage is the usage cloud-init prints (from a fresh parser named
// "query") when no query was asked for.
const queryBareUsage = "usage: query [-h] [-d] [-i INSTANCE_DATA] [-l] [-u USER_DATA] [-v VENDOR_DATA]\n" +
	"             [-a] [-f FORMAT]\n" +
	"             [varname]\n"

const queryLog = "query.py"

func runQuery(_ context.Context, env *Env, args []string) int {
	a, rc, ok := queryArgs.run(env, args)
	if !ok {
		return rc
	}
	varname := ""
	if len(a.pos) > 0 {
		varname = a.pos[0]
	}
	format := a.value("format")
	if !a.flag("list_keys") && varname == "" && format == "" && !a.flag("dump_all") {
		cliLog(env, queryLog, "ERROR", "Expected one of the options: --all, --format, --list-keys or varname")
		io.WriteString(env.Stdout, queryBareUsage+queryDescription+queryOptionsHelp)
		return 1
	}
	data, ok := readQueryData(env, a.value("instance_data"), a.value("user_data"), a.value("vendor_data"))
	if !ok {
		return 1
	}
	if format != "" {
		payload := []byte("## template: jinja\n" + format)
		failed := false
		out, ok := renderPayload(env, payload, "query command line", data, a.flag("debug"), func(msg string) {
			cliLog(env, queryLog, "ERROR", "Failed to render templated data. %s", msg)
			failed = true
		})
		if failed || !ok || len(out) == 0 {
			return 1
		}
		env.Stdout.Write(out)
		io.WriteString(env.Stdout, "\n")
		return 0
	}

	var response any = instanceVars(data)
	if varname != "" {
		aliased := plainValue(aliasedVars(data))
		v, err := queryPath(response, aliased, varname)
		if err != nil {
			cliLog(env, queryLog, "ERROR", "%s", err)
			return 1
		}
		response = v
	}
	if a.flag("list_keys") {
		m, isMap := response.(map[string]any)
		if !isMap {
			name := varname
			if name == "" {
				name = "None"
			}
			cliLog(env, queryLog, "ERROR", "--list-keys provided but '%s' is not a dict", name)
			return 1
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		response = strings.Join(keys, "\n")
	}
	s, isStr := response.(string)
	if !isStr {
		s = jsonDumps(response)
	}
	io.WriteString(env.Stdout, s+"\n")
	return 0
}

// readQueryData is query's _read_instance_data. ok is false after an error
// was logged.
func readQueryData(env *Env, instanceData, userData, vendorData string) (map[string]any, bool) {
	shown, host := instanceData, instanceData
	if shown == "" {
		shown, host = defaultInstanceData(env, queryLog)
	}
	udShown, udHost := userData, userData
	if udShown == "" {
		udShown, udHost = instancePath(env, "user-data.txt")
	}
	vdShown, vdHost := vendorData, vendorData
	if vdShown == "" {
		vdShown, vdHost = instancePath(env, "vendor-data.txt")
	}
	b, err := os.ReadFile(host)
	if err != nil {
		if errors.Is(err, os.ErrPermission) {
			cliLog(env, queryLog, "ERROR", "No read permission on '%s'. Try sudo", shown)
		} else {
			cliLog(env, queryLog, "ERROR", "Missing instance-data file: %s", shown)
		}
		return nil, false
	}
	data, err := decodeInstanceJSON(b)
	if err != nil {
		cliLog(env, queryLog, "ERROR", "Invalid instance-data file %s: %s", shown, err)
		return nil, false
	}
	var combined any
	if cb, err := os.ReadFile(env.Path(state.CombinedConfig)); err == nil {
		if c, err := decodeInstanceJSON(cb); err == nil {
			combined = c
		}
	}
	if !env.IsRoot {
		redacted := func(p string) string { return "<" + secret.Redacted + "> file:" + p }
		data["userdata"] = redacted(udShown)
		data["vendordata"] = redacted(vdShown)
		data["combined_cloud_config"] = redacted(state.CombinedConfig)
		return data, true
	}
	data["userdata"] = loadUserData(udHost)
	data["vendordata"] = loadUserData(vdHost)
	data["combined_cloud_config"] = combined
	return data, true
}

// instancePath is /var/lib/cloud/instance/<name>: the path to show and the
// host path (the instance link resolved inside env.Root).
func instancePath(env *Env, name string) (shown, host string) {
	shown = path.Join(state.InstanceLink, name)
	if t, err := target.New(env.Root); err == nil {
		if h, err := t.Resolve(shown); err == nil {
			return shown, h
		}
	}
	return shown, env.Path(shown)
}

// loadUserData is query's load_userdata: the file as text, gunzipped when it
// is not UTF-8, "" when missing; binary content becomes "ci-b64:<base64>".
func loadUserData(p string) string {
	b, err := os.ReadFile(p)
	if err != nil {
		return ""
	}
	if utf8.Valid(b) {
		return string(b)
	}
	if zr, err := gzip.NewReader(bytes.NewReader(b)); err == nil {
		if out, err := io.ReadAll(io.LimitReader(zr, 64<<20)); err == nil && utf8.Valid(out) {
			return string(out)
		}
	}
	return "ci-b64:" + base64.StdEncoding.EncodeToString(b)
}

var versionKeyRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^v\d+$`) })

// instanceVars is convert_jinja_instance_data without aliases or base64
// decoding: every v<N> mapping is also copied to the top level, later
// (sorted) keys overwriting earlier ones.
func instanceVars(data map[string]any) map[string]any {
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make(map[string]any, len(data))
	for _, k := range keys {
		if m, ok := data[k].(map[string]any); ok {
			sub := instanceVars(m)
			out[k] = sub
			if versionKeyRE().MatchString(k) {
				for sk, sv := range sub {
					out[sk] = sv
				}
			}
			continue
		}
		out[k] = data[k]
	}
	return out
}

// aliasedVars is the instance data as templates see it (userdata.JinjaVars):
// v<N> keys at the top level and operator keys aliased with "_".
func aliasedVars(data map[string]any) any {
	return userdata.JinjaVars(jinjaData(data).(map[string]any))
}

// jinjaOperatorRE is Jinja's operator regexp: keys containing one are
// reachable in templates (and query paths) through an "_" alias.
var jinjaOperatorRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`//|\*\*|==|!=|>=|<=|[-+/*%~\[\](){}<>=.:|,;]`) })

// queryError is a dot path that does not resolve.
type queryError struct {
	Path   string // the whole varname
	Walked string // the parts that resolved ("" when the first one failed)
	Leaf   string // the part that did not
}

func (e *queryError) Error() string {
	if e.Walked == "" {
		return fmt.Sprintf("Undefined instance-data key '%s'", e.Path)
	}
	return fmt.Sprintf("instance-data '%s' has no '%s'", e.Walked, e.Leaf)
}

// queryPath walks varname (dot-delimited) through response, using aliased
// (the same data with jinja aliases) to decide which names exist, as
// cloud-init's _find_instance_data_leaf_by_varname_path does.
func queryPath(response, aliased any, varname string) (any, error) {
	walked := ""
	for _, part := range strings.Split(varname, ".") {
		am, ok := aliased.(map[string]any)
		var next any
		if ok {
			next, ok = am[part]
		}
		if !ok {
			return nil, &queryError{Path: varname, Walked: walked, Leaf: part}
		}
		aliased = next
		if rm, isMap := response.(map[string]any); isMap {
			if v, found := rm[part]; found {
				response = v
			} else {
				keys := make([]string, 0, len(rm))
				for k := range rm {
					keys = append(keys, k)
				}
				sort.Strings(keys)
				for _, k := range keys {
					if jinjaOperatorRE().ReplaceAllString(k, "_") == part {
						response = rm[k]
						break
					}
				}
			}
		}
		if walked != "" {
			walked += "."
		}
		walked += part
	}
	return response, nil
}
