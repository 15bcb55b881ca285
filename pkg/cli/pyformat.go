package cli

// Python-compatible printing: cloud-init prints status, query and cloud-id
// output with Python's json.dumps and PyYAML's dump, and scripts compare it
// byte for byte. These printers reproduce both (key order kept, numbers and
// string escapes as Python writes them).

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// pyStr is Python's str() of a decoded JSON value.
func pyStr(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case nil:
		return "None"
	case bool:
		if v {
			return "True"
		}
		return "False"
	case json.Number:
		return pyNumber(v)
	}
	var b bytes.Buffer
	writePyJSON(&b, v, -1)
	return b.String()
}

func jsonFloat(v any) float64 {
	n, ok := v.(json.Number)
	if !ok {
		return 0
	}
	f, _ := strconv.ParseFloat(string(n), 64)
	return f
}

// jsonObject is a JSON object that remembers key order, as Python's dict does.
type jsonObject struct {
	keys []string
	vals map[string]any
}

func newJSONObject() *jsonObject { return &jsonObject{vals: map[string]any{}} }

func (o *jsonObject) lookup(k string) (any, bool) {
	v, ok := o.vals[k]
	return v, ok
}

func (o *jsonObject) get(k string) any { return o.vals[k] }

// set stores v under k; a new key goes last, an existing one keeps its place.
func (o *jsonObject) set(k string, v any) {
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

// decodeOrderedJSON decodes b into nil, bool, string, json.Number, []any and
// *jsonObject values.
func decodeOrderedJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	v, err := decodeJSONValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("trailing data after JSON value")
	}
	return v, nil
}

func decodeJSONValue(dec *json.Decoder) (any, error) {
	t, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t {
	case json.Delim('{'):
		o := newJSONObject()
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil, err
			}
			v, err := decodeJSONValue(dec)
			if err != nil {
				return nil, err
			}
			o.set(kt.(string), v)
		}
		_, err := dec.Token()
		return o, err
	case json.Delim('['):
		l := []any{}
		for dec.More() {
			v, err := decodeJSONValue(dec)
			if err != nil {
				return nil, err
			}
			l = append(l, v)
		}
		_, err := dec.Token()
		return l, err
	}
	return t, nil
}

// writePyJSON writes v as Python's json.dumps(v, indent=2, sort_keys=True,
// separators=(",", ": ")) does (ensure_ascii). indent < 0 writes the compact
// one-line form with Python's default separators.
func writePyJSON(w *bytes.Buffer, v any, indent int) {
	nl := func(n int) {
		if indent >= 0 {
			w.WriteString("\n" + strings.Repeat("  ", n))
		}
	}
	sep := ", "
	if indent >= 0 {
		sep = ","
	}
	switch v := v.(type) {
	case nil:
		w.WriteString("null")
	case bool:
		w.WriteString(strconv.FormatBool(v))
	case json.Number:
		w.WriteString(pyJSONNumber(v))
	case string:
		writePyJSONString(w, v)
	case []any:
		if len(v) == 0 {
			w.WriteString("[]")
			return
		}
		w.WriteString("[")
		for i, e := range v {
			if i > 0 {
				w.WriteString(sep)
			}
			nl(indent + 1)
			writePyJSON(w, e, nextIndent(indent))
		}
		nl(indent)
		w.WriteString("]")
	case *jsonObject:
		if len(v.keys) == 0 {
			w.WriteString("{}")
			return
		}
		keys := append([]string(nil), v.keys...)
		if indent >= 0 {
			sort.Strings(keys)
		}
		w.WriteString("{")
		for i, k := range keys {
			if i > 0 {
				w.WriteString(sep)
			}
			nl(indent + 1)
			writePyJSONString(w, k)
			w.WriteString(": ")
			writePyJSON(w, v.vals[k], nextIndent(indent))
		}
		nl(indent)
		w.WriteString("}")
	}
}

func nextIndent(indent int) int {
	if indent < 0 {
		return indent
	}
	return indent + 1
}

func writePyJSONString(w *bytes.Buffer, s string) {
	w.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			w.WriteString(`\"`)
		case '\\':
			w.WriteString(`\\`)
		case '\n':
			w.WriteString(`\n`)
		case '\r':
			w.WriteString(`\r`)
		case '\t':
			w.WriteString(`\t`)
		case '\b':
			w.WriteString(`\b`)
		case '\f':
			w.WriteString(`\f`)
		default:
			switch {
			case r < 0x20 || (r > 0x7e && r <= 0xffff && r != 0x7f):
				fmt.Fprintf(w, `\u%04x`, r)
			case r > 0xffff:
				r -= 0x10000
				fmt.Fprintf(w, `\u%04x\u%04x`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
			default:
				w.WriteRune(r)
			}
		}
	}
	w.WriteByte('"')
}

