package yaml11

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// typed encodes a normalized tree the way scripts/goldens/yaml11.py encodes
// PyYAML's result, so a golden pins every value's type.
func typed(n *yaml.Node) any {
	if n == nil {
		return nil
	}
	switch n.Kind {
	case yaml.MappingNode:
		if n.Tag == tagSet {
			var keys []any
			for i := 0; i+1 < len(n.Content); i += 2 {
				keys = append(keys, typed(n.Content[i]))
			}
			return map[string]any{"set": keys}
		}
		pairs := []any{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			pairs = append(pairs, []any{typed(n.Content[i]), typed(n.Content[i+1])})
		}
		return map[string]any{"map": pairs}
	case yaml.SequenceNode:
		out := []any{}
		for _, c := range n.Content {
			if n.Tag == tagOmap || n.Tag == tagPairs {
				out = append(out, map[string]any{"tuple": []any{typed(c.Content[0]), typed(c.Content[1])}})
				continue
			}
			out = append(out, typed(c))
		}
		return out
	}
	switch n.Tag {
	case tagNull:
		return nil
	case tagBool:
		return n.Value == "true"
	case tagInt:
		return map[string]any{"int": n.Value}
	case tagFloat:
		return map[string]any{"float": PyFloatRepr(floatOf(n.Value))}
	case tagTimestamp:
		if !strings.Contains(n.Value, "T") {
			return map[string]any{"date": n.Value}
		}
		return map[string]any{"timestamp": n.Value}
	case tagBinary:
		return map[string]any{"binary": n.Value}
	}
	return n.Value
}

// result is one document's typed JSON, or {"error": ...}.
func result(text []byte) any {
	d, err := Parse("doc", text)
	if err != nil {
		return map[string]any{"error": err.Error()}
	}
	return typed(d.Root)
}

// diff is "" when a and b are equal, else both as JSON (cmp.Diff is
// exponential on the deeply nested corpus documents).
func diff(a, b any) string {
	if reflect.DeepEqual(a, b) {
		return ""
	}
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return fmt.Sprintf("-%s\n+%s", ja, jb)
}

// canon round-trips through JSON, sorts set members (Python's set order is
// arbitrary) and reduces any error to {"error": true}: messages differ,
// failing or not must not.
func canon(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("unmarshal: %v", err)
	}
	return canonWalk(out)
}

func canonWalk(v any) any {
	switch t := v.(type) {
	case []any:
		for i := range t {
			t[i] = canonWalk(t[i])
		}
	case map[string]any:
		if _, ok := t["error"]; ok && len(t) == 1 {
			return map[string]any{"error": true}
		}
		for k := range t {
			t[k] = canonWalk(t[k])
		}
		if s, ok := t["set"].([]any); ok {
			slices.SortFunc(s, func(a, b any) int {
				ja, _ := json.Marshal(a)
				jb, _ := json.Marshal(b)
				return bytes.Compare(ja, jb)
			})
		}
	}
	return v
}

func corpus(t testing.TB) []string {
	files, err := filepath.Glob("testdata/corpus/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus: %v", err)
	}
	return files
}

// knownDiff lists the corpus documents where yaml11 knowingly differs
// from PyYAML, and why (docs/compatibility.md repeats them).
var knownDiff = map[string]string{
	"shape-tab-after-value":    "yaml.v3's scanner accepts a tab after a plain scalar or between tokens, where PyYAML refuses any tab outside quoted scalars, block scalars and comments",
	"shape-tab-after-colon":    "the same: a tab after ': '",
	"shape-flow-colon-bracket": "in a flow mapping, PyYAML ends a plain key at ':' followed by '[' ({a:[1]}); yaml.v3 refuses it",
}

