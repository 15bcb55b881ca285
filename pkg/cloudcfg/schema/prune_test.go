package schema

import (
	"bytes"
	"encoding/json"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// prunedRef is what pruner.schema must give, computed on decoded JSON: the
// schema s with every `properties` member not named in inst dropped, at
// every depth reached through keywords whose values are schemas.
func prunedRef(s any, inst map[string]struct{}) any {
	m, ok := s.(map[string]any)
	if !ok {
		return s
	}
	out := map[string]any{}
	for k, v := range m {
		switch k {
		case "properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies":
			mm, ok := v.(map[string]any)
			if !ok {
				out[k] = v
				continue
			}
			o := map[string]any{}
			for name, sub := range mm {
				if _, keep := inst[name]; k == "properties" && !keep {
					continue
				}
				o[name] = prunedRef(sub, inst)
			}
			out[k] = o
		case "items", "additionalItems", "additionalProperties", "unevaluatedItems", "unevaluatedProperties",
			"not", "if", "then", "else", "contains", "propertyNames", "allOf", "anyOf", "oneOf", "prefixItems":
			if l, ok := v.([]any); ok {
				o := make([]any, len(l))
				for i, e := range l {
					o[i] = prunedRef(e, inst)
				}
				out[k] = o
				continue
			}
			out[k] = prunedRef(v, inst)
		default:
			out[k] = v
		}
	}
	return out
}

// checkPrune compares pruner.schema on the raw schema with prunedRef on
// the decoded one.
func checkPrune(t *testing.T, raw []byte, inst map[string]struct{}) {
	t.Helper()
	var s any
	if err := json.Unmarshal(raw, &s); err != nil {
		return // not JSON: the embedded schemas are (TestEmbeddedSchemasValid)
	}
	var b bytes.Buffer
	p := pruner{out: &b, inst: inst}
	p.schema(raw)
	if p.err != nil {
		t.Fatalf("prune %q: %v", raw, p.err)
	}
	var got any
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatalf("prune %q: output %q is not JSON: %v", raw, b.Bytes(), err)
	}
	if diff := cmp.Diff(prunedRef(s, inst), got); diff != "" {
		t.Errorf("prune %q (-want +got):\n%s", raw, diff)
	}
}

func keySet(keys ...string) map[string]struct{} {
	m := map[string]struct{}{}
	for _, k := range keys {
		m[k] = struct{}{}
	}
	return m
}

var pruneSeeds = []struct {
	schema string
	keys   []string
}{
	{`{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"}}}`, []string{"a"}},
	{`{"properties":{"properties":{"properties":{"x":{},"y":{}}}}}`, []string{"properties", "y"}},
	{`{"items":[{"properties":{"a":{},"b":{}}},true],"additionalProperties":{"properties":{"c":false}}}`, []string{"b"}},
	{`{"oneOf":[{"properties":{"a":{}}},{"$ref":"#/$defs/x"}],"$defs":{"x":{"properties":{"a":{},"z":{}}}}}`, []string{"z"}},
	{`{"enum":[{"properties":{"a":1}}],"required":["a"],"default":{"properties":{}}}`, nil},
	{`{"patternProperties":{"^a":{"properties":{"q":{}}}},"dependencies":{"a":["b"],"c":{"properties":{"d":{}}}}}`, []string{"a"}},
	{` { "properties" : { "\u0061" : { } , "b\"c" : { } } } `, []string{"a", `b"c`}},
	{`true`, nil},
	{`{"properties":{}}`, []string{"a"}},
}

// TestPrune: the raw-JSON pruner drops exactly the `properties` members
// the decoded reference does, through every applicator, never a member of
// a non-schema keyword (enum, default) or a patternProperties name.
func TestPrune(t *testing.T) {
	for _, c := range pruneSeeds {
		checkPrune(t, []byte(c.schema), keySet(c.keys...))
	}
	parts, err := splitSchema()
	if err != nil {
		t.Fatal(err)
	}
	for _, inst := range []map[string]struct{}{keySet(), keySet("name", "groups", "sources", "path", "content"), keySet(slices.Collect(maps.Keys(parts.props))...)} {
		checkPrune(t, schemaJSON, inst)
	}
}

