package pyval

import "testing"

// TestOpt: a key absent, null, falsy and given, as a handler tells them
// apart (in cfg, cfg.get(key, default), bool(cfg[key])).
func TestOpt(t *testing.T) {
	type cfg struct {
		A Opt `cfg:"a"`
	}
	for _, tc := range []struct {
		name   string
		in     map[string]any
		given  bool
		str    string
		or     string
		truthy bool
	}{
		{"absent", map[string]any{}, false, "", "def", false},
		{"null", map[string]any{"a": nil}, true, "None", "None", false},
		{"empty string", map[string]any{"a": ""}, true, "", "", false},
		{"zero", map[string]any{"a": 0}, true, "0", "0", false},
		{"false", map[string]any{"a": false}, true, "False", "False", false},
		{"list", map[string]any{"a": []any{1, "x"}}, true, "[1, 'x']", "[1, 'x']", true},
		{"string", map[string]any{"a": "v"}, true, "v", "v", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c cfg
			if err := (&Decoder{}).Decode(tc.in, &c); err != nil {
				t.Fatal(err)
			}
			if c.A.Given != tc.given || c.A.Str() != tc.str || c.A.Or("def") != tc.or || c.A.Truthy() != tc.truthy {
				t.Errorf("got given=%v str=%q or=%q truthy=%v, want %v %q %q %v",
					c.A.Given, c.A.Str(), c.A.Or("def"), c.A.Truthy(), tc.given, tc.str, tc.or, tc.truthy)
			}
		})
	}
}
