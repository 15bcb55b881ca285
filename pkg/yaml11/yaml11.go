// Package yaml11 loads YAML the way cloud-init 26.x does: PyYAML's
// yaml.safe_load (SafeLoader, YAML 1.1). It is the one YAML reader of
// cloudroot: cloud.cfg(.d), user-data and vendor-data cloud-config parts,
// network-config, meta-data, `schema`, `query` and `net-convert` all go
// through it.
//
// The contract, rule by rule (PyYAML's resolver.py and constructor.py are
// the specification):
//
//   - Plain scalars are resolved with PyYAML's implicit resolvers:
//     booleans yes/no/true/false/on/off in the three spellings y, Y and YES
//     (lower, capitalised, upper); ints in decimal, octal with a leading 0
//     (0644), hex 0x, binary 0b, base 60 (1:30) with underscores and signs;
//     floats only with a dot (1.5, 1., .5, 1.0e+3, 1:30.5), .inf and .nan;
//     nulls ~, null, Null, NULL and the empty scalar; timestamps
//     (2001-12-14, 2001-12-14t21:59:43.10-05:00). Quoted and block scalars
//     are strings.
//   - Explicit tags SafeLoader knows (!!str !!int !!float !!bool !!null
//     !!binary !!timestamp !!set !!omap !!pairs !!seq !!map) are applied
//     with PyYAML's constructors; any other tag (!!python/object, !foo) is
//     refused with PyYAML's "could not determine a constructor" error. The
//     non-specific tag `!` resolves implicitly, as PyYAML does.
//   - Merge keys `<<` take a mapping or a list of mappings; keys given in
//     the mapping itself win, and of the merged mappings the earlier one
//     wins (PyYAML's flatten_mapping).
//   - A repeated key keeps its first position and its last value (a Python
//     dict), and a Warning names the key and where it was repeated. Keys
//     are equal as Python's are: 1, 1.0 and true are one key.
//   - Aliases are shared, not copied, and a document whose expansion
//     passes Limit nodes is refused (a billion-laughs guard PyYAML lacks);
//     a recursive alias is refused too (cloud-init could not serialise it).
//   - A stream of more than MaxNodes nodes, or nested more than MaxDepth
//     levels, is refused before any node is built (ErrTooManyNodes): a node
//     costs hundreds of bytes once parsed and only two bytes of input
//     ("1,"), so the bytes cap alone does not bound the memory a document
//     takes (docs/security.md, "Memory ceiling"). PyYAML has no such bound.
//   - More than one document in the stream is an error, as safe_load's is.
//
// Parse gives a normalized yaml.v3 node tree: aliases resolved, merges
// applied, duplicates dropped, every scalar tagged with its YAML 1.1 type
// and holding a canonical value (`yes` is !!bool "true", `0644` is !!int
// "420"), so (*yaml.Node).Decode into a typed struct sees what PyYAML
// sees. Load gives plain Go values: map[string]any (keys stringified as
// json.dumps does), []any, string, int, *big.Int, float64, bool, nil,
// time.Time; !!binary gives the decoded bytes as a string, !!set a map
// with nil values, !!omap and !!pairs a list of [key, value] lists.
package yaml11

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"

	"github.com/cloudroot/cloudroot/pkg/internal/yamlscan"
)

// The bounds of one document (docs/security.md, "Memory ceiling", has the
// memory each costs).
const (
	// Limit is the default bound on the number of nodes a document may
	// expand to through aliases: every expanded node is a value of its
	// own once loaded.
	Limit = 1 << 17
	// MaxNodes is the default bound on the nodes written in a stream
	// (scalars, lists, mappings, aliases), counted before any is built.
	MaxNodes = 1 << 16
	// MaxDepth is how deeply lists and mappings may nest.
	MaxDepth = 1000
)

var (
	// ErrTooLarge is wrapped by the error for a document that expands past
	// the node limit.
	ErrTooLarge = errors.New("document expands to too many nodes through aliases")
	// ErrTooManyNodes is wrapped by the error for a stream of more than
	// MaxNodes nodes or nested deeper than MaxDepth.
	ErrTooManyNodes = errors.New("document has too many nodes")
)

// Warning is a problem that does not stop loading: a repeated mapping key.
type Warning struct {
	Source    string // the name given to Parse, e.g. "user-data"
	Key       string // the key as text
	Line      int    // where the repeated key is (1-based)
	Column    int
	FirstLine int // where the key was first given
}

func (w Warning) String() string { return w.Source + ": " + w.Message() }

// Message is the warning without its source name.
func (w Warning) Message() string {
	return fmt.Sprintf("line %d column %d: duplicate key %s (first at line %d); the last value is used, as cloud-init does",
		w.Line, w.Column, strconv.Quote(w.Key), w.FirstLine)
}