// TestPruneRefs: every $ref of the cloud-config schema names a $def, as
// compilePartial's reachable-$defs pruning assumes (another $ref keeps
// them all; the pruner must notice it).
func TestPruneRefs(t *testing.T) {
	refs := regexp.MustCompile(`"\$ref"\s*:\s*("[^"]*")`).FindAllSubmatch(schemaJSON, -1)
	if len(refs) == 0 {
		t.Fatal("no $ref in the embedded schema")
	}
	parts, err := splitSchema()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range refs {
		name, ok := strings.CutPrefix(strings.Trim(string(m[1]), `"`), "#/$defs/")
		if _, def := parts.defs[name]; !ok || !def {
			t.Errorf("$ref %s does not name a $def", m[1])
		}
	}
	var b bytes.Buffer
	p := pruner{out: &b} // nothing dropped: every $ref is seen
	p.schema(schemaJSON)
	if p.otherRef || len(p.refs) != len(refs) {
		t.Errorf("pruner saw %d $defs refs (otherRef %v), the schema has %d", len(p.refs), p.otherRef, len(refs))
	}
	for _, ref := range []string{`"#/properties/a"`, `"other.json#/$defs/a"`, `"#/$defs/a/properties/b"`, `"#/$defs/a~1b"`} {
		p := pruner{out: &b}
		p.member("$ref", []byte(ref))
		if !p.otherRef {
			t.Errorf("$ref %s: not noticed as a ref outside $defs", ref)
		}
	}
}

// TestPrunedDefs: a partial schema compiles only the $defs its properties
// reach, transitively, and all of them when a $ref is not a $def's.
func TestPrunedDefs(t *testing.T) {
	parts := &schemaParts{
		root: map[string]json.RawMessage{"type": json.RawMessage(`"object"`)},
		props: map[string]json.RawMessage{
			"a": json.RawMessage(`{"$ref":"#/$defs/x"}`),
			"b": json.RawMessage(`{"properties":{"c":{"$ref":"#/properties/a"}}}`),
		},
		defs: map[string]json.RawMessage{
			"x": json.RawMessage(`{"items":{"$ref":"#/$defs/y"}}`),
			"y": json.RawMessage(`{"type":"string"}`),
			"z": json.RawMessage(`{"type":"null"}`),
		},
	}
	for _, c := range []struct {
		keys []string
		inst map[string]struct{}
		want []string
	}{
		{[]string{"a"}, keySet("a"), []string{"x", "y"}},
		{[]string{"b"}, keySet("b"), nil},
		{[]string{"b"}, keySet("b", "c"), []string{"x", "y", "z"}},
		{[]string{"a"}, nil, []string{"x", "y", "z"}},
	} {
		doc, err := partialDoc(parts, c.keys, c.inst)
		if err != nil {
			t.Fatal(err)
		}
		var d struct {
			Defs map[string]any `json:"$defs"`
		}
		if err := json.Unmarshal(doc, &d); err != nil {
			t.Fatalf("%s: %v", doc, err)
		}
		if got := slices.Sorted(maps.Keys(d.Defs)); !slices.Equal(got, c.want) {
			t.Errorf("keys %v, instance %v: $defs %v, want %v", c.keys, slices.Sorted(maps.Keys(c.inst)), got, c.want)
		}
	}
}

func FuzzPrune(f *testing.F) {
	for _, c := range pruneSeeds {
		f.Add([]byte(c.schema), strings.Join(c.keys, ","))
	}
	f.Fuzz(func(t *testing.T, raw []byte, keys string) {
		checkPrune(t, raw, keySet(strings.Split(keys, ",")...))
	})
}
