package yaml11

import "testing"

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
