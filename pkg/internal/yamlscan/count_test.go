package yamlscan

import (
	"errors"
	"strings"
	"testing"
)

func TestCount(t *testing.T) {
	for _, c := range []struct {
		doc          string
		nodes, depth int
		want         int
		wantErr      string // "" or LimitError.What
		line         int
	}{
		{doc: "", want: 0},
		{doc: "a: 1\nb: [1, 2, {c: d}]\n", want: 10},
		{doc: "- &x [1, 2]\n- *x\n- *x\n", want: 6},
		{doc: "[1,1,1,1,1]", nodes: 5, want: 6, wantErr: "nodes", line: 1},
		{doc: "[1,1,1,1]", nodes: 5, want: 5},
		{doc: "a: 1\nb:\n  - 1\n  - 2\n  - 3\n", nodes: 5, want: 6, wantErr: "nodes", line: 3},
		{doc: "[[[[1]]]]", depth: 3, want: 3, wantErr: "depth", line: 1},
		{doc: "a: |\n  - 1\n  - 2\n", want: 3},
		{doc: "--- [1, 2]\n--- [3, 4]\n", want: 6},
		{doc: "a: [1, 2\n", want: 5}, // a syntax error ends the count
	} {
		got, err := Count([]byte(c.doc), c.nodes, c.depth)
		var le *LimitError
		switch {
		case c.wantErr == "" && err != nil:
			t.Errorf("Count(%q) error %v", c.doc, err)
		case c.wantErr != "" && !errors.As(err, &le):
			t.Errorf("Count(%q) = %d, %v; want a %s LimitError", c.doc, got, err, c.wantErr)
		case c.wantErr != "" && (le.What != c.wantErr || le.Line != c.line):
			t.Errorf("Count(%q): %+v, want %s at line %d", c.doc, le, c.wantErr, c.line)
		}
		if got != c.want {
			t.Errorf("Count(%q) = %d nodes, want %d", c.doc, got, c.want)
		}
	}
}

// TestCountMemory: counting holds one event at a time, so a stream of a
// million nodes is counted in little memory.
func TestCountMemory(t *testing.T) {
	doc := []byte("[" + strings.Repeat("1,", 1<<20) + "1]")
	n, err := Count(doc, 0, 0)
	if err != nil || n != 1<<20+2 {
		t.Fatalf("Count = %d, %v", n, err)
	}
}

func FuzzCount(f *testing.F) {
	for _, s := range []string{"a: 1\n", "a: b\nc: d\n", "? a\n", "[a: b]", "- - 1\n", "---\n---\n", "a:\n", "[a,]", "{a, b}", "&a b", "a\n...\nb\n...\nc\n...\nd\n...\ne\n", "[1, [2, {a: *x}]]", "- &a b\n- *a\n", "? a\n: b\n", "a: |\n  x\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		n, err := Count(data, 0, 0)
		if err != nil || n < 0 {
			t.Fatalf("Count = %d, %v", n, err)
		}
		// Within's reasoning: k indicators allow 3k+3 nodes, k levels.
		k := indicatorCount(data)
		if !Within(data, 3*k+3, max(k, 1)) {
			t.Fatalf("Within(%d nodes, %d deep) = false with %d indicators", 3*k+3, max(k, 1), k)
		}
		if m, err := Count(data, 3*k+3, max(k, 1)); err != nil {
			t.Fatalf("%d indicators, yet Count: %d, %v", k, m, err)
		}
		if _, err := Count(data, 3, 2); err == nil {
			if m, _ := Count(data, 0, 0); m > 3 {
				t.Fatalf("bound 3 passed with %d nodes", m)
			}
		}
	})
}
