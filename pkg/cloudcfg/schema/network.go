package schema

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/cloudroot/cloudroot/pkg/internal/pyval"
	"github.com/cloudroot/cloudroot/pkg/secret"
	"github.com/cloudroot/cloudroot/pkg/yaml11"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// Network config schemas, cloud-init 26.x's constraints in cloudroot's
// words: version 1 (cloud-init's own format) and version 2 (netplan's).
//
//go:embed network-config-v1.schema.json
var networkV1JSON []byte

//go:embed network-config-v2.schema.json
var networkV2JSON []byte

// networkSchema is one compiled network-config schema with its parsed
// document (the error selection looks up the schema of an error).
type networkSchema struct {
	url    string
	doc    any
	schema *jsonschema.Schema
}

var compiledNetwork = sync.OnceValues(func() (map[int]*networkSchema, error) { return compileNetwork(true) })

// compileNetwork compiles the network-config schemas; trusted skips
// validating them against their meta-schema (TestEmbeddedSchemasValid does).
func compileNetwork(trusted bool) (map[int]*networkSchema, error) {
	out := map[int]*networkSchema{}
	for v, b := range map[int][]byte{1: networkV1JSON, 2: networkV2JSON} {
		doc, err := jsonschema.UnmarshalJSON(strings.NewReader(string(b)))
		if err != nil {
			return nil, fmt.Errorf("schema: parse network-config v%d schema: %w", v, err)
		}
		var head struct {
			ID string `json:"$id"`
		}
		if err := json.Unmarshal(b, &head); err != nil {
			return nil, fmt.Errorf("schema: parse network-config v%d schema: %w", v, err)
		}
		c := jsonschema.NewCompiler()
		if trusted {
			c.TrustSchemas()
			c.UseRegexpEngine(lazyRegexp)
		}
		if err := c.AddResource(head.ID, doc); err != nil {
			return nil, fmt.Errorf("schema: add network-config v%d schema: %w", v, err)
		}
		s, err := c.Compile(head.ID)
		if err != nil {
			return nil, fmt.Errorf("schema: compile network-config v%d schema: %w", v, err)
		}
		out[v] = &networkSchema{url: head.ID, doc: doc, schema: s}
	}
	return out, nil
}

// ValidateNetwork checks doc, a network-config YAML document (version 1 or
// 2, bare or under a network: key), as cloud-init 26.x's `schema -t
// network-config` does on a system without netplan's Python API:
//
//   - version 1 is checked against the v1 schema; anything else (2, a
//     missing or unknown version) against the v2 schema, whose version
//     must be 2;
//   - errors are chosen as cloud-init chooses them: of the two forms (bare
//     or wrapped) the deepest errors are kept, and a version 1 config item
//     with a known type is reported against that type's definition;
//   - every problem is an error (there are no deprecations);
//   - like cloud-init, an alternative (anyOf/oneOf branch) left without
//     errors by that selection counts as valid: a version 1 route with a
//     type key but no gateway passes.
//
// performed is false for an empty config ({} or an empty network: key),
// which cloud-init skips. A document that is not a mapping is one error.
func ValidateNetwork(doc []byte, source string) (r Report, performed bool) {
	r = Report{Source: source}
	d, err := yaml11.Parse("", doc)
	if err != nil {
		line, col := yamlErrorPosition(err)
		r.Findings = append(r.Findings, Finding{Line: line, Column: col, Severity: Error,
			Message: fmt.Sprintf("File %s is not valid YAML. %v", source, err)})
		return r, true
	}
	c := newConverter()
	inst := c.convert(d.Root, "")
	cfg, ok := inst.(map[string]any)
	if !ok {
		r.Findings = append(r.Findings, Finding{Line: 1, Column: 1, Severity: Error, Message: "Network-config is not a YAML dict."})
		return r, true
	}
	body := any(cfg)
	if n, ok := cfg["network"]; ok {
		body = n
	}
	if !pyval.Truthy(body) {
		return r, false
	}
	version := 2
	if m, ok := body.(map[string]any); ok && pyEqualsInt(m["version"], 1) {
		version = 1
	}
	schemas, err := compiledNetwork()
	if err != nil {
		r.Findings = append(r.Findings, Finding{Severity: Error, Message: err.Error()})
		return r, true
	}
	ns := schemas[version]
	verr := ns.schema.Validate(cfg)
	if verr == nil {
		return r, true
	}
	ve, ok := verr.(*jsonschema.ValidationError)
	if !ok {
		r.Findings = append(r.Findings, Finding{Severity: Error, Message: verr.Error()})
		return r, true
	}
	w := &netWalker{ns: ns, inst: cfg, conv: c}
	for _, e := range w.walk(ve) {
		f := Finding{Path: pathOf(e.loc), Severity: Error, Message: e.msg, Root: len(e.loc) == 0}
		f.Line, f.Column = c.position(f.Path)
		r.Findings = append(r.Findings, f)
	}
	return finish(r), true
}

