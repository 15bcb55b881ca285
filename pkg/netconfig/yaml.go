package netconfig

// YAML in and out the way cloud-init sees it.
//
// Input: pkg/yaml11 reads the document as cloud-init does (PyYAML's
// SafeLoader: yes/no/on/off are booleans, 0755 is octal, an unquoted
// all-digit MAC such as 52:54:00:12:34:56 is a base-60 integer), so
// `dhcp4: yes` means what it means to cloud-init. Mappings keep their key
// order (*omap): cloud-init walks v2 sections in document order.
//
// Output: dumpYAML writes block YAML byte-for-byte like PyYAML's
// yaml.dump(default_flow_style=False, indent=4) that cloud-init's
// safeyaml.dumps uses: keys sorted, sequences not indented under their key,
// "-   " before a mapping inside a sequence, and strings quoted exactly when
// a YAML 1.1 reader would otherwise take them for something else.

import (
	"bytes"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/cloudroot/cloudroot/pkg/internal/pyval"
	"github.com/cloudroot/cloudroot/pkg/yaml11"
)

// omap is a YAML mapping that remembers its key order.
type omap struct {
	keys []string
	m    map[string]any
}

func newOmap() *omap { return &omap{m: map[string]any{}} }

func (o *omap) set(k string, v any) {
	if _, ok := o.m[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.m[k] = v
}

func (o *omap) get(k string) (any, bool) {
	if o == nil {
		return nil, false
	}
	v, ok := o.m[k]
	return v, ok
}

func (o *omap) has(k string) bool { _, ok := o.get(k); return ok }

// decodeYAML parses one YAML document the way cloud-init does
// (pkg/yaml11) into *omap, []any and scalars.
func decodeYAML(data []byte) (any, error) {
	d, err := yaml11.Parse("network-config", data)
	if err != nil {
		return nil, err
	}
	return fromNode(d.Root), nil
}

// fromNode converts yaml11's normalized tree, keeping mapping key order.
func fromNode(n *yaml.Node) any {
	if n == nil {
		return nil
	}
	switch n.Kind {
	case yaml.MappingNode:
		o := newOmap()
		for i := 0; i+1 < len(n.Content); i += 2 {
			o.set(scalarString(yaml11.Scalar(n.Content[i])), fromNode(n.Content[i+1]))
		}
		return o
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			out = append(out, fromNode(c))
		}
		return out
	}
	return yaml11.Scalar(n)
}

// scalarString is a decoded scalar as netconfig writes it in keys, values
// and messages. Strings, booleans and integers are Python's str()
// (pyval.Str, the one str() in the tree); two cases are deliberately not
// str(), as netconfig has always written them (its goldens unchanged): a
// null is "" (an absent value, where str() gives "None") and a float is
// Go's shortest form ("1" for 1.0, where str() gives "1.0"). Anything
// else (a collection, which only a message shows) is Go's fmt form.
func scalarString(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case string, bool, int, int64, uint64:
		return pyval.Str(x)
	}
	return fmt.Sprint(v)
}

// --- output ---

// dumpYAML renders v like PyYAML's safe_dump(indent=4, default_flow_style=False).
func dumpYAML(v any) string {
	var b bytes.Buffer
	emitNode(&b, v, 0, ctxTop)
	return b.String()
}

type emitCtx int

const (
	ctxTop emitCtx = iota
	ctxMapValue
	ctxSeqItem
)

