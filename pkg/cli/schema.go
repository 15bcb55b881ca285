package cli

// `cloud-init schema [-c FILE] [-t {cloud-config,network-config}] [-i FILE]
// [--system] [--annotate]`
//
// The contract, after cloud-init 26.x cloudinit/config/schema.py
// (handle_schema_args, validate_cloudconfig_file):
//
//   - exactly one of --config-file and --system, else "Error:\nExpected one
//     of --config-file or --system arguments" on stderr, exit 1. --system
//     with --schema-type prints a WARNING line on stdout and goes on.
//   - --system needs root ("Unable to read system userdata or vendordata as
//     non-root user. Try using sudo.", exit 1) and validates, from the
//     current instance directory: user-data (cloud-config.txt, or the raw
//     user-data.txt when the processed file is empty), and when present
//     vendor-data (vendor-cloud-config.txt / vendor-data.txt), vendor2-data
//     (vendor2-cloud-config.txt / vendor-data2.txt) and network-config
//     (network-config.json). With several, a "Found cloud-config data
//     types:" line and a numbered, indented section per file.
//   - a missing first file: "Error: Config file <path> does not exist",
//     exit 1. An empty file: "Empty 'cloud-config' found at <path>. Nothing
//     to validate." (not counted as valid or invalid).
//   - user-data is typed by its first line. "## template: jinja" is rendered
//     with the instance data first (-i, else instance-data-sensitive.json
//     for root and instance-data.json for others); a missing instance-data
//     file or a template syntax error ends the command ("Error:\n...", exit
//     1). An unknown header is a schema error at format-l1.c1 (l2 after
//     rendering); other user-data types are "not currently evaluated".
//   - cloud-config is validated with pkg/cloudcfg/schema. Deprecations (and
//     cloudroot's warnings for unknown keys) are printed as summary lines on
//     stdout and do not fail; errors print "Invalid <type> <path>" on stdout
//     and "Error: Cloud config schema errors: ..." on stderr. A document
//     that is not a mapping is "Invalid <type>" with "Error: cloud-config
//     <path> is not a YAML dict.".
//   - --annotate prints the document with problem markers instead of the
//     summaries, when it has any problem.
//   - the end: "Error: Invalid schema: <types>" on stderr and exit 1 when any
//     file had errors, else exit 0.
//   - network-config (-t network-config, or network-config.json under
//     --system) is checked by schema.ValidateNetwork: version 1 against
//     the v1 schema, anything else against the v2 schema (cloud-init's
//     path when netplan's API is absent), bare or under a network: key;
//     an empty config prints "Skipping network-config schema validation on
//     empty config.".

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/cloudcfg/schema"
	"github.com/cloudroot/cloudroot/pkg/state"
	"github.com/cloudroot/cloudroot/pkg/target"
	"github.com/cloudroot/cloudroot/pkg/userdata"
	"github.com/cloudroot/cloudroot/pkg/yaml11"
)

func schemaCommand() Command {
	return Command{
		Name:  "schema",
		Short: "Validate cloud-config files using jsonschema.",
		Run:   runSchema,
	}
}

var schemaArgs = &argParser{
	prog: "cloud-init schema",
	usage: "usage: cloud-init schema [-h] [-c CONFIG_FILE]\n" +
		"                         [-t {cloud-config,network-config}] [-i INSTANCE_DATA]\n" +
		"                         [--system] [--annotate]\n",
	help: `
options:
  -h, --help            show this help message and exit
  -c CONFIG_FILE, --config-file CONFIG_FILE
                        Path of the cloud-config or network-config YAML file
                        to validate
  -t {cloud-config,network-config}, --schema-type {cloud-config,network-config}
                        When providing --config-file, the schema type to
                        validate config against. Default:
                        SchemaType.CLOUD_CONFIG
  -i INSTANCE_DATA, --instance-data INSTANCE_DATA
                        Path to instance-data.json file for variable expansion
                        of '##template: jinja' user-data. Default: /run/cloud-
                        init/instance-data.json
  --system              Validate the system instance-data provided as vendor-
                        data user-data and network-config
  --annotate            Annotate existing instance-data files any discovered
                        errors
`,
	opts: []argOpt{
		{short: "-c", long: "--config-file", dest: "config_file", metavar: "CONFIG_FILE"},
		{short: "-t", long: "--schema-type", dest: "schema_type", metavar: "SCHEMA_TYPE", choices: []string{schemaCloudConfig, schemaNetworkConfig}},
		{short: "-i", long: "--instance-data", dest: "instance_data", metavar: "INSTANCE_DATA"},
		{long: "--system", dest: "system"},
		{long: "--annotate", dest: "annotate"},
	},
}

