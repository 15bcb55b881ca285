package pyval

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/yaml11"
)

// KeyOrder puts the keys of the mapping at path (the keys and list indices
// leading to it from the value given to ReprOrdered) in the order repr
// shows them, in place.
type KeyOrder func(path, keys []string)

// Repr is Python's repr() of a decoded JSON or YAML value: None, True,
// quoted strings, ints, floats as repr(float), lists and dicts. A Go map
// keeps no order, so dict keys are sorted.
func Repr(v any) string { return ReprOrdered(v, nil) }

// ReprOrdered is Repr with each dict's keys in the order order gives
// (nil: sorted), e.g. the document order PyYAML loads them in.
func ReprOrdered(v any, order KeyOrder) string {
	var b strings.Builder
	writeRepr(&b, v, nil, order)
	return b.String()
}

func writeRepr(b *strings.Builder, v any, path []string, order KeyOrder) {
	switch t := v.(type) {
	case nil:
		b.WriteString("None")
	case bool:
		if t {
			b.WriteString("True")
		} else {
			b.WriteString("False")
		}
	case string:
		b.WriteString(StrRepr(t))
	case json.Number:
		b.WriteString(NumberRepr(t))
	case int, int64, uint64, int32, uint32, int16, int8, uint, uint8, uint16:
		fmt.Fprint(b, t)
	case float64:
		b.WriteString(yaml11.PyFloatRepr(t))
	case []any:
		b.WriteByte('[')
		for i, e := range t {
			if i > 0 {
				b.WriteString(", ")
			}
			writeRepr(b, e, append(path[:len(path):len(path)], strconv.Itoa(i)), order)
		}
		b.WriteByte(']')
	case []string:
		b.WriteByte('[')
		for i, e := range t {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(StrRepr(e))
		}
		b.WriteByte(']')
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		if order != nil {
			order(path, keys)
		}
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(StrRepr(k))
			b.WriteString(": ")
			writeRepr(b, t[k], append(path[:len(path):len(path)], k), order)
		}
		b.WriteByte('}')
	case yaml11.Ordered:
		// A mapping that keeps its keys (a decoded JSON object): Python's
		// dict order is the document's.
		keys := slices.Clone(t.Keys())
		if order != nil {
			order(path, keys)
		}
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(StrRepr(k))
			b.WriteString(": ")
			writeRepr(b, t.Get(k), append(path[:len(path):len(path)], k), order)
		}
		b.WriteByte('}')
	default:
		fmt.Fprint(b, v)
	}
}

// StrRepr is Python's repr() of a str: single quotes unless the text has
// a single quote and no double one; backslash, the quote, \n, \r, \t and
// other control characters (as \xNN) escaped.
func StrRepr(s string) string {
	q := byte('\'')
	if strings.Contains(s, "'") && !strings.Contains(s, `"`) {
		q = '"'
	}
	var b strings.Builder
	b.WriteByte(q)
	for _, r := range s {
		switch {
		case r == '\\' || r == rune(q):
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte(q)
	return b.String()
}
