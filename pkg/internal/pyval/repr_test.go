package pyval

import (
	"slices"
	"strings"
	"testing"
)

// TestRepr: CPython's repr() of the same values.
func TestRepr(t *testing.T) {
	for v, want := range map[any]string{nil: "None", true: "True", "it's": `"it's"`, `a'b"c`: `'a\'b"c'`, 2.0: "2.0", 1.5: "1.5", 7: "7",
		"a\\b\n\x01\x7f": `'a\\b\n\x01\x7f'`, 1234567.5: "1234567.5", 1e16: "1e+16", 1.5e-5: "1.5e-05"} {
		if got := Repr(v); got != want {
			t.Errorf("Repr(%#v) = %s, want %s", v, got, want)
		}
	}
	if got := Repr(map[string]any{"b": []any{1, "x"}, "a": nil}); got != "{'a': None, 'b': [1, 'x']}" {
		t.Errorf("got %s", got)
	}
	if got, want := Repr([]string{"gh:me", "it's"}), `['gh:me', "it's"]`; got != want {
		t.Errorf("Repr([]string) = %s, want %s", got, want)
	}
}

// TestReprOrdered: a KeyOrder sees each mapping's path and decides its
// key order (here reversed, and only below "outer").
func TestReprOrdered(t *testing.T) {
	v := map[string]any{"outer": map[string]any{"a": 1, "b": []any{map[string]any{"x": 1, "y": 2}}}, "z": true, "m": false}
	var paths []string
	got := ReprOrdered(v, func(path, keys []string) {
		paths = append(paths, strings.Join(path, "."))
		if len(path) > 0 {
			slices.Reverse(keys)
		}
	})
	if want := "{'m': False, 'outer': {'b': [{'y': 2, 'x': 1}], 'a': 1}, 'z': True}"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	if want := []string{"", "outer", "outer.b.0"}; !slices.Equal(paths, want) {
		t.Errorf("paths %q, want %q", paths, want)
	}
}
