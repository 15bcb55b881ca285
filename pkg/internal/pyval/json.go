package pyval

import (
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/yaml11"
)

// JSONQuote is Python's json.dumps of a string with ensure_ascii (the
// default): the short escapes json uses, \uXXXX for other control and
// non-ASCII characters, surrogate pairs beyond the BMP.
func JSONQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r < 0x20 || (r > 0x7e && r < 0x10000):
			fmt.Fprintf(&b, `\u%04x`, r)
		case r >= 0x10000:
			r -= 0x10000
			fmt.Fprintf(&b, `\u%04x\u%04x`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// JSONOptions are the json.dumps arguments cloud-init passes.
type JSONOptions struct {
	// Indent is json.dumps's indent: each item on its own line, Indent
	// spaces deeper per level, separators (",", ": "). 0 stands for
	// indent=None: one line, separators (", ", ": ") (Python's indent=0,
	// newlines without indentation, is not offered).
	Indent int
	// SortKeys is sort_keys: every mapping's keys in code point order.
	// Without it a yaml11.Ordered mapping keeps its own order; a Go map,
	// which has none, is always sorted.
	SortKeys bool
	// Default is json.dumps's default: it is called with a value of any
	// other type and its result written instead. Nil, or a result that is
	// still of another type, makes JSONDumps fail, as Python's TypeError.
	Default func(any) any
}

// JSONDumps is Python's json.dumps(v) with ensure_ascii and allow_nan (the
// defaults) for values decoded from JSON or YAML: nil, bool, string,
// json.Number (an integer in full, a float as repr(float) of its nearest
// double), Go ints and *big.Int, float64 (repr, with Infinity, -Infinity
// and NaN as Python writes them), []any, map[string]any and
// yaml11.Ordered mappings.
func JSONDumps(v any, o JSONOptions) (string, error) {
	var b strings.Builder
	if err := writeJSON(&b, v, o, 0); err != nil {
		return "", err
	}
	return b.String(), nil
}

func writeJSON(b *strings.Builder, v any, o JSONOptions, level int) error {
	switch t := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(t))
	case string:
		b.WriteString(JSONQuote(t))
	case json.Number:
		b.WriteString(jsonNumber(t))
	case int:
		b.WriteString(strconv.Itoa(t))
	case int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		fmt.Fprint(b, t)
	case *big.Int:
		b.WriteString(t.String())
	case float64:
		b.WriteString(yaml11.PyJSONFloat(t))
	case []any:
		return writeJSONItems(b, "[", "]", len(t), o, level, func(i int) error {
			return writeJSON(b, t[i], o, level+1)
		})
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		return writeJSONObject(b, keys, func(k string) any { return t[k] }, o, level)
	case yaml11.Ordered:
		keys := t.Keys()
		if o.SortKeys {
			keys = slices.Sorted(slices.Values(keys))
		}
		return writeJSONObject(b, keys, t.Get, o, level)
	default:
		if o.Default == nil {
			return fmt.Errorf("object of type %T is not JSON serializable", v)
		}
		d := o.Default(v)
		switch d.(type) {
		case nil, bool, string, json.Number, int, int8, int16, int32, int64,
			uint, uint8, uint16, uint32, uint64, *big.Int, float64,
			[]any, map[string]any, yaml11.Ordered:
			return writeJSON(b, d, o, level)
		}
		return fmt.Errorf("object of type %T is not JSON serializable (default gave %T)", v, d)
	}
	return nil
}

func writeJSONObject(b *strings.Builder, keys []string, get func(string) any, o JSONOptions, level int) error {
	return writeJSONItems(b, "{", "}", len(keys), o, level, func(i int) error {
		b.WriteString(JSONQuote(keys[i]))
		b.WriteString(": ")
		return writeJSON(b, get(keys[i]), o, level+1)
	})
}

// writeJSONItems writes n items between open and close with json.dumps's
// separators and newlines; an empty container stays "[]" or "{}".
func writeJSONItems(b *strings.Builder, open, close string, n int, o JSONOptions, level int, item func(int) error) error {
	b.WriteString(open)
	if n == 0 {
		b.WriteString(close)
		return nil
	}
	for i := range n {
		switch {
		case o.Indent > 0 && i > 0:
			b.WriteString(",")
		case i > 0:
			b.WriteString(", ")
		}
		if o.Indent > 0 {
			b.WriteString("\n" + strings.Repeat(" ", (level+1)*o.Indent))
		}
		if err := item(i); err != nil {
			return err
		}
	}
	if o.Indent > 0 {
		b.WriteString("\n" + strings.Repeat(" ", level*o.Indent))
	}
	b.WriteString(close)
	return nil
}

// jsonNumber is the json.dumps text of what json.loads makes of n: an int
// (any size) or a float.
func jsonNumber(n json.Number) string {
	s := string(n)
	if !strings.ContainsAny(s, ".eE") {
		if i, ok := new(big.Int).SetString(s, 10); ok {
			return i.String()
		}
		return s
	}
	f, _ := strconv.ParseFloat(s, 64) // out of range: ±Inf, as float() gives
	return yaml11.PyJSONFloat(f)
}