func mapKeys(v any) ([]string, func(string) any, bool) {
	switch m := v.(type) {
	case *omap:
		ks := append([]string(nil), m.keys...)
		sort.Strings(ks)
		return ks, func(k string) any { return m.m[k] }, true
	case map[string]any:
		ks := make([]string, 0, len(m))
		for k := range m {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		return ks, func(k string) any { return m[k] }, true
	}
	return nil, nil, false
}

func seqItems(v any) ([]any, bool) {
	switch s := v.(type) {
	case []any:
		return s, true
	case []string:
		out := make([]any, len(s))
		for i, x := range s {
			out[i] = x
		}
		return out, true
	}
	return nil, false
}

// emitNode writes v whose first line starts at the current position; indent
// is the column of nested block content.
func emitNode(b *bytes.Buffer, v any, indent int, ctx emitCtx) {
	pad := strings.Repeat(" ", indent)
	if keys, get, ok := mapKeys(v); ok {
		if len(keys) == 0 {
			if ctx == ctxMapValue {
				b.WriteString(" ")
			}
			b.WriteString("{}\n")
			return
		}
		if ctx == ctxMapValue {
			b.WriteString("\n")
		}
		for i, k := range keys {
			if i > 0 || ctx != ctxSeqItem {
				b.WriteString(pad)
			}
			b.WriteString(quoteScalar(k))
			b.WriteString(":")
			emitNode(b, get(k), indent+4, ctxMapValue)
		}
		return
	}
	if items, ok := seqItems(v); ok {
		if len(items) == 0 {
			if ctx == ctxMapValue {
				b.WriteString(" ")
			}
			b.WriteString("[]\n")
			return
		}
		// A sequence that is a mapping value sits at the key's column.
		seqIndent := indent
		if ctx == ctxMapValue {
			seqIndent = indent - 4
			b.WriteString("\n")
		}
		spad := strings.Repeat(" ", seqIndent)
		for i, it := range items {
			if i > 0 || ctx != ctxSeqItem {
				b.WriteString(spad)
			}
			b.WriteString("-")
			_, _, isMap := mapKeys(it)
			_, isSeq := seqItems(it)
			if (isMap || isSeq) && !isEmptyCollection(it) {
				b.WriteString("   ")
				emitNode(b, it, seqIndent+4, ctxSeqItem)
				continue
			}
			b.WriteString(" ")
			emitNode(b, it, seqIndent+4, ctxTop)
		}
		return
	}
	if ctx == ctxMapValue {
		b.WriteString(" ")
	}
	b.WriteString(scalarYAML(v))
	b.WriteString("\n")
}

func isEmptyCollection(v any) bool {
	if keys, _, ok := mapKeys(v); ok {
		return len(keys) == 0
	}
	if s, ok := seqItems(v); ok {
		return len(s) == 0
	}
	return false
}

func scalarYAML(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		if x {
			return "true"
		}
		return "false"
	case int:
		return strconv.Itoa(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		switch {
		case math.IsNaN(x):
			return ".nan"
		case math.IsInf(x, 1):
			return ".inf"
		case math.IsInf(x, -1):
			return "-.inf"
		}
		s := strconv.FormatFloat(x, 'g', -1, 64)
		if !strings.ContainsAny(s, ".eEn") {
			s += ".0"
		}
		return s
	case string:
		return quoteScalar(x)
	}
	return quoteScalar(fmt.Sprint(v))
}

// quoteScalar returns s plain when PyYAML would write it plain in block
// context, otherwise single-quoted (or double-quoted for unprintables).
func quoteScalar(s string) string {
	if s == "" {
		return "''"
	}
	if needsDouble(s) {
		return strconv.Quote(s)
	}
	if plainAllowed(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

func needsDouble(s string) bool {
	if !utf8.ValidString(s) {
		return true
	}
	for _, r := range s {
		if r == '\n' || r == '\t' {
			return true
		}
		if r < 0x20 || r == 0x7f || r == 0xfeff || (r >= 0x80 && r < 0xa0) {
			return true
		}
	}
	return false
}

func plainAllowed(s string) bool {
	if yaml11.PlainTag(s) != "!!str" {
		return false
	}
	if s[0] == ' ' || s[len(s)-1] == ' ' {
		return false
	}
	if strings.HasPrefix(s, "---") || strings.HasPrefix(s, "...") {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		followedBySpace := i+1 == len(s) || s[i+1] == ' '
		precededBySpace := i > 0 && s[i-1] == ' '
		if i == 0 {
			switch c {
			case '#', ',', '[', ']', '{', '}', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`':
				return false
			case '?', ':', '-':
				if followedBySpace {
					return false
				}
			}
			continue
		}
		switch c {
		case ':':
			if followedBySpace {
				return false
			}
		case '#':
			if precededBySpace {
				return false
			}
		}
	}
	return true
}
