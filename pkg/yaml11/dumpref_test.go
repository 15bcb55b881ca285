package yaml11

import (
	"fmt"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// refDump is Dump as it was before it streamed.
func refDump(v any, o DumpOptions) string {
	best := o.Indent
	if best < 2 || best > 9 {
		best = 2
	}
	e := &refEmitter{indent: -1, best: best, whitespace: true, indention: true}
	if o.Explicit {
		e.writeIndicator("---", true, false, false)
	}
	e.node(v, false, false)
	if o.Explicit {
		e.writeIndent()
		e.writeIndicator("...", true, false, false)
	}
	e.writeIndent()
	return e.buf.String()
}

// refEmitter is the emitter before DumpTo (strings copied into []rune,
// output built in a strings.Builder), kept to check DumpTo against it.
// It follows PyYAML's emitter closely enough for JSON-shaped data:
// the column and whitespace bookkeeping decides where lines fold.
type refEmitter struct {
	buf        strings.Builder
	indent     int // -1 is PyYAML's None
	best       int
	indents    []int
	column     int
	whitespace bool
	indention  bool
	flowLevel  int
}

func (e *refEmitter) increaseIndent(flow, indentless bool) {
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

func (e *refEmitter) popIndent() {
	e.indent = e.indents[len(e.indents)-1]
	e.indents = e.indents[:len(e.indents)-1]
}

func (e *refEmitter) write(s string) {
	e.buf.WriteString(s)
	e.column += utf8.RuneCountInString(s)
}

func (e *refEmitter) writeIndicator(ind string, needWhitespace, whitespace, indention bool) {
	if !e.whitespace && needWhitespace {
		ind = " " + ind
	}
	e.write(ind)
	e.whitespace = whitespace
	e.indention = e.indention && indention
}

func (e *refEmitter) writeLineBreak() {
	e.buf.WriteByte('\n')
	e.whitespace = true
	e.indention = true
	e.column = 0
}

func (e *refEmitter) writeIndent() {
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
func (e *refEmitter) node(v any, mapping, simpleKey bool) {
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
			if a := refAnalyze(k); utf8.RuneCountInString(k)+len("!!str") < 128 && !a.empty && !a.multiline {
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

func (e *refEmitter) emptyCollection(open, closing string) {
	e.writeIndicator(open, true, true, false)
	e.flowLevel++
	e.increaseIndent(true, false)
	e.popIndent()
	e.flowLevel--
	e.writeIndicator(closing, false, false, false)
}

func (e *refEmitter) scalar(v any, simpleKey bool) {
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
		a := refAnalyze(v)
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

// refAnalyze is PyYAML's Emitter.analyze_scalar for block context
// with allow_unicode off.
func refAnalyze(s string) yamlAnalysis {
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

func (e *refEmitter) writePlain(text string, split bool) {
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

func (e *refEmitter) writeSingleQuoted(text string, split bool) {
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

func (e *refEmitter) writeDoubleQuoted(text string, split bool) {
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
