package yaml11

import (
	"errors"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/cloudroot/cloudroot/pkg/internal/yamlscan"
)

// TestNodeBounds: a stream with more nodes than MaxNodes, or nested deeper
// than MaxDepth, is refused with ErrTooManyNodes, naming the source and
// the line of the first node past the bound, before yaml.v3 builds a tree.
func TestNodeBounds(t *testing.T) {
	list := func(n int) string { return "[" + strings.Repeat("1,", n-1) + "1]" }
	block := func(n int) string { return "a: 1\nb:\n" + strings.Repeat("- x\n", n) }
	for _, c := range []struct {
		name, doc string
		o         Options
		line      int // 0: accepted
	}{
		{"list at the bound", list(MaxNodes - 1), Options{}, 0},
		{"list past the bound", list(MaxNodes), Options{}, 1},
		{"block list past a bound of 10", block(10), Options{MaxNodes: 10}, 8},
		{"second document counts", "--- [1, 2]\n--- [3, 4, 5]\n", Options{MaxNodes: 5}, 2},
		{"deep flow", strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1), Options{}, 1},
		{"deep block", "a:\n b:\n  c:\n   d: 1\n", Options{MaxDepth: 3}, 4},
		{"aliases at the bound", "a: &a [1, 2, 3]\nb: [*a, *a]\n", Options{MaxNodes: 10}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseWith("user-data", []byte(c.doc), c.o)
			if c.line == 0 {
				if err != nil {
					t.Fatalf("error %v", err)
				}
				return
			}
			var e *Error
			if !errors.Is(err, ErrTooManyNodes) || !errors.As(err, &e) {
				t.Fatalf("error %v, want ErrTooManyNodes", err)
			}
			if e.Source != "user-data" || e.Line != c.line {
				t.Errorf("error at %s line %d, want user-data line %d: %v", e.Source, e.Line, c.line, err)
			}
		})
	}
}

// TestNodeBoundMemory: refusing a node-dense document costs about its own
// size, not a node tree (2 MiB of [1,1,…] allocated ~0.5 GiB in all
// before it was refused, or loaded).
func TestNodeBoundMemory(t *testing.T) {
	for _, c := range []struct{ shape, doc string }{
		{"flow list", "[" + strings.Repeat("1,", 1<<20) + "1]"},
		{"block list", strings.Repeat("- 1\n", 1<<19)},
		{"flow map", "{" + strings.Repeat("a: 1,", 1<<19) + "b: 1}"},
		{"nested", "[" + strings.Repeat("[1],", 1<<19) + "1]"},
	} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := Parse("user-data", []byte(c.doc))
		runtime.ReadMemStats(&after)
		if !errors.Is(err, ErrTooManyNodes) {
			t.Errorf("%s: error %v, want ErrTooManyNodes", c.shape, err)
		}
		// Allocated in all (an upper bound of the peak): the count keeps
		// one event at a time; 8x the input leaves room for the scanner's
		// buffers.
		if got, limit := after.TotalAlloc-before.TotalAlloc, uint64(8*len(c.doc)); got > limit {
			t.Errorf("%s: %d bytes allocated for %d bytes of YAML, want at most %d", c.shape, got, len(c.doc), limit)
		}
	}
}

// TestWithinCorpus: the shortcut that skips the count (yamlscan.Within)
// never lets a document of the corpus past a bound it would have hit: with
// the bounds set to what Within assumes, Count agrees.
func TestWithinCorpus(t *testing.T) {
	for _, p := range corpus(t) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		k := 0
		for i, c := range b {
			if strings.IndexByte(",-:?[{*", c) >= 0 || c == '.' && (i == 0 || b[i-1] == '\n') {
				k++
			}
		}
		if !yamlscan.Within(b, 3*k+3, max(k, 1)) {
			t.Errorf("%s: Within false at its own bound", p)
		}
		if n, err := yamlscan.Count(b, 3*k+3, max(k, 1)); err != nil {
			t.Errorf("%s: %d indicators, %d nodes: %v", p, k, n, err)
		}
	}
}
