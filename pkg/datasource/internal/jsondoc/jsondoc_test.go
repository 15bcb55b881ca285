package jsondoc

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestScalar(t *testing.T) {
	for _, tc := range []struct {
		in   any
		want string
	}{
		{"a", "a"}, {float64(7), "7"}, {1e21, "1000000000000000000000"}, {true, "true"},
		{int64(-3), "-3"}, {nil, ""}, {[]any{1}, ""}, {map[string]any{}, ""},
	} {
		if got := Scalar(tc.in); got != tc.want {
			t.Errorf("Scalar(%#v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestBlob(t *testing.T) {
	for _, tc := range []struct {
		in   any
		want string
	}{
		{nil, ""}, {"", ""}, {"#cloud-config\n", "#cloud-config\n"}, {map[string]any{"a": 1.0}, `{"a":1}`},
	} {
		got, err := Blob(tc.in)
		if err != nil || string(got) != tc.want {
			t.Errorf("Blob(%#v) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func TestObject(t *testing.T) {
	m, err := Object([]byte(`{"a": [1]}`))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]any{"a": []any{1.0}}, m); diff != "" {
		t.Error(diff)
	}
	for _, b := range []string{`[1]`, `"x"`, `{`, ``} {
		if _, err := Object([]byte(b)); err == nil {
			t.Errorf("Object(%q): no error", b)
		}
	}
}

func FuzzObject(f *testing.F) {
	for _, s := range []string{`{}`, `{"droplet_id": 1e30, "user_data": {"a": 1}}`, `[1]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := Object(b)
		if err == nil && m == nil {
			t.Fatal("nil object without error")
		}
		for _, v := range m {
			Scalar(v)
			if _, err := Blob(v); err != nil {
				t.Fatal(err)
			}
		}
	})
}
