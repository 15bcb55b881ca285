// Package schema validates cloud-config against cloudroot's JSON schema
// (cloud-config.schema.json, draft 2020-12, embedded) and cloud-init's
// deprecation list, reporting every finding with its key path
// (users.0.sudo), YAML line and column and a severity:
//
//   - error: the value has the wrong shape for a module cloudroot implements
//     (or the YAML cannot be read);
//   - deprecation: cloud-init deprecated the key or value (still honoured);
//   - warning: a key no module reads (cloud-init reports these as errors;
//     cloudroot's style is to warn).
//
// Keys of cloud-init modules cloudroot does not implement are accepted
// without checks. Validation never stops at the first problem and never
// panics on input. Format and Annotate print a Report the way
// `cloud-init schema` and `cloud-init schema --annotate` do.
//
// ValidateNetwork checks network-config version 1 and 2 against
// network-config-v1.schema.json and network-config-v2.schema.json (see
// network.go), all findings errors, as `cloud-init schema -t
// network-config` reports them.
package schema

import (
	"bytes"
	_ "embed"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/cloudroot/cloudroot/pkg/internal/pyval"
	"github.com/cloudroot/cloudroot/pkg/yaml11"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"gopkg.in/yaml.v3"
)

//go:embed cloud-config.schema.json
var schemaJSON []byte

const schemaURL = "https://cloudroot.invalid/schema/cloud-config.json"

// JSON returns the embedded schema document.
func JSON() []byte { return slices.Clone(schemaJSON) }

// Severity orders findings: errors first.
type Severity int

// Severities.
const (
	Error Severity = iota
	Deprecation
	Warning
)

func (s Severity) String() string {
	switch s {
	case Error:
		return "error"
	case Deprecation:
		return "deprecation"
	}
	return "warning"
}

// Finding is one problem in a document. Path is the dotted key path
// ("users.0.sudo"), "" for the document itself; Line and Column are 1-based
// (0 when unknown).
type Finding struct {
	Path     string
	Line     int
	Column   int
	Severity Severity
	Message  string
	// Notice marks what cloud-init does not report at all (a repeated key,
	// whose last value is used): `schema` shows it, a boot only logs it.
	Notice bool
	// Document marks a document that could not be checked at all (not
	// YAML, not a mapping). At boot cloud-init validates the merged
	// cloud-config, from which its part handler has left such a part out
	// (and warned about it), so a boot does not report it as a schema
	// problem.
	Document bool
	// Root marks a problem of the top-level mapping found by the schema
	// (network-config's): cloud-init prints it with an empty path rather
	// than a format-l<line>.c<column> location.
	Root bool
}

// Report is the result of validating one document.
type Report struct {
	// Source names the document (a path, "user-data"...).
	Source   string
	Findings []Finding
}

// Valid reports whether the document has no errors (deprecations and
// warnings do not make it invalid, as in cloud-init).
func (r Report) Valid() bool { return len(r.Of(Error)) == 0 }

// Of returns the findings of one severity, in report order.
func (r Report) Of(s Severity) []Finding {
	var out []Finding
	for _, f := range r.Findings {
		if f.Severity == s {
			out = append(out, f)
		}
	}
	return out
}

// compiled is the schema, compiled once; it is never modified afterwards.
// It is not checked against its meta-schema at run time (that cost every
// schema command about half its CPU): TestEmbeddedSchemasValid checks it.
var compiled = sync.OnceValues(func() (*jsonschema.Schema, error) { return compileSchema(true) })

// compileSchema compiles the embedded schema; trusted skips validating it
// against the draft's meta-schema.
func compileSchema(trusted bool) (*jsonschema.Schema, error) {
	return compileDoc(bytes.NewReader(schemaJSON), trusted)
}

// compileDoc compiles a cloud-config schema document (the embedded one, or
// a partial one of it) at the embedded schema's URL.
func compileDoc(r io.Reader, trusted bool) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(r)
	if err != nil {
		return nil, fmt.Errorf("schema: parse embedded schema: %w", err)
	}
	return compileValue(doc, trusted)
}

// compileValue is compileDoc of the decoded document doc.
func compileValue(doc any, trusted bool) (*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	if trusted {
		c.TrustSchemas()
		c.UseRegexpEngine(lazyRegexp)
	}
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, fmt.Errorf("schema: add embedded schema: %w", err)
	}
	s, err := c.Compile(schemaURL)
	if err != nil {
		return nil, fmt.Errorf("schema: compile embedded schema: %w", err)
	}
	return s, nil
}

// lazyPattern is a `pattern` or `patternProperties` expression of a trusted
// schema, compiled when a value is first matched against it: a document
// meets a few of the schema's patterns, and compiling them all cost a
// `schema` process ~10 page faults of fresh heap. The embedded schemas'
// patterns are compiled by TestEmbeddedSchemasValid (untrusted, with the
// default engine), so MustCompile cannot fail on them.
type lazyPattern struct {
	src string
	re  func() *regexp.Regexp
}

func lazyRegexp(s string) (jsonschema.Regexp, error) {
	return &lazyPattern{src: s, re: sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(s) })}, nil
}

func (p *lazyPattern) MatchString(s string) bool { return p.re().MatchString(s) }
func (p *lazyPattern) String() string            { return p.src }

// Validate checks doc, a cloud-config YAML document (the #cloud-config
// header is not required: cloud.cfg files have none; see ValidateUserData).
func Validate(doc []byte, source string) Report {
	r, _ := validate(doc, source, schemaFor)
	return r
}