// Schema and instance-data types, cloud-init's values.
const (
	schemaCloudConfig   = "cloud-config"
	schemaNetworkConfig = "network-config"

	partUserData      = "user-data"
	partVendorData    = "vendor-data"
	partVendor2Data   = "vendor2-data"
	partNetworkConfig = "network-config"
)

// mergedPartErrorPrefix starts the comment cloud-init leaves in
// cloud-config.txt for a cloud-config part it had to ignore.
const mergedPartErrorPrefix = "# Cloud-config part ignored SCHEMA_ERROR: "

// emptyCloudConfig is what cloudroot before 2026-11-28 wrote to
// cloud-config.txt when the user-data held no cloud-config (cloud-init, and
// cloudroot since, write an empty file); such a file still counts as empty.
const emptyCloudConfig = "#cloud-config\n{}\n"

// schemaPart is one document to validate.
type schemaPart struct {
	kind       string // user-data, vendor-data, ...
	schemaType string // cloud-config or network-config
	shown      string // the path printed
	host       string // the path opened
}

// schemaExit ends the command: msg printed on stderr, exit 1.
type schemaExit struct{ msg string }

func (e *schemaExit) Error() string { return e.msg }

// schemaInvalid is a SchemaValidationError carrying errors.
type schemaInvalid struct{ findings []schema.Finding }

func (e *schemaInvalid) Error() string { return schema.Summary(schema.ErrorsPrefix, e.findings) }

// schemaNotDict is cloud-init's RuntimeError for a non-mapping document.
type schemaNotDict struct{ msg string }

func (e *schemaNotDict) Error() string { return e.msg }

func runSchema(_ context.Context, env *Env, args []string) int {
	// Files are echoed (a bad header line, --annotate): never raw bytes or
	// escape sequences to the terminal.
	safe := *env
	safe.Stdout, safe.Stderr = termSafeWriter{env.Stdout}, termSafeWriter{env.Stderr}
	env = &safe
	a, rc, ok := schemaArgs.run(env, args)
	if !ok {
		return rc
	}
	configFile, system := a.value("config_file"), a.flag("system")
	if (configFile != "") == system {
		io.WriteString(env.Stderr, "Error:\nExpected one of --config-file or --system arguments\n")
		return 1
	}
	if system && a.set["schema_type"] {
		io.WriteString(env.Stdout, "WARNING: The --schema-type parameter is inapplicable when --system is present\n")
	}
	annotate := a.flag("annotate")

	idShown, idHost := a.value("instance_data"), a.value("instance_data")
	if idShown == "" {
		idShown = state.InstanceDataFile
		if env.IsRoot {
			idShown = state.InstanceDataSens
		}
		idHost = env.Path(idShown)
	}

	var parts []schemaPart
	if configFile != "" {
		st := a.value("schema_type")
		if st == "" {
			st = schemaCloudConfig
		}
		kind := partUserData
		if st == schemaNetworkConfig {
			kind = partNetworkConfig
		}
		parts = append(parts, schemaPart{kind: kind, schemaType: st, shown: configFile, host: configFile})
	} else {
		if !env.IsRoot {
			io.WriteString(env.Stderr, "Error:\nUnable to read system userdata or vendordata as non-root user. Try using sudo.\n")
			return 1
		}
		parts = systemParts(env)
	}
	if _, err := os.Stat(parts[0].host); err != nil {
		fmt.Fprintf(env.Stderr, "Error: Config file %s does not exist\n", parts[0].shown)
		return 1
	}
	prefix := ""
	multi := len(parts) > 1
	if multi {
		kinds := make([]string, len(parts))
		for i, p := range parts {
			kinds[i] = p.kind
		}
		fmt.Fprintf(env.Stdout, "Found cloud-config data types: %s\n", strings.Join(kinds, ", "))
		prefix = "  "
	}
	var errorTypes []string
	for i, p := range parts {
		if multi {
			fmt.Fprintf(env.Stdout, "\n%d. %s at %s:\n", i+1, p.kind, p.shown)
		}
		performed, err := validateSchemaPart(env, p, annotate, idShown, idHost)
		var exit *schemaExit
		var invalid *schemaInvalid
		var notDict *schemaNotDict
		switch {
		case errors.As(err, &exit):
			fmt.Fprintf(env.Stderr, "%s\n", exit.msg)
			return 1
		case errors.As(err, &invalid):
			if !annotate {
				fmt.Fprintf(env.Stdout, "%sInvalid %s %s\n", prefix, p.kind, p.shown)
				fmt.Fprintf(env.Stderr, "%sError: %s\n\n", prefix, invalid.Error())
			}
			errorTypes = append(errorTypes, p.kind)
		case errors.As(err, &notDict):
			fmt.Fprintf(env.Stdout, "%sInvalid %s\n", prefix, p.kind)
			fmt.Fprintf(env.Stderr, "%sError: %s\n\n", prefix, notDict.msg)
			errorTypes = append(errorTypes, p.kind)
		case err != nil:
			fmt.Fprintf(env.Stderr, "Error:\n%s\n", err)
			return 1
		case performed:
			name := p.kind
			if configFile != "" {
				name = p.shown
			}
			fmt.Fprintf(env.Stdout, "%sValid schema %s\n", prefix, name)
		}
	}
	if len(errorTypes) > 0 {
		fmt.Fprintf(env.Stderr, "Error: Invalid schema: %s\n\n", strings.Join(errorTypes, ", "))
		return 1
	}
	return 0
}