// pyNumber renders a JSON number as Python's repr of the value json.load
// would have produced (int or float).
func pyNumber(n json.Number) string {
	s := string(n)
	if !strings.ContainsAny(s, ".eE") {
		if i, ok := new(big.Int).SetString(s, 10); ok {
			return i.String()
		}
		return s
	}
	f, _ := strconv.ParseFloat(s, 64)
	return pyFloatRepr(f)
}

func pyJSONNumber(n json.Number) string {
	s := pyNumber(n)
	switch s {
	case "inf":
		return "Infinity"
	case "-inf":
		return "-Infinity"
	}
	return s
}

// pyFloatRepr is Python's repr(float).
func pyFloatRepr(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		return "nan"
	}
	e := strconv.FormatFloat(f, 'e', -1, 64)
	exp, _ := strconv.Atoi(e[strings.IndexByte(e, 'e')+1:])
	if exp < -4 || exp >= 16 {
		return e
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

// pyYAMLDump renders v as cloud-init's safeyaml.dumps: PyYAML SafeDumper,
// indent 4, width 80, block style, sorted keys, explicit --- and ...
func pyYAMLDump(v any) string {
	e := &yamlEmitter{indent: -1, whitespace: true, indention: true}
	e.writeIndicator("---", true, false, false)
	e.node(v, false, false)
	e.writeIndent()
	e.writeIndicator("...", true, false, false)
	e.writeIndent()
	return e.buf.String()
}

// yamlEmitter follows PyYAML's emitter closely enough for JSON-shaped data:
// the column and whitespace bookkeeping decides where lines fold.
type yamlEmitter struct {
	buf        strings.Builder
	indent     int // -1 is PyYAML's None
	indents    []int
	column     int
	whitespace bool
	indention  bool
	flowLevel  int
}

const (
	yamlBestIndent = 4
	yamlBestWidth  = 80
)

func (e *yamlEmitter) increaseIndent(flow, indentless bool) {
	e.indents = append(e.indents, e.indent)
	switch {
	case e.indent < 0 && flow:
		e.indent = yamlBestIndent
	case e.indent < 0:
		e.indent = 0
	case !indentless:
		e.indent += yamlBestIndent
	}
}

func (e *yamlEmitter) popIndent() {
	e.indent = e.indents[len(e.indents)-1]
	e.indents = e.indents[:len(e.indents)-1]
}

func (e *yamlEmitter) write(s string) {
	e.buf.WriteString(s)
	e.column += utf8.RuneCountInString(s)
}

func (e *yamlEmitter) writeIndicator(ind string, needWhitespace, whitespace, indention bool) {
	if !e.whitespace && needWhitespace {
		ind = " " + ind
	}
	e.write(ind)
	e.whitespace = whitespace
	e.indention = e.indention && indention
}

func (e *yamlEmitter) writeLineBreak() {
	e.buf.WriteByte('\n')
	e.whitespace = true
	e.indention = true
	e.column = 0
}

func (e *yamlEmitter) writeIndent() {
	indent := max(e.indent, 0)
	if !e.indention || e.column > indent || (e.column == indent && !e.whitespace) {
		e.writeLineBreak()
	}
	if e.column < indent {
		e.whitespace = true
		e.write(strings.Repeat(" ", indent-e.column))
	}
}

// node emits v; mapping/sequence say which block collection v sits in.
func (e *yamlEmitter) node(v any, mapping, simpleKey bool) {
	switch v := v.(type) {
	case *jsonObject:
		if len(v.keys) == 0 {
			e.emptyCollection("{", "}")
			return
		}
		keys := append([]string(nil), v.keys...)
		sort.Strings(keys)
		e.increaseIndent(false, false)
		for _, k := range keys {
			e.writeIndent()
			// PyYAML counts the "!!str" tag into the simple key length limit.
			if a := analyzeYAMLScalar(k); utf8.RuneCountInString(k)+len("!!str") < 128 && !a.empty && !a.multiline {
				e.node(k, true, true)
				e.writeIndicator(":", false, false, false)
			} else { // PyYAML's complex key
				e.writeIndicator("?", true, false, true)
				e.node(k, true, false)
				e.writeIndent()
				e.writeIndicator(":", true, false, true)
			}
			e.node(v.vals[k], true, false)
		}
		e.popIndent()
	case []any:
		if len(v) == 0 {
			e.emptyCollection("[", "]")
			return
		}
		e.increaseIndent(false, mapping && !e.indention)
		for _, item := range v {
			e.writeIndent()
			e.writeIndicator("-", true, false, true)
			e.node(item, false, false)
		}
		e.popIndent()
	default:
		e.increaseIndent(true, false)
		e.scalar(v, simpleKey)
		e.popIndent()
	}
}

func (e *yamlEmitter) emptyCollection(open, closing string) {
	e.writeIndicator(open, true, true, false)
	e.flowLevel++
	e.increaseIndent(true, false)
	e.popIndent()
	e.flowLevel--
	e.writeIndicator(closing, false, false, false)
}

func (e *yamlEmitter) scalar(v any, simpleKey bool) {
	split := !simpleKey
	var text string
	switch v := v.(type) {
	case nil:
		text = "null"
	case bool:
		text = strconv.FormatBool(v)
	case json.Number:
		text = pyNumber(v)
		if strings.ContainsAny(text, ".en") || text == "inf" || text == "-inf" {
			text = yamlFloat(text)
		}
	case string:
		a := analyzeYAMLScalar(v)
		implicit := yamlResolvesToStr(v)
		switch {
		case implicit && !(simpleKey && (a.empty || a.multiline)) && a.allowBlockPlain:
			e.writePlain(v, split)
		case a.allowSingleQuoted && !(simpleKey && a.multiline):
			e.writeSingleQuoted(v, split)
		default:
			e.writeDoubleQuoted(v, split)
		}
		return
	}
	e.writePlain(text, split)
}

// yamlFloat is PyYAML's represent_float applied to Python's repr.
func yamlFloat(repr string) string {
	switch repr {
	case "inf":
		return ".inf"
	case "-inf":
		return "-.inf"
	case "nan":
		return ".nan"
	}
	s := strings.ToLower(repr)
	if !strings.Contains(s, ".") && strings.Contains(s, "e") {
		s = strings.Replace(s, "e", ".0e", 1)
	}
	return s
}

// PyYAML's implicit resolvers for plain scalars (a str that matches one of
// them must be quoted).
var yamlImplicit = regexp.MustCompile(`^(?:` +
	`yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF` +
	`|[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?` +
	`|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)` +
	`|[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+` +
	`|<<|~|null|Null|NULL|` +
	`|[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]` +
	`|[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?(?:[Tt]|[ \t]+)[0-9][0-9]?:[0-9][0-9]:[0-9][0-9](?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?` +
	`|=` +
	`)$`)

func yamlResolvesToStr(s string) bool { return !yamlImplicit.MatchString(s) }

type yamlAnalysis struct {
	empty, multiline                   bool
	allowBlockPlain, allowSingleQuoted bool
}

func isYAMLBreak(r rune) bool { return r == '\n' || r == 0x85 || r == 0x2028 || r == 0x2029 }

func isYAMLSpaceOrBreak(r rune) bool {
	return r == 0 || r == ' ' || r == '\t' || r == '\r' || isYAMLBreak(r)
}

// analyzeYAMLScalar is PyYAML's Emitter.analyze_scalar for block context
// with allow_unicode off.
func analyzeYAMLScalar(s string) yamlAnalysis {
	if s == "" {
		return yamlAnalysis{empty: true, allowBlockPlain: true, allowSingleQuoted: true}
	}
	rs := []rune(s)
	var blockIndicators, lineBreaks, special bool
	var leadingSpace, leadingBreak, trailingSpace, trailingBreak, breakSpace, spaceBreak bool
	if strings.HasPrefix(s, "---") || strings.HasPrefix(s, "...") {
		blockIndicators = true
	}
	preceded := true
	followed := len(rs) == 1 || isYAMLSpaceOrBreak(rs[1])
	prevSpace, prevBreak := false, false
	for i, ch := range rs {
		if i == 0 {
			if strings.ContainsRune("#,[]{}&*!|>'\"%@`", ch) {
				blockIndicators = true
			}
			if (ch == '?' || ch == ':' || ch == '-') && followed {
				blockIndicators = true
			}
		} else {
			if ch == ':' && followed {
				blockIndicators = true
			}
			if ch == '#' && preceded {
				blockIndicators = true
			}
		}
		if isYAMLBreak(ch) {
			lineBreaks = true
		}
		if !(ch == '\n' || (ch >= 0x20 && ch <= 0x7e)) {
			special = true // non-ASCII counts too: allow_unicode is off
		}
		switch {
		case ch == ' ':
			if i == 0 {
				leadingSpace = true
			}
			if i == len(rs)-1 {
				trailingSpace = true
			}
			if prevBreak {
				breakSpace = true
			}
			prevSpace, prevBreak = true, false
		case isYAMLBreak(ch):
			if i == 0 {
				leadingBreak = true
			}
			if i == len(rs)-1 {
				trailingBreak = true
			}
			if prevSpace {
				spaceBreak = true
			}
			prevSpace, prevBreak = false, true
		default:
			prevSpace, prevBreak = false, false
		}
		preceded = isYAMLSpaceOrBreak(ch)
		followed = i+2 >= len(rs) || isYAMLSpaceOrBreak(rs[i+2])
	}
	a := yamlAnalysis{multiline: lineBreaks, allowBlockPlain: true, allowSingleQuoted: true}
	if leadingSpace || leadingBreak || trailingSpace || trailingBreak {
		a.allowBlockPlain = false
	}
	if breakSpace || spaceBreak || special {
		a.allowBlockPlain, a.allowSingleQuoted = false, false
	}
	if lineBreaks || blockIndicators {
		a.allowBlockPlain = false
	}
	return a
}

func (e *yamlEmitter) writePlain(text string, split bool) {
	if text == "" {
		return
	}
	if !e.whitespace {
		e.write(" ")
	}
	e.whitespace, e.indention = false, false
	rs := []rune(text)
	spaces, breaks := false, false
	start := 0
	for end := 0; end <= len(rs); end++ {
		var ch rune = -1
		if end < len(rs) {
			ch = rs[end]
		}
		switch {
		case spaces:
			if ch != ' ' {
				if start+1 == end && e.column > yamlBestWidth && split {
					e.writeIndent()
					e.whitespace, e.indention = false, false
				} else {
					e.write(string(rs[start:end]))
				}
				start = end
			}
		case breaks:
			if ch == -1 || !isYAMLBreak(ch) {
				if rs[start] == '\n' {
					e.writeLineBreak()
				}
				for range rs[start:end] {
					e.writeLineBreak()
				}
				e.writeIndent()
				e.whitespace, e.indention = false, false
				start = end
			}
		default:
			if ch == -1 || ch == ' ' || isYAMLBreak(ch) {
				e.write(string(rs[start:end]))
				start = end
			}
		}
		if ch != -1 {
			spaces, breaks = ch == ' ', isYAMLBreak(ch)
		}
	}
}

func (e *yamlEmitter) writeSingleQuoted(text string, split bool) {
	e.writeIndicator("'", true, false, false)
	rs := []rune(text)
	spaces, breaks := false, false
	start := 0
	for end := 0; end <= len(rs); end++ {
		var ch rune = -1
		if end < len(rs) {
			ch = rs[end]
		}
		switch {
		case spaces:
			if ch != ' ' {
				if start+1 == end && e.column > yamlBestWidth && split && start != 0 && end != len(rs) {
					e.writeIndent()
				} else {
					e.write(string(rs[start:end]))
				}
				start = end
			}
		case breaks:
			if ch == -1 || !isYAMLBreak(ch) {
				if rs[start] == '\n' {
					e.writeLineBreak()
				}
				for range rs[start:end] {
					e.writeLineBreak()
				}
				e.writeIndent()
				start = end
			}
		default:
			if ch == -1 || ch == ' ' || ch == '\'' || isYAMLBreak(ch) {
				if start < end {
					e.write(string(rs[start:end]))
					start = end
				}
			}
		}
		if ch == '\'' {
			e.write("''")
			start = end + 1
		}
		if ch != -1 {
			spaces, breaks = ch == ' ', isYAMLBreak(ch)
		}
	}
	e.writeIndicator("'", false, false, false)
}

var yamlEscapes = map[rune]string{
	0: "0", 0x07: "a", 0x08: "b", 0x09: "t", 0x0a: "n", 0x0b: "v", 0x0c: "f",
	0x0d: "r", 0x1b: "e", '"': "\"", '\\': "\\", 0x85: "N", 0xa0: "_",
	0x2028: "L", 0x2029: "P",
}

func (e *yamlEmitter) writeDoubleQuoted(text string, split bool) {
	e.writeIndicator("\"", true, false, false)
	rs := []rune(text)
	start := 0
	for end := 0; end <= len(rs); end++ {
		var ch rune = -1
		if end < len(rs) {
			ch = rs[end]
		}
		if ch == -1 || ch == '"' || ch == '\\' || ch == 0x85 || ch == 0x2028 || ch == 0x2029 || ch == 0xfeff || ch < 0x20 || ch > 0x7e {
			if start < end {
				e.write(string(rs[start:end]))
				start = end
			}
			if ch != -1 {
				var data string
				if esc, ok := yamlEscapes[ch]; ok {
					data = "\\" + esc
				} else if ch <= 0xff {
					data = fmt.Sprintf("\\x%02X", ch)
				} else if ch <= 0xffff {
					data = fmt.Sprintf("\\u%04X", ch)
				} else {
					data = fmt.Sprintf("\\U%08X", ch)
				}
				e.write(data)
				start = end + 1
			}
		}
		if end > 0 && end < len(rs)-1 && (ch == ' ' || start >= end) && e.column+(end-start) > yamlBestWidth && split {
			data := "\\"
			if start < end {
				data = string(rs[start:end]) + data
				start = end
			}
			e.write(data)
			e.writeIndent()
			e.whitespace, e.indention = false, false
			if rs[start] == ' ' {
				e.write("\\")
			}
		}
	}
	e.writeIndicator("\"", false, false, false)
}
