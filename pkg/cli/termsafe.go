package cli

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// termSafe returns s with what a terminal would act on escaped: bytes that
// are not UTF-8 as \xNN, control characters (C0 but tab, newline and carriage
// return, DEL, C1) as \xNN or \u00NN. `schema` prints user files and their first lines,
// which may be binary or carry escape sequences; YAML allows none of these
// characters, so a readable document prints unchanged.
func termSafe(s string) string {
	clean := true
	for _, r := range s {
		if r == utf8.RuneError || unsafeRune(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r < 0x80 && unsafeRune(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafeRune(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

func unsafeRune(r rune) bool {
	return (r < 0x20 && r != '\t' && r != '\n' && r != '\r') || (r >= 0x7f && r <= 0x9f)
}

// termSafeWriter applies termSafe to every Write.
type termSafeWriter struct{ w io.Writer }

func (t termSafeWriter) Write(p []byte) (int, error) {
	if _, err := io.WriteString(t.w, termSafe(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}