// systemParts lists this instance's documents: user-data always (its
// existence is checked by the caller), the others when present.
func systemParts(env *Env) []schemaPart {
	t, err := target.New(env.Root)
	resolve := func(p string) string {
		if err == nil {
			if h, rerr := t.Resolve(p); rerr == nil {
				return h
			}
		}
		return env.Path(p)
	}
	// The instance directory as cloud-init names it: instances/<iid>.
	idir := state.InstanceLink
	if link, lerr := os.Readlink(env.Path(state.InstanceLink)); lerr == nil {
		if path.IsAbs(link) {
			idir = path.Clean(link)
		} else {
			idir = path.Join(path.Dir(state.InstanceLink), link)
		}
	} else if _, serr := os.Stat(env.Path(state.InstanceLink)); serr != nil {
		cliLog(env, "schema.py", "WARNING", "datasource not detected, using default instance-data/user-data paths.")
	}
	size := func(p string) (int64, bool) {
		fi, err := os.Stat(resolve(p))
		if err != nil || !fi.Mode().IsRegular() {
			return 0, false
		}
		if fi.Size() == int64(len(emptyCloudConfig)) {
			if b, err := os.ReadFile(resolve(p)); err == nil && string(b) == emptyCloudConfig {
				return 0, true
			}
		}
		return fi.Size(), true
	}
	// processedOrRaw prefers the processed file unless it is empty (or, a
	// cloudroot addition, missing) and the raw one is not.
	processedOrRaw := func(processed, raw string) string {
		p, r := path.Join(idir, processed), path.Join(idir, raw)
		if n, ok := size(p); !ok || n == 0 {
			if rn, rok := size(r); rok && rn > 0 {
				return r
			}
		}
		return p
	}
	ud := processedOrRaw("cloud-config.txt", "user-data.txt")
	parts := []schemaPart{{partUserData, schemaCloudConfig, ud, resolve(ud)}}
	for _, s := range []schemaPart{
		{partVendorData, schemaCloudConfig, processedOrRaw("vendor-cloud-config.txt", "vendor-data.txt"), ""},
		{partVendor2Data, schemaCloudConfig, processedOrRaw("vendor2-cloud-config.txt", "vendor-data2.txt"), ""},
		{partNetworkConfig, schemaNetworkConfig, path.Join(idir, "network-config.json"), ""},
	} {
		s.host = resolve(s.shown)
		if _, err := os.Stat(s.host); err == nil {
			parts = append(parts, s)
		}
	}
	return parts
}

// userDataHeaders are the first lines cloud-init recognises, sorted.
func userDataHeaders() []string {
	var hs []string
	for _, f := range userdata.Formats {
		if strings.HasPrefix(f.Header, "#") {
			hs = append(hs, f.Header)
		}
	}
	sort.Strings(hs)
	return hs
}

// userDataType is cloud-init's type_from_starts_with: the type whose header
// starts b (case-insensitive, leading whitespace skipped), longest first.
func userDataType(b []byte) string {
	b = bytes.TrimLeft(b, " \t\r\n\v\f")
	best := ""
	typ := ""
	for _, f := range userdata.Formats {
		if f.Header == "" || len(f.Header) <= len(best) || len(b) < len(f.Header) {
			continue
		}
		if strings.EqualFold(string(b[:len(f.Header)]), f.Header) {
			best, typ = f.Header, f.Type
		}
	}
	return typ
}

