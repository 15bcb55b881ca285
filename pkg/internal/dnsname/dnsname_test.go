package dnsname

import (
	"strings"
	"testing"
)

func TestValid(t *testing.T) {
	for _, tc := range []struct {
		in            string
		loose, strict bool
	}{
		{"example.com", true, true},
		{"example.com.", true, true},
		{"A-1.b", true, true},
		{"10.0.0.1", true, true},
		{"_srv.example", true, false},
		{"", false, false},
		{".", false, false},
		{"a..b", false, false},
		{"a-.b", false, false},
		{"a b", false, false},
		{"a\nb", false, false},
		{"a$(x)", false, false},
		{"é.example", false, false},
		{strings.Repeat("a", 63), true, true},
		{strings.Repeat("a", 64), false, false},
		{strings.Repeat("a.", 126) + "a", true, true},
		{strings.Repeat("a.", 127) + "ab", false, false},
	} {
		if got := Valid(tc.in, false); got != tc.loose {
			t.Errorf("Valid(%q, false) = %v", tc.in, got)
		}
		if got := Valid(tc.in, true); got != tc.strict {
			t.Errorf("Valid(%q, true) = %v", tc.in, got)
		}
	}
}