// pyErr is one error as Python's jsonschema yields it to cloud-init: the
// instance location, the keyword that failed, the message, the schema
// holding the keyword and, for anyOf, the alternatives' errors.
type pyErr struct {
	loc     []string
	keyword string
	msg     string
	schema  map[string]any
	context []pyErr
}

// netWalker turns the Go validator's error tree into the errors cloud-init
// reports (its _anyOf, _oneOf and cloud_init_deepest_matches, and Python
// jsonschema's best_match).
type netWalker struct {
	ns   *networkSchema
	inst any
	conv *converter
}

// schemaAt is the schema object an error's SchemaURL points at.
func (w *netWalker) schemaAt(url string) map[string]any {
	_, frag, _ := strings.Cut(url, "#")
	v := w.ns.doc
	for _, tok := range strings.Split(strings.TrimPrefix(frag, "/"), "/") {
		if tok == "" {
			continue
		}
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch t := v.(type) {
		case map[string]any:
			v = t[tok]
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(t) {
				return nil
			}
			v = t[i]
		default:
			return nil
		}
	}
	m, _ := v.(map[string]any)
	return m
}

// keywordRank orders the errors of one schema object the way Python
// iterates its keywords (cloud-init's schemas list type, then
// additionalProperties, required and the combinators, then properties).
func keywordRank(k string) int {
	switch k {
	case "type":
		return 0
	case "enum":
		return 1
	case "additionalProperties":
		return 2
	case "required":
		return 3
	case "allOf":
		return 4
	case "anyOf", "oneOf":
		return 5
	}
	return 6
}

func (w *netWalker) walk(ve *jsonschema.ValidationError) []pyErr {
	here := ve.InstanceLocation
	sch := w.schemaAt(ve.SchemaURL)
	switch k := ve.ErrorKind.(type) {
	case *kind.Schema, *kind.Reference, *kind.Group, *kind.AllOf:
		var own, deeper []pyErr
		for _, c := range ve.Causes {
			for _, e := range w.walk(c) {
				if len(c.InstanceLocation) > len(here) {
					deeper = append(deeper, e)
				} else {
					own = append(own, e)
				}
			}
		}
		slices.SortStableFunc(own, func(a, b pyErr) int { return keywordRank(a.keyword) - keywordRank(b.keyword) })
		// properties are visited in document order here (cloud-init's
		// schemas list them in an order only ties could show).
		slices.SortStableFunc(deeper, func(a, b pyErr) int {
			pa, pb := w.conv.pos[pathOf(a.loc[:len(here)+1])], w.conv.pos[pathOf(b.loc[:len(here)+1])]
			if pa.line != pb.line {
				return pa.line - pb.line
			}
			return pa.col - pb.col
		})
		return append(own, deeper...)
	case *kind.Required:
		var out []pyErr
		for _, m := range k.Missing {
			out = append(out, pyErr{loc: here, keyword: "required", schema: sch, msg: fmt.Sprintf("%s is a required property", pyval.StrRepr(m))})
		}
		return out
	case *kind.AdditionalProperties:
		// Keys in document order, as for cloud-config (Python's order is
		// a set's: sorted in Debian 12's jsonschema, arbitrary in newer).
		keys := slices.Clone(k.Properties)
		slices.SortStableFunc(keys, func(a, b string) int {
			pa, pb := w.conv.pos[joinPath(pathOf(here), a)], w.conv.pos[joinPath(pathOf(here), b)]
			if pa.line != pb.line {
				return pa.line - pb.line
			}
			return pa.col - pb.col
		})
		verb := "was"
		if len(keys) > 1 {
			verb = "were"
		}
		return []pyErr{{loc: here, keyword: "additionalProperties", schema: sch,
			msg: fmt.Sprintf("Additional properties are not allowed (%s %s unexpected)", quoteList(keys), verb)}}
	case *kind.Type:
		want := k.Want
		if ts, ok := sch["type"].([]any); ok {
			// the schema's order, as Python prints it
			want = nil
			for _, t := range ts {
				want = append(want, fmt.Sprint(t))
			}
		}
		out := []pyErr{{loc: here, keyword: "type", schema: sch, msg: fmt.Sprintf("%s is not of type %s", w.repr(here), quoteList(want))}}
		// Python's jsonschema goes on to the enum of the same schema.
		if enum, ok := sch["enum"].([]any); ok && !slices.ContainsFunc(enum, func(e any) bool { return enumEqual(e, valueAt(w.inst, here)) }) {
			out = append(out, pyErr{loc: here, keyword: "enum", schema: sch, msg: fmt.Sprintf("%s is not one of %s", w.repr(here), pyval.Repr(enum))})
		}
		return out
	case *kind.Enum:
		return []pyErr{{loc: here, keyword: "enum", schema: sch, msg: fmt.Sprintf("%s is not one of %s", w.repr(here), pyval.Repr(k.Want))}}
	case *kind.AnyOf:
		return w.anyOf(ve, sch)
	case *kind.OneOf:
		if len(k.Subschemas) > 1 {
			// Python names the schemas: the later valid ones, then the
			// first.
			order := append(slices.Clone(k.Subschemas[1:]), k.Subschemas[0])
			reprs := make([]string, len(order))
			for i, n := range order {
				reprs[i] = pyval.Repr(w.schemaAt(ve.SchemaURL + "/oneOf/" + strconv.Itoa(n)))
			}
			return []pyErr{{loc: here, keyword: "oneOf", schema: sch,
				msg: fmt.Sprintf("%s is valid under each of %s", w.repr(here), strings.Join(reprs, ", "))}}
		}
		var all []pyErr
		for _, c := range ve.Causes {
			errs := w.walk(c)
			if len(errs) == 0 {
				return nil // cloud-init takes an alternative without errors as valid
			}
			all = append(all, errs...)
		}
		return w.deepest(all, here)
	}
	if len(ve.Causes) > 0 {
		var out []pyErr
		for _, c := range ve.Causes {
			out = append(out, w.walk(c)...)
		}
		return out
	}
	f := leaf(ve, w.inst)
	f.Message = strings.Replace(f.Message, reprAt(w.inst, here), w.repr(here), 1)
	return []pyErr{{loc: here, keyword: "other", schema: sch, msg: f.Message}}
}

