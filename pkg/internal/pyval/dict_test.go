package pyval

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDictOf(t *testing.T) {
	d := DictOf(map[string]any{"b": 2, "a": nil, "c": []any{"x"}})
	want := Dict{Mapping: true, Entries: []Entry{{"a", nil}, {"b", 2}, {"c", []any{"x"}}}}
	if diff := cmp.Diff(want, d); diff != "" {
		t.Errorf("-want +got:\n%s", diff)
	}
	if v, ok := d.Get("a"); !ok || v != nil {
		t.Errorf("Get(a) = %v, %v; want nil, true", v, ok)
	}
	if _, ok := d.Get("z"); ok {
		t.Error("Get(z) found")
	}
	for _, v := range []any{nil, "s", []any{map[string]any{}}, 3} {
		if d := DictOf(v); d.Mapping || d.Len() != 0 {
			t.Errorf("DictOf(%#v) = %+v", v, d)
		}
	}
	if d := DictOf(map[string]any{}); !d.Mapping || d.Len() != 0 {
		t.Errorf("empty mapping: %+v", d)
	}
}

func TestListOf(t *testing.T) {
	for _, tc := range []struct {
		in   any
		want List
	}{
		{"a", List{"a"}},
		{[]any{"a", nil, "", true, 1.5}, List{"a", "", "", "true", "1.5"}},
		{nil, nil},
		{map[string]any{"a": 1}, nil},
		{3, nil},
	} {
		if got := ListOf(tc.in); !cmp.Equal(got, tc.want) {
			t.Errorf("ListOf(%#v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestStrIfTrue: Python's `if value:` then str(value); a float zero is
// false (zypper_add_repo used to write it as "0.0").
func TestStrIfTrue(t *testing.T) {
	for _, tc := range []struct {
		in   any
		want string
	}{
		{nil, ""}, {false, ""}, {0, ""}, {0.0, ""}, {"", ""}, {[]any{}, ""}, {map[string]any{}, ""},
		{true, "True"}, {1, "1"}, {0.5, "0.5"}, {"x", "x"}, {[]any{"a"}, "['a']"},
	} {
		if got := StrIfTrue(tc.in); got != tc.want {
			t.Errorf("StrIfTrue(%#v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
