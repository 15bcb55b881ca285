package yaml11

// Dump writes YAML the way PyYAML's emitter does for JSON-shaped data, so
// that files cloud-init writes with yaml.dump / safeyaml.dumps come out
// byte for byte the same: block style, sorted keys, width 80, sequences
// not indented under a mapping key, strings quoted exactly when a YAML 1.1
// reader would otherwise take them for something else.

import (
	"bufio"
	"fmt"
	"io"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// DumpOptions are yaml.dump's keyword arguments that cloud-init varies.
type DumpOptions struct {
	// Indent is yaml.dump's indent (PyYAML's default is 2; safeyaml.dumps
	// uses 4). Zero means 2.
	Indent int
	// Explicit writes "---" before and "..." after the document
	// (explicit_start, explicit_end), as safeyaml.dumps does.
	Explicit bool
}

// Ordered is a mapping that knows its keys (Dump sorts them anyway).
type Ordered interface {
	Keys() []string
	Get(key string) any
}

// Number is a number kept as its source text (encoding/json's Number).
type Number interface {
	String() string
	Float64() (float64, error)
}

// SafeDumpOptions are cloud-init's safeyaml.dumps: indent 4, explicit ---
// and ...
var SafeDumpOptions = DumpOptions{Indent: 4, Explicit: true}

// SafeDumps is cloud-init's safeyaml.dumps.
func SafeDumps(v any) string { return Dump(v, SafeDumpOptions) }

// Dump renders v (maps, []any, strings, booleans, nil, integers, floats)
// as PyYAML's yaml.dump(v, default_flow_style=False) with o.
func Dump(v any, o DumpOptions) string {
	var b strings.Builder
	_ = DumpTo(&b, v, o) // a strings.Builder does not fail
	return b.String()
}

// DumpTo is Dump writing into w as it goes: a large document (a
// cloud-config.txt of a big user-data) is never built in memory, and no
// string of v is copied on the way (strings are walked by byte offset).
// It returns w's first error.
func DumpTo(w io.Writer, v any, o DumpOptions) error {
	best := o.Indent
	if best < 2 || best > 9 {
		best = 2
	}
	bw := bufio.NewWriterSize(w, 32<<10)
	e := &yamlEmitter{w: bw, indent: -1, best: best, whitespace: true, indention: true}
	if o.Explicit {
		e.writeIndicator("---", true, false, false)
	}
	e.node(v, false, false)
	if o.Explicit {
		e.writeIndent()
		e.writeIndicator("...", true, false, false)
	}
	e.writeIndent()
	if e.err != nil {
		return e.err
	}
	return bw.Flush()
}

// yamlEmitter follows PyYAML's emitter closely enough for JSON-shaped data:
// the column and whitespace bookkeeping decides where lines fold.
type yamlEmitter struct {
	w          *bufio.Writer
	err        error // w's first error; later writes are dropped
	indent     int   // -1 is PyYAML's None
	best       int
	indents    []int
	column     int
	whitespace bool
	indention  bool
	flowLevel  int
}

const yamlBestWidth = 80

func (e *yamlEmitter) increaseIndent(flow, indentless bool) {
	e.indents = append(e.indents, e.indent)
	switch {
	case e.indent < 0 && flow:
		e.indent = e.best
	case e.indent < 0:
		e.indent = 0
	case !indentless:
		e.indent += e.best
	}
}

func (e *yamlEmitter) popIndent() {
	e.indent = e.indents[len(e.indents)-1]
	e.indents = e.indents[:len(e.indents)-1]
}

func (e *yamlEmitter) write(s string) {
	if e.err == nil {
		_, e.err = e.w.WriteString(s)
	}
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
	if e.err == nil {
		e.err = e.w.WriteByte('\n')
	}
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
	var keys []string
	var get func(string) any
	switch m := v.(type) {
	case map[string]any:
		get = func(k string) any { return m[k] }
		for k := range m {
			keys = append(keys, k)
		}
	case Ordered:
		get = m.Get
		keys = append(keys, m.Keys()...)
	}
	switch v := v.(type) {
	case map[string]any, Ordered:
		if len(keys) == 0 {
			e.emptyCollection("{", "}")
			return
		}
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
			e.node(get(k), true, false)
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
	case int:
		text = strconv.Itoa(v)
	case int64:
		text = strconv.FormatInt(v, 10)
	case uint64:
		text = strconv.FormatUint(v, 10)
	case float64:
		text = yamlFloat(PyFloatRepr(v))
	case *big.Int:
		text = v.String()
	case Number:
		s := v.String()
		if !strings.ContainsAny(s, ".eE") {
			if i, ok := new(big.Int).SetString(s, 10); ok {
				text = i.String()
				break
			}
			text = s
			break
		}
		f, _ := v.Float64()
		text = yamlFloat(PyFloatRepr(f))
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

// yamlResolvesToStr reports whether a plain scalar s is read back as a str:
// no implicit resolver of PyYAML matches it, whatever its first character
// (a str that one matches must be quoted).
func yamlResolvesToStr(s string) bool {
	return !(implicitBool(s) || implicitFloat(s) || implicitInt(s) || s == "<<" || implicitNull(s) || implicitTimestamp(s) || s == "=")
}

type yamlAnalysis struct {
	empty, multiline                   bool
	allowBlockPlain, allowSingleQuoted bool
}

func isYAMLBreak(r rune) bool { return r == '\n' || r == 0x85 || r == 0x2028 || r == 0x2029 }

func isYAMLSpaceOrBreak(r rune) bool {
	return r == 0 || r == ' ' || r == '\t' || r == '\r' || isYAMLBreak(r)
}

// runeAt decodes the rune of s at byte offset i, -1 past the end.
func runeAt(s string, i int) (rune, int) {
	if i >= len(s) {
		return -1, 0
	}
	return utf8.DecodeRuneInString(s[i:])
}

// analyzeYAMLScalar is PyYAML's Emitter.analyze_scalar for block context
// with allow_unicode off. It walks s by byte offset: a large scalar is not
// copied.
func analyzeYAMLScalar(s string) yamlAnalysis {
	if s == "" {
		return yamlAnalysis{empty: true, allowBlockPlain: true, allowSingleQuoted: true}
	}
	var blockIndicators, lineBreaks, special bool
	var leadingSpace, leadingBreak, trailingSpace, trailingBreak, breakSpace, spaceBreak bool
	if strings.HasPrefix(s, "---") || strings.HasPrefix(s, "...") {
		blockIndicators = true
	}
	preceded := true
	ch, size := runeAt(s, 0)
	next, nsize := runeAt(s, size)
	followed := next == -1 || isYAMLSpaceOrBreak(next)
	prevSpace, prevBreak := false, false
	for i := 0; ch != -1; {
		last := next == -1
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
			if last {
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
			if last {
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
		// followed, for the next rune: the one after it is the end or a
		// space or break.
		j := i + size
		after, asize := runeAt(s, j+nsize)
		followed = next == -1 || after == -1 || isYAMLSpaceOrBreak(after)
		i, ch, size, next, nsize = j, next, nsize, after, asize
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
	spaces, breaks := false, false
	start := 0
	for end := 0; ; {
		ch, size := runeAt(text, end)
		switch {
		case spaces:
			if ch != ' ' {
				if start+1 == end && e.column > yamlBestWidth && split {
					e.writeIndent()
					e.whitespace, e.indention = false, false
				} else {
					e.write(text[start:end])
				}
				start = end
			}
		case breaks:
			if ch == -1 || !isYAMLBreak(ch) {
				if text[start] == '\n' {
					e.writeLineBreak()
				}
				for range utf8.RuneCountInString(text[start:end]) {
					e.writeLineBreak()
				}
				e.writeIndent()
				e.whitespace, e.indention = false, false
				start = end
			}
		default:
			if ch == -1 || ch == ' ' || isYAMLBreak(ch) {
				e.write(text[start:end])
				start = end
			}
		}
		if ch == -1 {
			return
		}
		spaces, breaks = ch == ' ', isYAMLBreak(ch)
		end += size
	}
}

func (e *yamlEmitter) writeSingleQuoted(text string, split bool) {
	e.writeIndicator("'", true, false, false)
	spaces, breaks := false, false
	start := 0
	for end := 0; ; {
		ch, size := runeAt(text, end)
		switch {
		case spaces:
			if ch != ' ' {
				if start+1 == end && e.column > yamlBestWidth && split && start != 0 && end != len(text) {
					e.writeIndent()
				} else {
					e.write(text[start:end])
				}
				start = end
			}
		case breaks:
			if ch == -1 || !isYAMLBreak(ch) {
				if text[start] == '\n' {
					e.writeLineBreak()
				}
				for range utf8.RuneCountInString(text[start:end]) {
					e.writeLineBreak()
				}
				e.writeIndent()
				start = end
			}
		default:
			if ch == -1 || ch == ' ' || ch == '\'' || isYAMLBreak(ch) {
				if start < end {
					e.write(text[start:end])
					start = end
				}
			}
		}
		if ch == '\'' {
			e.write("''")
			start = end + 1
		}
		if ch == -1 {
			break
		}
		spaces, breaks = ch == ' ', isYAMLBreak(ch)
		end += size
	}
	e.writeIndicator("'", false, false, false)
}

var yamlEscapes = sync.OnceValue(func() map[rune]string {
	return map[rune]string{
		0: "0", 0x07: "a", 0x08: "b", 0x09: "t", 0x0a: "n", 0x0b: "v", 0x0c: "f",
		0x0d: "r", 0x1b: "e", '"': "\"", '\\': "\\", 0x85: "N", 0xa0: "_",
		0x2028: "L", 0x2029: "P",
	}
})

func (e *yamlEmitter) writeDoubleQuoted(text string, split bool) {
	e.writeIndicator("\"", true, false, false)
	// pend is the number of runes in text[start:end], or -1 when start is
	// just past the rune at end (it was written escaped).
	start, pend := 0, 0
	for end := 0; ; {
		ch, size := runeAt(text, end)
		if ch == -1 || ch == '"' || ch == '\\' || ch == 0x85 || ch == 0x2028 || ch == 0x2029 || ch == 0xfeff || ch < 0x20 || ch > 0x7e {
			if start < end {
				e.write(text[start:end])
				start, pend = end, 0
			}
			if ch != -1 {
				var data string
				if esc, ok := yamlEscapes()[ch]; ok {
					data = "\\" + esc
				} else if ch <= 0xff {
					data = fmt.Sprintf("\\x%02X", ch)
				} else if ch <= 0xffff {
					data = fmt.Sprintf("\\u%04X", ch)
				} else {
					data = fmt.Sprintf("\\U%08X", ch)
				}
				e.write(data)
				start, pend = end+size, -1
			}
		}
		if end > 0 && ch != -1 && end+size < len(text) && (ch == ' ' || start >= end) && e.column+pend > yamlBestWidth && split {
			data := "\\"
			if start < end {
				data = text[start:end] + data
				start, pend = end, 0
			}
			e.write(data)
			e.writeIndent()
			e.whitespace, e.indention = false, false
			if text[start] == ' ' {
				e.write("\\")
			}
		}
		if ch == -1 {
			break
		}
		if start <= end {
			pend++
		} else {
			pend = 0
		}
		end += size
	}
	e.writeIndicator("\"", false, false, false)
}
