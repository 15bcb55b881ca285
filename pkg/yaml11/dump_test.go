package yaml11

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestDump: the texts are PyYAML 6's yaml.dump of the same value with
// default_flow_style=False (indent 2), and with safeyaml.dumps' options.
func TestDump(t *testing.T) {
	v := map[string]any{
		"b": []any{1, map[string]any{"x": "yes", "y": []any{}}},
		"a": map[string]any{"n": nil, "f": 0.5, "t": true, "s": "0123"},
	}
	for _, c := range []struct {
		o    DumpOptions
		want string
	}{
		{DumpOptions{}, "a:\n  f: 0.5\n  n: null\n  s: '0123'\n  t: true\nb:\n- 1\n- x: 'yes'\n  y: []\n"},
		{DumpOptions{Indent: 4, Explicit: true}, "---\na:\n    f: 0.5\n    n: null\n    s: '0123'\n    t: true\nb:\n- 1\n-   x: 'yes'\n    y: []\n...\n"},
	} {
		if got := Dump(v, c.o); got != c.want {
			t.Errorf("Dump(%+v):\n%q\nwant\n%q", c.o, got, c.want)
		}
	}
	if got := SafeDumps(map[string]any{}); got != "--- {}\n...\n" {
		t.Errorf("SafeDumps({}) = %q", got)
	}
}

// TestDumpPyYAML: Dump and DumpTo write what PyYAML 6 writes for strings at
// the emitter's edges (quoting, folding at the width, escapes, multi-byte
// runes, breaks other than \n) as keys, sequence items and nested values,
// with the default options and safeyaml.dumps' (testdata/dump-pyyaml.json,
// from scripts/goldens/yaml-dump.py).
func TestDumpPyYAML(t *testing.T) {
	for _, c := range pyyamlDumpCases(t) {
		v := map[string]any{c.S: c.S, "k": []any{c.S, map[string]any{"n": c.S}}}
		if got := Dump(v, DumpOptions{}); got != c.Default {
			t.Errorf("Dump(%q):\n%q\nwant\n%q", c.S, got, c.Default)
		}
		var b strings.Builder
		if err := DumpTo(&b, v, SafeDumpOptions); err != nil {
			t.Fatal(err)
		}
		if got := b.String(); got != c.Safe {
			t.Errorf("DumpTo(%q, safe):\n%q\nwant\n%q", c.S, got, c.Safe)
		}
	}
}

type pyyamlDumpCase struct{ S, Default, Safe string }

func pyyamlDumpCases(t testing.TB) []pyyamlDumpCase {
	data, err := os.ReadFile("testdata/dump-pyyaml.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct{ Cases []pyyamlDumpCase }
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	return f.Cases
}

// FuzzDumpString: whatever the string, what Dump writes reads back (with
// this package's PyYAML 1.1 loader) as the same value.
func FuzzDumpString(f *testing.F) {
	for _, c := range pyyamlDumpCases(f) {
		f.Add(c.S)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return // a Python str is text; cloud-init never dumps bytes
		}
		v := map[string]any{s: s, "k": []any{s, map[string]any{"n": s}}}
		for _, o := range []DumpOptions{{}, SafeDumpOptions} {
			text := Dump(v, o)
			got, _, err := Load("dump", []byte(text))
			if err != nil {
				t.Fatalf("Dump(%q) does not load: %v\n%s", s, err, text)
			}
			if !reflect.DeepEqual(got, v) {
				t.Fatalf("Dump(%q) reads back as %#v\n%s", s, got, text)
			}
		}
	})
}