// validateSchemaPart is validate_cloudconfig_file: performed reports whether
// a schema was checked; err is *schemaInvalid, *schemaNotDict or
// *schemaExit.
func validateSchemaPart(env *Env, p schemaPart, annotate bool, idShown, idHost string) (bool, error) {
	content, err := os.ReadFile(p.host)
	if err != nil {
		return false, &schemaExit{fmt.Sprintf("Error:\n%s", pyOSError(err))}
	}
	if len(content) == 0 {
		fmt.Fprintf(env.Stdout, "Empty '%s' found at %s. Nothing to validate.\n", p.schemaType, p.shown)
		return false, nil
	}
	if p.schemaType == schemaNetworkConfig {
		return validateNetworkPart(env, p, content, annotate)
	}
	typ := userDataType(content)
	line := 1
	if typ == userdata.TypeJinja {
		data, msg := loadJinjaInstanceData(idHost, idShown)
		if msg != "" {
			return false, &schemaExit{"Error:\n" + msg}
		}
		var syntax string
		out, _ := renderPayload(env, content, p.shown, data, false, func(s string) { syntax = s })
		if syntax != "" {
			return false, &schemaExit{"Error:\nFailed to render templated user-data. " + syntax}
		}
		content = out
		line = 2
		typ = userDataType(content)
	}
	if typ == "" {
		header, _, _ := strings.Cut(string(content), "\n")
		return false, &schemaInvalid{[]schema.Finding{{Line: line, Column: 1, Severity: schema.Error,
			Message: fmt.Sprintf("Unrecognized user-data header in %s: \"%s\".\nExpected first line to be one of: %s",
				p.shown, header, strings.Join(userDataHeaders(), ", "))}}}
	}
	if typ != userdata.TypeCloudConfig {
		fmt.Fprintf(env.Stdout, "User-data type '%s' not currently evaluated by cloud-init schema\n", typ)
		return false, nil
	}

	// One parse: ValidateTop says whether the document is a mapping.
	r, top := schema.ValidateTop(content, p.shown)
	if top == schema.TopOther {
		return false, &schemaNotDict{fmt.Sprintf("%s %s is not a YAML dict.", p.schemaType, p.shown)}
	}
	r.Findings = append(mergedPartProblems(content), r.Findings...)
	return reportSchemaPart(env, content, r, annotate)
}

// mergedPartProblems are the errors cloud-init left in a processed file
// for parts it ignored.
func mergedPartProblems(content []byte) []schema.Finding {
	if !bytes.Contains(content, []byte(mergedPartErrorPrefix)) {
		return nil
	}
	var problems []schema.Finding
	for i, l := range strings.Split(string(content), "\n") {
		if strings.HasPrefix(l, mergedPartErrorPrefix) {
			problems = append(problems, schema.Finding{Line: i + 1, Column: 1, Severity: schema.Error,
				Message: strings.Replace(l, mergedPartErrorPrefix, "Ignored invalid user-data: ", 1)})
		}
	}
	return problems
}

// validateNetworkPart is validate_cloudconfig_file for network-config:
// version 1 or 2 (bare or under network:), checked with
// schema.ValidateNetwork; an empty config is skipped with a note.
func validateNetworkPart(env *Env, p schemaPart, content []byte, annotate bool) (bool, error) {
	problems := mergedPartProblems(content)
	if doc, _, yerr := yaml11.Load(p.shown, content); yerr == nil {
		if _, isMap := doc.(map[string]any); !isMap {
			return false, &schemaNotDict{fmt.Sprintf("%s %s is not a YAML dict.", p.schemaType, p.shown)}
		}
	}
	r, performed := schema.ValidateNetwork(content, p.shown)
	if !performed {
		io.WriteString(env.Stdout, "Skipping network-config schema validation on empty config.\n")
		return false, nil
	}
	r.Findings = append(problems, r.Findings...)
	return reportSchemaPart(env, content, r, annotate)
}

// reportSchemaPart prints r's annotation or summaries and returns
// validateSchemaPart's answer for it.
func reportSchemaPart(env *Env, content []byte, r schema.Report, annotate bool) (bool, error) {
	if len(r.Findings) == 0 {
		return true, nil
	}
	if annotate {
		io.WriteString(env.Stdout, schema.Annotate(content, r)+"\n")
	} else {
		for _, s := range []string{
			schema.Summary(schema.DeprecationsPrefix, r.Of(schema.Deprecation)),
			schema.Summary(schema.WarningsPrefix, r.Of(schema.Warning)),
		} {
			if s != "" {
				io.WriteString(env.Stdout, s+"\n")
			}
		}
	}
	if errs := r.Of(schema.Error); len(errs) > 0 {
		return false, &schemaInvalid{errs}
	}
	return true, nil
}
