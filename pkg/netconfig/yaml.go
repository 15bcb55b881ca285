package netconfig

// YAML in and out the way cloud-init sees it.
//
// Input: gopkg.in/yaml.v3 parses the document, then plain scalars are
// resolved with YAML 1.1 rules (PyYAML's SafeLoader: yes/no/on/off are
// booleans, 0755 is octal) so `dhcp4: yes` means what it means to cloud-init.
// Mappings keep their key order (*omap): cloud-init walks v2 sections in
// document order.
//
// Output: dumpYAML writes block YAML byte-for-byte like PyYAML's
// yaml.dump(default_flow_style=False, indent=4) that cloud-init's
// safeyaml.dumps uses: keys sorted, sequences not indented under their key,
// "-   " before a mapping inside a sequence, and strings quoted exactly when
// a YAML 1.1 reader would otherwise take them for something else.

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
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

// maxYAMLNodes bounds alias expansion ("billion laughs").
const maxYAMLNodes = 200000

var errYAMLTooLarge = errors.New("yaml document expands to too many nodes")

// decodeYAML parses one YAML document into *omap, []any and scalars.
func decodeYAML(data []byte) (any, error) {
	var n yaml.Node
	if err := yaml.Unmarshal(data, &n); err != nil {
		return nil, err
	}
	if n.Kind == 0 {
		return nil, nil
	}
	budget := maxYAMLNodes
	return convertNode(&n, &budget, 0)
}

func convertNode(n *yaml.Node, budget *int, depth int) (any, error) {
	*budget--
	if *budget < 0 || depth > 200 {
		return nil, errYAMLTooLarge
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return convertNode(n.Content[0], budget, depth+1)
	case yaml.AliasNode:
		if n.Alias == nil {
			return nil, nil
		}
		return convertNode(n.Alias, budget, depth+1)
	case yaml.MappingNode:
		o := newOmap()
		for i := 0; i+1 < len(n.Content); i += 2 {
			kn, vn := n.Content[i], n.Content[i+1]
			if kn.Kind == yaml.ScalarNode && kn.Tag == "!!merge" {
				// "<<: *anchor" merges the anchored mapping's keys.
				v, err := convertNode(vn, budget, depth+1)
				if err != nil {
					return nil, err
				}
				if mo, ok := v.(*omap); ok {
					for _, k := range mo.keys {
						if !o.has(k) {
							o.set(k, mo.m[k])
						}
					}
				}
				continue
			}
			k, err := convertNode(kn, budget, depth+1)
			if err != nil {
				return nil, err
			}
			v, err := convertNode(vn, budget, depth+1)
			if err != nil {
				return nil, err
			}
			o.set(scalarString(k), v)
		}
		return o, nil
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			v, err := convertNode(c, budget, depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case yaml.ScalarNode:
		if n.Style&(yaml.SingleQuotedStyle|yaml.DoubleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
			return n.Value, nil
		}
		switch n.Tag {
		case "!!str", "!!binary":
			if n.Tag == "!!str" && n.Style&yaml.TaggedStyle != 0 {
				return n.Value, nil
			}
		}
		return resolvePlain(n.Value), nil
	}
	return nil, nil
}

// YAML 1.1 implicit resolvers, as PyYAML's.
var (
	reBool  = regexp.MustCompile(`^(?:yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$`)
	reFloat = regexp.MustCompile(`^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$`)
	reInt   = regexp.MustCompile(`^(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$`)
	reNull  = regexp.MustCompile(`^(?:~|null|Null|NULL|)$`)
	reTime  = regexp.MustCompile(`^(?:[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]|[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?(?:[Tt]|[ \t]+)[0-9][0-9]?:[0-9][0-9]:[0-9][0-9](?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?)$`)
	reSexa  = regexp.MustCompile(`:`)
)

// resolvePlain turns a plain scalar into bool, int, float64, nil or string.
// Sexagesimal numbers (1:30) and timestamps stay strings: a MAC address
// written without quotes is far more likely than a base-60 number.
func resolvePlain(s string) any {
	switch {
	case reNull.MatchString(s):
		return nil
	case reBool.MatchString(s):
		switch strings.ToLower(s) {
		case "yes", "true", "on":
			return true
		}
		return false
	case reInt.MatchString(s) && !reSexa.MatchString(s):
		t := strings.ReplaceAll(s, "_", "")
		neg := false
		if t[0] == '-' || t[0] == '+' {
			neg = t[0] == '-'
			t = t[1:]
		}
		var v int64
		var err error
		switch {
		case strings.HasPrefix(t, "0b"):
			v, err = strconv.ParseInt(t[2:], 2, 64)
		case strings.HasPrefix(t, "0x"):
			v, err = strconv.ParseInt(t[2:], 16, 64)
		case len(t) > 1 && t[0] == '0':
			v, err = strconv.ParseInt(t[1:], 8, 64)
		default:
			v, err = strconv.ParseInt(t, 10, 64)
		}
		if err != nil {
			return s
		}
		if neg {
			v = -v
		}
		return int(v)
	case reFloat.MatchString(s) && !reSexa.MatchString(s):
		t := strings.ReplaceAll(s, "_", "")
		switch strings.ToLower(strings.TrimLeft(t, "+-")) {
		case ".inf":
			if strings.HasPrefix(t, "-") {
				return math.Inf(-1)
			}
			return math.Inf(1)
		case ".nan":
			return math.NaN()
		}
		f, err := strconv.ParseFloat(t, 64)
		if err != nil {
			return s
		}
		return f
	}
	return s
}

// scalarString renders a decoded scalar the way Python's str() would, for
// use as a key or a config value.
func scalarString(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case bool:
		if x {
			return "True"
		}
		return "False"
	case int:
		return strconv.Itoa(x)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
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
	if reBool.MatchString(s) || reNull.MatchString(s) || reInt.MatchString(s) ||
		reFloat.MatchString(s) || reTime.MatchString(s) || s == "<<" || s == "=" {
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