// TestCorpus compares every corpus document with PyYAML's golden.
func TestCorpus(t *testing.T) {
	for _, f := range corpus(t) {
		name := strings.TrimSuffix(filepath.Base(f), ".yaml")
		t.Run(name, func(t *testing.T) {
			if why, ok := knownDiff[name]; ok {
				t.Skip(why)
			}
			text, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			gb, err := os.ReadFile(strings.TrimSuffix(f, ".yaml") + ".json")
			if err != nil {
				t.Fatalf("no golden (run scripts/goldens/yaml11.py): %v", err)
			}
			var golden any
			if err := json.Unmarshal(gb, &golden); err != nil {
				t.Fatal(err)
			}
			if diff := diff(canonWalk(golden), canon(t, result(text))); diff != "" {
				t.Errorf("%s: PyYAML (-) vs yaml11 (+):\n%s\ninput:\n%s", f, diff, text)
			}
		})
	}
}

// pyyaml runs the golden script's --stdin mode with a python3 that has
// PyYAML, or skips.
func pyyaml(t *testing.T, docs []string) []any {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil || exec.Command(py, "-c", "import yaml").Run() != nil {
		t.Skip("python3 with PyYAML not available; the goldens alone are checked")
	}
	in, _ := json.Marshal(docs)
	cmd := exec.Command(py, "../../scripts/goldens/yaml11.py", "--stdin")
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("scripts/goldens/yaml11.py --stdin: %v\n%s", err, stderr.String())
	}
	var res []any
	if err := json.Unmarshal(out, &res); err != nil || len(res) != len(docs) {
		t.Fatalf("scripts/goldens/yaml11.py --stdin: %d results for %d docs: %v", len(res), len(docs), err)
	}
	return res
}

// TestCorpusLive re-checks the goldens against the PyYAML installed here.
func TestCorpusLive(t *testing.T) {
	files := corpus(t)
	var docs []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, string(b))
	}
	live := pyyaml(t, docs)
	for i, f := range files {
		gb, err := os.ReadFile(strings.TrimSuffix(f, ".yaml") + ".json")
		if err != nil {
			t.Fatal(err)
		}
		var golden any
		if err := json.Unmarshal(gb, &golden); err != nil {
			t.Fatal(err)
		}
		if diff := diff(canonWalk(golden), canon(t, live[i])); diff != "" {
			t.Errorf("%s: golden (-) vs live PyYAML (+):\n%s", f, diff)
		}
	}
}

// TestDifferentialRandom generates documents from scalar and structure
// pieces (fixed seed) and compares yaml11 with PyYAML on each.
func TestDifferentialRandom(t *testing.T) {
	docs := randomDocs(rand.New(rand.NewPCG(11, 2026)), 150)
	docs = append(docs, structuredDocs(rand.New(rand.NewPCG(12, 2026)), 150)...)
	live := pyyaml(t, docs)
	for i, d := range docs {
		if diff := diff(canon(t, live[i]), canon(t, result([]byte(d)))); diff != "" {
			t.Errorf("doc %d: PyYAML (-) vs yaml11 (+):\n%s\ninput:\n%s", i, diff, d)
		}
	}
}

var pieces = []string{
	"yes", "No", "ON", "off", "y", "true", "False", "0644", "0o644", "0x1F", "0b101", "1:30", "1:30.5",
	"1_000", "-12", "+0", "08", "1.5", "1.", ".5", "1e3", "1.0e+3", "-.inf", ".NaN", "~", "null",
	"Null", "", "2001-12-14", "2001-12-14 21:59:43.10 -5", "hello", "'yes'", "\"0644\"", "a b",
	"!!str 12", "!!int '7'", "!!float 3", "!!bool 'off'", "12345678901234567890", "52:54:00:12:34:56",
	"10.0.0.1", "'='", "café", "1_2:3_4",
}

