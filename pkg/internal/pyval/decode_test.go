package pyval

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

type testSection struct {
	Layout  string   `cfg:"layout"`
	Remove  bool     `cfg:"remove_defaults,old=remove-defaults@22.1"`
	Mode    string   `cfg:"mode,default=auto"`
	Port    *int     `cfg:"port"`
	Trusted []string `cfg:"trusted"`
	Raw     any      `cfg:"raw"`
}

type testConfig struct {
	HasKB bool          `cfg:"kb,present"`
	KB    testSection   `cfg:"kb"`
	List  []testSection `cfg:"list"`
}

func (testConfig) TypeErrors() map[string]string {
	return map[string]string{"kb": "'kb' is a %s"}
}

func TestDecode(t *testing.T) {
	port := 22
	tests := []struct {
		name    string
		in      map[string]any
		want    testConfig
		deps    []string
		warns   []string
		wantErr string
	}{
		{name: "absent", in: map[string]any{}, want: testConfig{KB: testSection{}}},
		{name: "null", in: map[string]any{"kb": nil}, want: testConfig{HasKB: true}},
		{
			name: "loose",
			in: map[string]any{"kb": map[string]any{"layout": 1.0, "remove_defaults": "yes", "port": "22",
				"trusted": "one", "raw": []any{1}, "unknown": true}},
			want: testConfig{HasKB: true, KB: testSection{Layout: "1.0", Remove: true, Mode: "auto", Port: &port,
				Trusted: []string{"one"}, Raw: []any{1}}},
		},
		{
			name: "old spelling",
			in:   map[string]any{"kb": map[string]any{"remove-defaults": true}},
			want: testConfig{HasKB: true, KB: testSection{Remove: true, Mode: "auto"}},
			deps: []string{"Key 'remove-defaults' is deprecated in 22.1 and scheduled to be removed in 27.1. Use 'remove_defaults' instead."},
		},
		{
			name:  "both spellings",
			in:    map[string]any{"kb": map[string]any{"remove-defaults": true, "remove_defaults": false}},
			want:  testConfig{HasKB: true, KB: testSection{Mode: "auto"}},
			deps:  []string{"Key 'remove-defaults' is deprecated in 22.1 and scheduled to be removed in 27.1. Use 'remove_defaults' instead."},
			warns: []string{"Found both remove-defaults (deprecated) and remove_defaults config keys. Ignoring remove-defaults."},
		},
		{name: "own message", in: map[string]any{"kb": "x"}, wantErr: "'kb' is a str"},
		{name: "bad int", in: map[string]any{"kb": map[string]any{"port": "x"}}, wantErr: "kb.port: invalid literal for int() with base 10: 'x'"},
		{name: "list item", in: map[string]any{"list": []any{3}}, wantErr: "list[0]: expected a mapping, got int"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var deps, warns []string
			d := &Decoder{Deprecated: func(m string) { deps = append(deps, m) }, Warn: func(m string) { warns = append(warns, m) }}
			var got testConfig
			err := d.Decode(tt.in, &got)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("-want +got\n%s", diff)
			}
			if diff := cmp.Diff(tt.deps, deps); diff != "" {
				t.Errorf("deprecations -want +got\n%s", diff)
			}
			if diff := cmp.Diff(tt.warns, warns); diff != "" {
				t.Errorf("warnings -want +got\n%s", diff)
			}
		})
	}
}

func TestStr(t *testing.T) {
	for in, want := range map[any]string{"s": "s", true: "True", 1.0: "1.0", 3: "3"} {
		if got := Str(in); got != want {
			t.Errorf("Str(%#v) = %q, want %q", in, got, want)
		}
	}
	if got := Str(nil); got != "None" {
		t.Errorf("Str(nil) = %q", got)
	}
	if got := Str([]any{"a", map[string]any{"k": nil}}); got != "['a', {'k': None}]" {
		t.Errorf("Str(list) = %q", got)
	}
}

func TestIsFalse(t *testing.T) {
	for _, v := range []any{false, "off", " No ", 0, "FALSE"} {
		if !IsFalse(v) {
			t.Errorf("IsFalse(%#v) = false", v)
		}
	}
	for _, v := range []any{true, nil, "n", "", 1} {
		if IsFalse(v) {
			t.Errorf("IsFalse(%#v) = true", v)
		}
	}
}

func TestDecodeFlagsAndScalars(t *testing.T) {
	type flags struct {
		On     bool   `cfg:"on,default=true"`
		Off    bool   `cfg:"off"`
		Name   string `cfg:"name,scalar"`
		Value  string `cfg:"value,str"`
		Absent string `cfg:"absent,str"`
		Inline struct {
			Other string `cfg:"other"`
		} `cfg:",inline"`
	}
	tests := []struct {
		name string
		in   map[string]any
		want flags
	}{
		{name: "absent", in: map[string]any{}, want: flags{On: true}},
		{name: "null", in: map[string]any{"on": nil, "off": nil, "name": nil, "value": nil},
			want: flags{On: true, Value: "None"}},
		{name: "unknown flag keeps the default", in: map[string]any{"on": "maybe", "off": "maybe"}, want: flags{On: true}},
		{name: "flags", in: map[string]any{"on": "no", "off": "yes"}, want: flags{On: false, Off: true}},
		{name: "scalars", in: map[string]any{"name": true, "value": true}, want: flags{On: true, Name: "true", Value: "True"}},
		{name: "inline", in: map[string]any{"other": 1}, want: flags{On: true, Inline: struct {
			Other string `cfg:"other"`
		}{"1"}}},
		{name: "float", in: map[string]any{"name": 1e21, "value": 1.5}, want: flags{On: true, Name: "1000000000000000000000", Value: "1.5"}},
		{name: "not a scalar", in: map[string]any{"name": []any{"a"}, "value": []any{"a"}}, want: flags{On: true, Value: "['a']"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got flags
			if err := (&Decoder{}).Decode(tt.in, &got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("-want +got\n%s", diff)
			}
		})
	}
}
