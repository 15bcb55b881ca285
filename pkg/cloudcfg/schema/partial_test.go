package schema

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// TestPartialSchemaAgrees: a document checked against the partial schema of
// its keys, pruned to its keys or not (Validate prunes), gets the report the
// whole schema gives, for every golden document and every document of the
// upstream corpus (a wrong-typed value for every key of 26.x's schema).
func TestPartialSchemaAgrees(t *testing.T) {
	parts, err := splitSchema()
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range parts.props {
		keys = append(keys, k)
	}
	fresh := func(cfg map[string]any) (*jsonschema.Schema, error) {
		var ks []string
		for k := range cfg {
			if _, ok := parts.props[k]; ok {
				ks = append(ks, k)
			}
		}
		return compilePartialSorted(parts, ks, nil)
	}
	pruned := func(cfg map[string]any) (*jsonschema.Schema, error) {
		var ks []string
		for k := range cfg {
			if _, ok := parts.props[k]; ok {
				ks = append(ks, k)
			}
		}
		return compilePartialSorted(parts, ks, instanceKeys(cfg))
	}
	whole := func(map[string]any) (*jsonschema.Schema, error) { return compiled() }
	allKeys, err := compilePartialSorted(parts, keys, nil)
	if err != nil {
		t.Fatal(err)
	}
	all := func(map[string]any) (*jsonschema.Schema, error) { return allKeys, nil }

	docs := map[string][]byte{}
	globs := []string{"../testdata/schema/*/cloud-config.yaml", "../../cli/testdata/schema/*/*.yaml", "../testdata/examples/*"}
	for _, g := range globs {
		files, _ := filepath.Glob(g)
		for _, f := range files {
			if b, err := os.ReadFile(f); err == nil {
				docs[f] = b
			}
		}
	}
	b, err := os.ReadFile("../testdata/schema-corpus/upstream.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Key string         `json:"key"`
		Doc map[string]any `json:"doc"`
	}
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		doc, _ := json.Marshal(c.Doc)
		docs["corpus "+c.Key] = doc
	}
	if len(docs) < 100 {
		t.Fatalf("only %d documents", len(docs))
	}
	for name, doc := range docs {
		want, wantTop := validate(doc, name, whole)
		got, _ := validate(doc, name, fresh)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: partial schema (-whole +partial):\n%s", name, diff)
		}
		got, _ = validate(doc, name, pruned)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: pruned partial schema (-whole +pruned):\n%s", name, diff)
		}
		got, top := ValidateTop(doc, name)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: Validate (-whole +Validate):\n%s", name, diff)
		}
		if top != wantTop {
			t.Errorf("%s: top %v, want %v", name, top, wantTop)
		}
		got, _ = validate(doc, name, all)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: partial schema of every key (-whole +partial):\n%s", name, diff)
		}
	}
	t.Logf("%d documents", len(docs))
}

func compilePartialSorted(parts *schemaParts, keys []string, inst map[string]struct{}) (*jsonschema.Schema, error) {
	keys = append([]string(nil), keys...)
	slices.Sort(keys)
	return compilePartial(parts, keys, inst, true)
}

// checkMembers compares jsonMembers with json.Unmarshal into a map of
// RawMessage on b.
func checkMembers(t *testing.T, b []byte) {
	t.Helper()
	got, err := jsonMembers(b)
	var want map[string]json.RawMessage
	werr := json.Unmarshal(b, &want)
	if werr != nil || want == nil {
		if err == nil && json.Valid(b) {
			t.Errorf("jsonMembers(%q) = %v, json.Unmarshal fails: %v", b, got, werr)
		}
		return
	}
	if err != nil {
		t.Errorf("jsonMembers(%q): %v", b, err)
		return
	}
	if len(got) != len(want) {
		t.Errorf("jsonMembers(%q): %d members, want %d", b, len(got), len(want))
	}
	for k, w := range want {
		if g, ok := got[k]; !ok || !bytes.Equal(g, w) {
			t.Errorf("jsonMembers(%q)[%q] = %q, want %q", b, k, g, w)
		}
	}
}

var membersSeeds = []string{
	`{}`, ` { } `, `{"a":1}`, `{"a":false}`, `{"a" : [1, {"b": "}"}] , "c":"\"x\\"}`, `{"a":{"b":{"c":[]}},"d":null}`,
	`{"\u0041":1}`, `{"a":-1.5e3}`, "{\n \"a\": true\n}", `{"a":1,"a":2}`,
	`[]`, `{`, `{"a"}`, `{"a":}`, `{"a":1,}`, `{"a":1 "b":2}`, `{"a`, `{"a":"`, `{"a":[}`, ``, `1`,
}

// TestJSONMembers checks the split of the embedded schema and of its
// properties, and edge cases, against encoding/json.
func TestJSONMembers(t *testing.T) {
	checkMembers(t, schemaJSON)
	var root map[string]json.RawMessage
	if err := json.Unmarshal(schemaJSON, &root); err != nil {
		t.Fatal(err)
	}
	checkMembers(t, root["properties"])
	for _, s := range membersSeeds {
		checkMembers(t, []byte(s))
	}
}

func FuzzJSONMembers(f *testing.F) {
	for _, s := range membersSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) { checkMembers(t, b) })
}