// Top is what a document's top level is.
type Top int

// Tops.
const (
	TopUnreadable Top = iota // not YAML (the report says why)
	TopMapping               // a mapping: a cloud-config
	TopOther                 // empty, null, a scalar or a sequence
)

// ValidateTop is Validate, also saying what the document's top level is —
// what yaml11.Load's value would be — so that a caller need not parse the
// document a second time.
func ValidateTop(doc []byte, source string) (Report, Top) {
	return validate(doc, source, schemaFor)
}

// validate is ValidateTop with the schema chosen by pick (schemaFor; tests
// compare it with the whole schema).
func validate(doc []byte, source string, pick func(map[string]any) (*jsonschema.Schema, error)) (Report, Top) {
	r := Report{Source: source}
	d, err := yaml11.Parse("", doc)
	if err != nil {
		line, col := yamlErrorPosition(err)
		r.Findings = append(r.Findings, Finding{Line: line, Column: col, Severity: Error, Document: true,
			Message: fmt.Sprintf("File %s is not valid YAML. %v", source, err)})
		return r, TopUnreadable
	}
	// yaml11.Value gives a map exactly for a mapping node.
	top := TopOther
	if d.Root != nil && d.Root.Kind == yaml.MappingNode {
		top = TopMapping
	}
	// A repeated key: cloud-init (PyYAML) keeps the last value and says
	// nothing; cloudroot warns, and the document stays valid.
	for _, w := range d.Warnings {
		r.Findings = append(r.Findings, Finding{Line: w.Line, Column: w.Column, Severity: Warning, Notice: true,
			Message: fmt.Sprintf("duplicate key %s (first at line %d): the last value is used, as cloud-init does", pyval.StrRepr(w.Key), w.FirstLine)})
	}
	c := newConverter()
	inst := c.convert(d.Root, "")
	cfg, ok := inst.(map[string]any)
	if !ok {
		if inst == nil {
			return finish(r), top // empty document: nothing to check
		}
		r.Findings = append(r.Findings, Finding{Line: 1, Column: 1, Severity: Error, Document: true, Message: "Cloud-config is not a YAML dict."})
		return finish(r), top
	}
	sch, err := pick(cfg)
	if err != nil {
		r.Findings = append(r.Findings, Finding{Severity: Error, Message: err.Error()})
		return finish(r), top
	}
	if err := sch.Validate(cfg); err != nil {
		if ve, ok := err.(*jsonschema.ValidationError); ok {
			for _, f := range collect(ve, cfg) {
				if strings.HasPrefix(f.Message, unexpectedMark) {
					f = unexpectedMessage(f, func(p string) int { l, _ := c.position(p); return l })
				}
				f.Line, f.Column = c.position(f.Path)
				r.Findings = append(r.Findings, f)
			}
		} else {
			r.Findings = append(r.Findings, Finding{Severity: Error, Message: err.Error()})
		}
	}
	for _, f := range deprecations(cfg) {
		f.Line, f.Column = c.position(f.Path)
		r.Findings = append(r.Findings, f)
	}
	return finish(r), top
}

// CloudConfigHeader starts a cloud-config user-data document.
const CloudConfigHeader = "#cloud-config"

// ValidateUserData is Validate for a user-data file: it must start with
// #cloud-config (other user-data formats are not cloud-config and get a
// single error, as `cloud-init schema` reports them).
func ValidateUserData(doc []byte, source string) Report {
	// bytes, not string(doc): a large user-data is not copied to be sniffed.
	if !bytes.HasPrefix(doc, []byte(CloudConfigHeader)) {
		line, _, _ := bytes.Cut(doc, []byte("\n"))
		first := string(line)
		return Report{Source: source, Findings: []Finding{{Line: 1, Column: 1, Severity: Error,
			Message: fmt.Sprintf("Unrecognized user-data header in %s: %q.\nExpected first line to be one of: %s", source, first, CloudConfigHeader)}}}
	}
	return Validate(doc, source)
}

var yamlLineRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`line (\d+)(?::| column (\d+))`) })

func yamlErrorPosition(err error) (int, int) {
	m := yamlLineRE().FindStringSubmatch(err.Error())
	if m == nil {
		return 1, 1
	}
	line, _ := strconv.Atoi(m[1])
	col := 1
	if m[2] != "" {
		col, _ = strconv.Atoi(m[2])
	}
	return line, col
}

// finish de-duplicates and orders the findings: by line, column, severity,
// path, message.
func finish(r Report) Report {
	slices.SortStableFunc(r.Findings, func(a, b Finding) int {
		switch {
		case a.Line != b.Line:
			return a.Line - b.Line
		case a.Column != b.Column:
			return a.Column - b.Column
		case a.Severity != b.Severity:
			return int(a.Severity) - int(b.Severity)
		case a.Path != b.Path:
			return strings.Compare(a.Path, b.Path)
		}
		return strings.Compare(a.Message, b.Message)
	})
	r.Findings = slices.Compact(r.Findings)
	return r
}

// position is the line and column recorded for path, or of its nearest
// recorded ancestor.
func (c *converter) position(path string) (int, int) {
	for {
		if p, ok := c.pos[path]; ok {
			return p.line, p.col
		}
		if path == "" {
			return 1, 1
		}
		i := strings.LastIndex(path, ".")
		if i < 0 {
			path = ""
		} else {
			path = path[:i]
		}
	}
}
