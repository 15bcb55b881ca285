package pyval

import "testing"

// TestJSONQuote: CPython's json.dumps answers for the same strings.
func TestJSONQuote(t *testing.T) {
	for in, want := range map[string]string{
		"":             `""`,
		"a\"b\\c":      `"a\"b\\c"`,
		"\n\r\t\b\f":   `"\n\r\t\b\f"`,
		"\x01\x1f\x7f": `"\u0001\u001f\u007f"`,
		"é€":           `"\u00e9\u20ac"`,
		"😀":            `"\ud83d\ude00"`,
	} {
		if got := JSONQuote(in); got != want {
			t.Errorf("JSONQuote(%q) = %s, want %s", in, got, want)
		}
	}
}