// anyOf is cloud-init's _anyOf: a config item whose type names one of the
// alternatives (a $ref to #/$defs/item_<type>) gets that alternative's
// errors, any other value the best match among all; then the item is "not
// valid under any of the given schemas".
func (w *netWalker) anyOf(ve *jsonschema.ValidationError, sch map[string]any) []pyErr {
	here := ve.InstanceLocation
	var typ any
	m, isMap := valueAt(w.inst, here).(map[string]any)
	if isMap {
		typ, isMap = m["type"]
	}
	var out, all []pyErr
	matched := false
	for _, c := range ve.Causes {
		errs := w.walk(c)
		if len(errs) == 0 {
			// An alternative whose errors cloud-init's selection dropped
			// (a route's oneOf) is valid to cloud-init.
			return nil
		}
		if isMap {
			if ref, _ := w.schemaAt(c.SchemaURL)["$ref"].(string); strings.HasPrefix(ref, itemRefPrefix) && fmt.Sprint(typ) == strings.TrimPrefix(ref, itemRefPrefix) {
				matched = true
				out = append(out, errs...)
			}
		}
		all = append(all, errs...)
	}
	if !matched {
		if b, ok := bestMatch(all, w.inst); ok {
			out = append(out, b)
		}
	}
	return append(out, pyErr{loc: here, keyword: "anyOf", schema: sch, context: all,
		msg: fmt.Sprintf("%s is not valid under any of the given schemas", w.repr(here))})
}

// itemRefPrefix names the definitions of version 1 config item types.
const itemRefPrefix = "#/$defs/item_"

// deepest is cloud-init's cloud_init_deepest_matches over a oneOf's errors
// at base: for a mapping with a type key, the first error of the schema
// defining that type, else the errors about type keys; otherwise the
// deepest errors.
func (w *netWalker) deepest(errs []pyErr, base []string) []pyErr {
	m, isMap := valueAt(w.inst, base).(map[string]any)
	typ, isType := m["type"]
	isType = isMap && isType
	var best []pyErr
	depth := 0
	for _, e := range errs {
		rel := e.loc[len(base):]
		if isType {
			if props, ok := e.schema["properties"].(map[string]any); ok {
				if t, ok := props["type"].(map[string]any); ok {
					if enum, ok := t["enum"].([]any); ok && slices.ContainsFunc(enum, func(v any) bool { return pyEqual(v, typ) }) {
						return []pyErr{e}
					}
				}
			}
			if len(rel) > 0 && strings.HasSuffix(rel[len(rel)-1], "type") {
				best = append(best, e)
			}
			continue
		}
		switch {
		case len(rel) == depth:
			best = append(best, e)
		case len(rel) > depth:
			depth = len(rel)
			best = []pyErr{e}
		}
	}
	return best
}

