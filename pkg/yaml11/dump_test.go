package yaml11

import (
	"strings"
	"testing"
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

// dumpCases are strings at the emitter's edges: quoting, folding at the
// width, escapes, multi-byte runes at the ends, breaks other than \n.
var dumpCases = []string{
	"", " ", "a", "yes", "0123", "1.5", "-", "- a", "? x", ":", "a: b", "a #b", "#c", "---", "...x",
	"'", "a'b", "'quoted'", "\"", "\\", "tab\there", "trail ", " lead", "two  spaces", "line\n", "\nlead",
	"a\nb", "a\n\nb", "a \nb", "a\n b", "é", "aé", "éa", "\u2028", "a\u2028b", "\x85", "\ufeff", "😀", "a😀b",
	"\x00\x01\x7f", strings.Repeat("word ", 40), strings.Repeat("x", 200), strings.Repeat("é ", 60),
	strings.Repeat("ab'cd ", 30), strings.Repeat("a\"b\\c ", 30), strings.Repeat("line of text\n", 20),
	strings.Repeat("é\u2028\x7f", 40), strings.Repeat("  ", 50) + "x", "x" + strings.Repeat(" ", 100),
	strings.Repeat("a ", 39) + "é" + strings.Repeat(" b", 40),
}

// TestDumpToSameAsBefore: DumpTo (byte offsets, streamed) writes exactly
// what the former []rune emitter wrote.
func TestDumpToSameAsBefore(t *testing.T) {
	for _, s := range dumpCases {
		checkDumpSame(t, s)
	}
}

func FuzzDumpString(f *testing.F) {
	for _, s := range dumpCases {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkDumpSame(t, s)
	})
}

func checkDumpSame(t *testing.T, s string) {
	t.Helper()
	v := map[string]any{s: s, "k": []any{s, map[string]any{"n": s}}}
	for _, o := range []DumpOptions{{}, SafeDumpOptions} {
		want := refDump(v, o)
		var b strings.Builder
		if err := DumpTo(&b, v, o); err != nil {
			t.Fatal(err)
		}
		if got := b.String(); got != want {
			t.Errorf("DumpTo(%q, %+v):\n%q\nwant\n%q", s, o, got, want)
		}
	}
}