// Error is a YAML syntax or construction error with its position.
type Error struct {
	Source string
	Line   int // 1-based; 0 when unknown
	Column int // 1-based; 0 when unknown
	Msg    string
	Err    error // the cause, when there is one (ErrTooLarge)
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.Source != "" {
		b.WriteString(e.Source)
		b.WriteString(": ")
	}
	if e.Line > 0 {
		fmt.Fprintf(&b, "line %d ", e.Line)
		if e.Column > 0 {
			fmt.Fprintf(&b, "column %d", e.Column)
		}
		s := strings.TrimSpace(b.String())
		b.Reset()
		b.WriteString(s)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// Options tune Parse; the zero value gives the defaults.
type Options struct {
	Limit    int // node expansion limit; 0 means Limit
	MaxNodes int // nodes written in the stream; 0 means MaxNodes
	MaxDepth int // nesting of lists and mappings; 0 means MaxDepth
}

// Doc is a parsed, normalized document.
type Doc struct {
	// Root is the top value node (not a DocumentNode); nil for an empty
	// stream or a document that is only a null.
	Root     *yaml.Node
	Warnings []Warning
}

// Parse reads one YAML document with SafeLoader semantics. name labels
// errors and warnings ("user-data", a file path).
func Parse(name string, data []byte) (*Doc, error) {
	return ParseWith(name, data, Options{})
}

var reV3Line = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^yaml: line (\d+): (.*)$`) })

// ParseWith is Parse with options.
func ParseWith(name string, data []byte, o Options) (*Doc, error) {
	limit := o.Limit
	if limit <= 0 {
		limit = Limit
	}
	maxNodes, maxDepth := o.MaxNodes, o.MaxDepth
	if maxNodes <= 0 {
		maxNodes = MaxNodes
	}
	if maxDepth <= 0 {
		maxDepth = MaxDepth
	}
	data = ignoreUnknownDirectives(data)
	if yamlscan.Within(data, maxNodes, maxDepth) {
		// Too few indicators to pass a bound: no count needed.
	} else if _, err := yamlscan.Count(data, maxNodes, maxDepth); err != nil {
		var le *yamlscan.LimitError
		if errors.As(err, &le) {
			return nil, &Error{Source: name, Line: le.Line, Column: le.Column, Err: ErrTooManyNodes,
				Msg: fmt.Sprintf("document %v (cloudroot's bound on one YAML document; PyYAML has none)", le)}
		}
		return nil, &Error{Source: name, Msg: err.Error()}
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return &Doc{}, nil
		}
		return nil, syntaxError(name, err)
	}
	var next yaml.Node
	if err := dec.Decode(&next); err == nil {
		return nil, &Error{Source: name, Line: next.Line, Column: next.Column,
			Msg: "expected a single document in the stream, but found another document"}
	} else if !errors.Is(err, io.EOF) {
		return nil, syntaxError(name, err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return &Doc{}, nil
	}
	n := &normalizer{name: name, limit: limit, memo: map[*yaml.Node]*yaml.Node{}, size: map[*yaml.Node]int{},
		src: data}
	if err := n.anchors(doc.Content[0]); err != nil {
		return nil, err
	}
	root, err := n.node(doc.Content[0], 0)
	if err != nil {
		return nil, err
	}
	if _, err := n.expanded(root); err != nil {
		return nil, err
	}
	d := &Doc{Root: root, Warnings: n.warnings}
	if root.Kind == yaml.ScalarNode && root.Tag == tagNull {
		d.Root = nil
	}
	return d, nil
}

// ignoreUnknownDirectives turns the unknown %directives of the prologue
// (before the "---" that must follow them) into comments: PyYAML ignores them, yaml.v3 would
// refuse the document. Positions do not move.
func ignoreUnknownDirectives(data []byte) []byte {
	var out []byte
	for off := 0; off < len(data); {
		end := bytes.IndexByte(data[off:], '\n')
		if end < 0 {
			end = len(data)
		} else {
			end += off
		}
		line := data[off:end]
		switch {
		case len(bytes.TrimSpace(line)) == 0 || line[0] == '#':
		case line[0] == '%':
			name, _, _ := bytes.Cut(line[1:], []byte(" "))
			name = bytes.TrimRight(name, "\r\t")
			if string(name) != "YAML" && string(name) != "TAG" {
				if out == nil {
					out = bytes.Clone(data)
				}
				out[off] = '#'
			}
		default:
			// Directives need a "---" after them; without one the
			// document is an error either way, so leave it to yaml.v3.
			if out == nil || !bytes.HasPrefix(line, []byte("---")) {
				return data
			}
			return out
		}
		off = end + 1
	}
	return data
}

func syntaxError(name string, err error) error {
	msg := err.Error()
	if m := reV3Line().FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		return &Error{Source: name, Line: line, Msg: m[2]}
	}
	return &Error{Source: name, Msg: strings.TrimPrefix(msg, "yaml: ")}
}

// Load parses a document into plain Go values (see the package comment).
// A document that is empty or only a null gives nil.
func Load(name string, data []byte) (any, []Warning, error) {
	d, err := Parse(name, data)
	if err != nil {
		return nil, nil, err
	}
	if d.Root == nil {
		return nil, d.Warnings, nil
	}
	return Value(d.Root), d.Warnings, nil
}

// LoadMap is Load for documents whose top level must be a mapping, as
// cloud-init's util.load_yaml requires; an empty document gives an empty
// map.
func LoadMap(name string, data []byte) (map[string]any, []Warning, error) {
	v, w, err := Load(name, data)
	if err != nil {
		return nil, nil, err
	}
	if v == nil {
		return map[string]any{}, w, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, w, &Error{Source: name, Msg: fmt.Sprintf("expected a mapping at the top level, got %s", KindOf(v))}
	}
	return m, w, nil
}

// Unmarshal parses data and decodes it into out (a pointer, as for
// yaml.Unmarshal) with YAML 1.1 semantics. An empty document leaves out
// untouched.
func Unmarshal(name string, data []byte, out any) ([]Warning, error) {
	d, err := Parse(name, data)
	if err != nil {
		return nil, err
	}
	if d.Root == nil {
		return d.Warnings, nil
	}
	if err := d.Root.Decode(out); err != nil {
		return d.Warnings, &Error{Source: name, Msg: strings.TrimPrefix(err.Error(), "yaml: ")}
	}
	return d.Warnings, nil
}

// KindOf names a loaded value's type the way error messages do ("a list").
func KindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "a mapping"
	case []any:
		return "a list"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case float64:
		return "a float"
	}
	if isInt(v) {
		return "an integer"
	}
	return fmt.Sprintf("%T", v)
}
