package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Partial compiles. Compiling the whole cloud-config schema (110 top-level
// properties) was most of a `cloudroot schema` process: ~10 ms of CPU and
// 3.3 MB of fresh heap (every page of which is a fault in a new process),
// to check documents that use a few keys. The root of the schema is
// `type: object`, `properties`, `additionalProperties: false` and
// `$defs`, so a document is checked exactly as by the whole schema by a
// schema with the same root keywords, the same `$defs` and only the
// properties the document has: a key outside the schema is outside both
// and rejected the same way, the locations of every subschema are
// unchanged, and findings carry instance locations only. Partial schemas
// are compiled once per key set; once they would have compiled more
// properties than the whole schema has, the whole one is compiled instead
// (the boot validates a few documents; `schema` one).

// schemaParts is the embedded schema split for partial compiles: the root's
// keywords other than properties, and each property's raw JSON.
type schemaParts struct {
	root  map[string]json.RawMessage
	props map[string]json.RawMessage
}

var splitSchema = sync.OnceValues(func() (*schemaParts, error) {
	root, err := jsonMembers(schemaJSON)
	if err != nil {
		return nil, fmt.Errorf("schema: split embedded schema: %w", err)
	}
	props, err := jsonMembers(root["properties"])
	if err != nil {
		return nil, fmt.Errorf("schema: split embedded schema's properties: %w", err)
	}
	delete(root, "properties")
	return &schemaParts{root: root, props: props}, nil
})

// jsonMembers splits the JSON object b into its members' raw values,
// which share b's bytes (json.Unmarshal into a map of RawMessage copies
// each value: the schema twice over, in fresh heap). b is the embedded
// schema or a part of it: valid JSON (TestEmbeddedSchemasValid), so the
// scan only finds where values end; a malformed b is an error, never a
// panic.
func jsonMembers(b []byte) (map[string]json.RawMessage, error) {
	ws := func(i int) int {
		for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
			i++
		}
		return i
	}
	i := ws(0)
	if i >= len(b) || b[i] != '{' {
		return nil, errors.New("not a JSON object")
	}
	out := map[string]json.RawMessage{}
	i = ws(i + 1)
	if i < len(b) && b[i] == '}' {
		return out, nil
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return nil, fmt.Errorf("offset %d: want a member name", i)
		}
		end := jsonValueEnd(b, i)
		if end < 0 {
			return nil, fmt.Errorf("offset %d: unterminated name", i)
		}
		var key string
		if err := json.Unmarshal(b[i:end], &key); err != nil {
			return nil, fmt.Errorf("offset %d: %w", i, err)
		}
		i = ws(end)
		if i >= len(b) || b[i] != ':' {
			return nil, fmt.Errorf("offset %d: want ':'", i)
		}
		i = ws(i + 1)
		end = jsonValueEnd(b, i)
		if end < 0 {
			return nil, fmt.Errorf("offset %d: unterminated value", i)
		}
		out[key] = json.RawMessage(b[i:end:end])
		i = ws(end)
		switch {
		case i < len(b) && b[i] == ',':
			i = ws(i + 1)
		case i < len(b) && b[i] == '}':
			return out, nil
		default:
			return nil, fmt.Errorf("offset %d: want ',' or '}'", i)
		}
	}
}

// jsonValueEnd returns where the JSON value starting at b[i] ends, or -1
// when it does not.
func jsonValueEnd(b []byte, i int) int {
	depth := 0
	for j := i; j < len(b); j++ {
		switch c := b[j]; c {
		case '"':
			for j++; j < len(b) && b[j] != '"'; j++ {
				if b[j] == '\\' {
					j++
				}
			}
			if j >= len(b) {
				return -1
			}
			if depth == 0 {
				return j + 1
			}
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 { // the end of the enclosing object ends a scalar
				if j == i {
					return -1
				}
				return j
			}
			depth--
			if depth == 0 {
				return j + 1
			}
		case ',', ' ', '\t', '\n', '\r':
			if depth == 0 {
				if j == i {
					return -1
				}
				return j
			}
		}
	}
	if depth == 0 && len(b) > i {
		return len(b) // a scalar at the end
	}
	return -1
}

// partialCache holds the partial schemas compiled in this process, by key
// set, and how many properties they compiled in all.
type partialCache struct {
	mu       sync.Mutex
	byKeys   map[string]*jsonschema.Schema
	compiled int
}

var partials = &partialCache{byKeys: map[string]*jsonschema.Schema{}}

// schemaFor returns a compiled schema that checks cfg as the whole schema
// does: a partial one of cfg's known top-level keys, or the whole one.
func schemaFor(cfg map[string]any) (*jsonschema.Schema, error) {
	parts, err := splitSchema()
	if err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(cfg))
	for k := range cfg {
		if _, ok := parts.props[k]; ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	id := strings.Join(keys, "\x00")
	partials.mu.Lock()
	defer partials.mu.Unlock()
	if s, ok := partials.byKeys[id]; ok {
		return s, nil
	}
	if partials.compiled+len(keys) > len(parts.props) {
		return compiled()
	}
	s, err := compilePartial(parts, keys, true)
	if err != nil {
		return nil, err
	}
	partials.byKeys[id] = s
	partials.compiled += len(keys)
	return s, nil
}

// compilePartial compiles the schema with only the named properties.
func compilePartial(parts *schemaParts, keys []string, trusted bool) (*jsonschema.Schema, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	names := make([]string, 0, len(parts.root))
	for k := range parts.root {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		writeMember(&b, k, parts.root[k])
		b.WriteByte(',')
	}
	b.WriteString(`"properties":{`)
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		writeMember(&b, k, parts.props[k])
	}
	b.WriteString("}}")
	return compileDoc(&b, trusted)
}

func writeMember(b *bytes.Buffer, k string, v json.RawMessage) {
	kb, _ := json.Marshal(k) // a string always marshals
	b.Write(kb)
	b.WriteByte(':')
	b.Write(v)
}