// bestMatch is Python jsonschema's best_match: the most relevant error
// (shallowest, not anyOf/oneOf, value of the schema's type), then down its
// alternatives while one is clearly deeper than the others.
func bestMatch(errs []pyErr, inst any) (pyErr, bool) {
	if len(errs) == 0 {
		return pyErr{}, false
	}
	type key [3]int
	rel := func(e pyErr) key {
		weak, typed := 1, 1
		if e.keyword == "anyOf" || e.keyword == "oneOf" {
			weak = 0
		}
		if matchesType(e, inst) {
			typed = 0
		}
		return key{-len(e.loc), weak, typed}
	}
	less := func(a, b key) bool {
		for i := range a {
			if a[i] != b[i] {
				return a[i] < b[i]
			}
		}
		return false
	}
	best := errs[0]
	for _, e := range errs[1:] {
		if less(rel(best), rel(e)) {
			best = e
		}
	}
	for len(best.context) > 0 {
		ctx := slices.Clone(best.context)
		slices.SortStableFunc(ctx, func(a, b pyErr) int {
			switch {
			case less(rel(a), rel(b)):
				return -1
			case less(rel(b), rel(a)):
				return 1
			}
			return 0
		})
		if len(ctx) >= 2 && rel(ctx[0]) == rel(ctx[1]) {
			return best, true
		}
		best = ctx[0]
	}
	return best, true
}

// matchesType is Python jsonschema's ValidationError._matches_type: the
// value has one of the types of the schema holding the failed keyword.
func matchesType(e pyErr, inst any) bool {
	var types []string
	switch t := e.schema["type"].(type) {
	case string:
		types = []string{t}
	case []any:
		for _, x := range t {
			if s, ok := x.(string); ok {
				types = append(types, s)
			}
		}
	default:
		return false
	}
	v := valueAt(inst, e.loc)
	for _, t := range types {
		if pyIsType(v, t) {
			return true
		}
	}
	return false
}

func pyIsType(v any, t string) bool {
	switch t {
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "string":
		_, ok := v.(string)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "null":
		return v == nil
	case "integer":
		switch n := v.(type) {
		case int, int64, uint64, json.Number:
			return true
		case float64:
			return n == float64(int64(n))
		}
	case "number":
		switch v.(type) {
		case int, int64, uint64, json.Number, float64:
			return true
		}
	}
	return false
}

// enumEqual is Python jsonschema's enum comparison: == except that
// booleans only equal booleans.
func enumEqual(a, b any) bool {
	_, ab := a.(bool)
	_, bb := b.(bool)
	return ab == bb && pyEqual(a, b)
}

// pyEqualsInt is Python's v == n for a YAML value (True == 1, 2.0 == 2).
func pyEqualsInt(v any, n int) bool { return pyEqual(v, n) }

// pyEqual is Python's == for YAML scalars (numbers and booleans compare
// by value).
func pyEqual(a, b any) bool {
	na, aok := pyNumber(a)
	nb, bok := pyNumber(b)
	if aok && bok {
		return na == nb
	}
	if aok != bok {
		return false
	}
	return fmt.Sprint(a) == fmt.Sprint(b) && fmt.Sprintf("%T", a) == fmt.Sprintf("%T", b)
}

func pyNumber(v any) (float64, bool) {
	switch t := v.(type) {
	case bool:
		if t {
			return 1, true
		}
		return 0, true
	case int:
		return float64(t), true
	case int64:
		return float64(t), true
	case uint64:
		return float64(t), true
	case float64:
		return t, true
	case json.Number:
		f, err := t.Float64()
		return f, err == nil
	}
	return 0, false
}

// repr is the Python repr of the value at loc, mappings in document order
// (as PyYAML loads them).
func (w *netWalker) repr(loc []string) string {
	if secret.Path(loc) || secret.Contains(valueAt(w.inst, loc)) {
		return Redacted
	}
	return w.reprValue(valueAt(w.inst, loc), pathOf(loc))
}

func (w *netWalker) reprValue(v any, path string) string {
	return pyval.ReprOrdered(v, func(sub, keys []string) {
		at := path
		for _, k := range sub {
			at = joinPath(at, k)
		}
		slices.SortFunc(keys, func(a, b string) int {
			pa, pb := w.conv.pos[joinPath(at, a)], w.conv.pos[joinPath(at, b)]
			if pa.line != pb.line {
				return pa.line - pb.line
			}
			if pa.col != pb.col {
				return pa.col - pb.col
			}
			return strings.Compare(a, b)
		})
	})
}