func randomDocs(r *rand.Rand, n int) []string {
	docs := make([]string, 0, n)
	for range n {
		var b strings.Builder
		var usable []int // anchors whose node is complete (no recursive aliases)
		next := 0
		var value func(depth int, indent string) string
		value = func(depth int, indent string) string {
			switch k := r.IntN(10); {
			case k < 6 || depth > 2:
				return " " + pieces[r.IntN(len(pieces))]
			case k < 7 && len(usable) > 0:
				return fmt.Sprintf(" *a%d", usable[r.IntN(len(usable))])
			case k < 8:
				var items []string
				for range 1 + r.IntN(3) {
					items = append(items, strings.TrimSpace(pieces[r.IntN(len(pieces))]))
				}
				return " [" + strings.Join(items, ", ") + "]"
			default:
				id := next
				next++
				s := fmt.Sprintf(" &a%d\n", id)
				for range 1 + r.IntN(3) {
					s += fmt.Sprintf("%s  %s:%s\n", indent, keyPiece(r), value(depth+1, indent+"  "))
				}
				usable = append(usable, id)
				return strings.TrimRight(s, "\n")
			}
		}
		for range 1 + r.IntN(6) {
			if len(usable) > 0 && r.IntN(6) == 0 {
				fmt.Fprintf(&b, "<<: *a%d\n", usable[r.IntN(len(usable))])
				continue
			}
			fmt.Fprintf(&b, "%s:%s\n", keyPiece(r), value(0, ""))
		}
		docs = append(docs, b.String())
	}
	return docs
}

func keyPiece(r *rand.Rand) string {
	for {
		p := pieces[r.IntN(len(pieces))]
		if p != "" && !strings.HasPrefix(p, "!") {
			return p
		}
	}
}

// structuredDocs generates documents with flow mappings, block scalars,
// nested lists, anchors on mappings and merges of one or two of them.
func structuredDocs(r *rand.Rand, n int) []string {
	keys := []string{"a", "b", "yes", "1", "0x1", "'q'", "\"d\"", "~", "1.5", "2001-01-01", "<<", "1:2", "on", "'<<'", "true", "1.0", "0"}
	var docs []string
	for range n {
		var b strings.Builder
		anchors := []int{}
		next := 0
		var val func(d int, ind string) string
		val = func(d int, ind string) string {
			k := r.IntN(14)
			if d > 3 {
				k = 0
			}
			switch {
			case k < 5:
				return " " + pieces[r.IntN(len(pieces))]
			case k == 5 && len(anchors) > 0:
				return fmt.Sprintf(" *x%d", anchors[r.IntN(len(anchors))])
			case k == 6:
				var it []string
				for range r.IntN(4) {
					it = append(it, keyPiece(r)+": "+strings.TrimSpace(pieces[r.IntN(len(pieces))]))
				}
				return " {" + strings.Join(it, ", ") + "}"
			case k == 7:
				return " |\n" + ind + "  line " + pieces[r.IntN(len(pieces))] + "\n" + ind + "  two"
			case k == 8:
				return " >-\n" + ind + "  folded\n" + ind + "  text"
			case k == 9:
				s := ""
				for range 1 + r.IntN(3) {
					s += "\n" + ind + "  -" + val(d+1, ind+"    ")
				}
				return s
			default:
				id := next
				next++
				s := fmt.Sprintf(" &x%d", id)
				for range 1 + r.IntN(4) {
					kk := keys[r.IntN(len(keys))]
					if kk == "<<" {
						if len(anchors) == 0 {
							kk = "a"
						} else if r.IntN(2) == 0 {
							s += fmt.Sprintf("\n%s  <<: *x%d", ind, anchors[r.IntN(len(anchors))])
							continue
						} else {
							s += fmt.Sprintf("\n%s  <<: [*x%d, *x%d]", ind, anchors[r.IntN(len(anchors))], anchors[r.IntN(len(anchors))])
							continue
						}
					}
					s += "\n" + ind + "  " + kk + ":" + val(d+1, ind+"  ")
				}
				anchors = append(anchors, id)
				return s
			}
		}
		for range 1 + r.IntN(6) {
			kk := keys[r.IntN(len(keys))]
			if kk == "<<" {
				kk = "m"
			}
			fmt.Fprintf(&b, "%s:%s\n", kk, val(0, ""))
		}
		docs = append(docs, b.String())
	}
	return docs
}

// FuzzParse must never panic, and a document it accepts must convert.
func FuzzParse(f *testing.F) {
	for _, p := range corpus(f) {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := ParseWith("fuzz", data, Options{Limit: 1 << 14})
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		_ = Value(d.Root)
		_ = typed(d.Root)
	})
}
