package configobj

import (
	"strings"
	"testing"
)

func TestQuote(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain", "plain"}, {"", `""`}, {"a,b", `"a,b"`}, {" lead", `" lead"`}, {"a#b", `"a#b"`},
		{`say "hi"`, `'say "hi"'`}, {`it's "x"`, `"""it's "x""""`}, {"a\n    b", "\"\"\"a\n    b\"\"\""},
	} {
		if got, err := Quote(tc.in, true); err != nil || got != tc.want {
			t.Errorf("%q: %q %v, want %q", tc.in, got, err, tc.want)
		}
	}
}

// FuzzQuote: a quoted value reads back as itself.
func FuzzQuote(f *testing.F) {
	for _, s := range []string{"plain", "", "a,b", " x", "a#b", `say "hi"`, `it's "x"`, "a\n    b", `"""'''`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		q, err := Quote(v, true)
		if err != nil {
			return
		}
		for _, d := range []string{`"""`, "'''", `"`, "'"} {
			if len(q) >= 2*len(d) && strings.HasPrefix(q, d) && strings.HasSuffix(q, d) {
				if q[len(d):len(q)-len(d)] == v {
					return
				}
			}
		}
		if q != v {
			t.Fatalf("%q quoted as %q", v, q)
		}
	})
}
