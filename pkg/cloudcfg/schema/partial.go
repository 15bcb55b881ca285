package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

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
//
// A partial schema is also pruned to the document: a `properties` member
// whose name is no key anywhere in the document applies to nothing in it,
// so it is dropped before compiling (prune). Keys of instance objects are
// still in or out of every `properties` as before, so `additionalProperties`
// and every other keyword decide as they did, and no finding changes
// (TestPartialSchemaAgrees). cloud-init's largest example uses 27 top-level
// keys and few of their sub-keys: pruning halves what is compiled.

// schemaParts is the embedded schema split for partial compiles: the root's
// keywords other than properties, and each property's raw JSON.
type schemaParts struct {
	root  map[string]json.RawMessage
	props map[string]json.RawMessage
	defs  map[string]json.RawMessage
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
	defs, err := jsonMembers(root["$defs"])
	if err != nil {
		return nil, fmt.Errorf("schema: split embedded schema's $defs: %w", err)
	}
	delete(root, "properties")
	delete(root, "$defs")
	return &schemaParts{root: root, props: props, defs: defs}, nil
})

// jsonMembers splits the JSON object b into its members' raw values,
// which share b's bytes (json.Unmarshal into a map of RawMessage copies
// each value: the schema twice over, in fresh heap). b is the embedded
// schema or a part of it: valid JSON (TestEmbeddedSchemasValid), so the
// scan only finds where values end; a malformed b is an error, never a
// panic.
func jsonMembers(b []byte) (map[string]json.RawMessage, error) {
	out := map[string]json.RawMessage{}
	err := jsonEach(b, '{', func(key string, _, v []byte) { out[key] = json.RawMessage(v) })
	if err != nil {
		return nil, err
	}
	return out, nil
}

func jsonSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// jsonEach calls fn, in order, with each member of the JSON object b
// (open '{'): its name decoded and raw (quoted, as in b), and its raw
// value; or with each element of the array b (open '[', no name). The raw
// bytes share b's. Like jsonMembers it finds where values end and decodes
// only the names.
func jsonEach(b []byte, open byte, fn func(key string, name, v []byte)) error {
	close := byte('}')
	if open == '[' {
		close = ']'
	}
	i := jsonSpace(b, 0)
	if i >= len(b) || b[i] != open {
		if open == '[' {
			return errors.New("not a JSON array")
		}
		return errors.New("not a JSON object")
	}
	i = jsonSpace(b, i+1)
	if i < len(b) && b[i] == close {
		return nil
	}
	for {
		var key string
		var name []byte
		if open == '{' {
			if i >= len(b) || b[i] != '"' {
				return fmt.Errorf("offset %d: want a member name", i)
			}
			end := jsonValueEnd(b, i)
			if end < 0 {
				return fmt.Errorf("offset %d: unterminated name", i)
			}
			name = b[i:end:end]
			if bytes.IndexByte(name, '\\') < 0 && utf8.Valid(name) {
				key = string(name[1 : len(name)-1])
			} else if err := json.Unmarshal(b[i:end], &key); err != nil {
				return fmt.Errorf("offset %d: %w", i, err)
			}
			i = jsonSpace(b, end)
			if i >= len(b) || b[i] != ':' {
				return fmt.Errorf("offset %d: want ':'", i)
			}
			i = jsonSpace(b, i+1)
		}
		end := jsonValueEnd(b, i)
		if end < 0 {
			return fmt.Errorf("offset %d: unterminated value", i)
		}
		fn(key, name, b[i:end:end])
		i = jsonSpace(b, end)
		switch {
		case i < len(b) && b[i] == ',':
			i = jsonSpace(b, i+1)
		case i < len(b) && b[i] == close:
			return nil
		default:
			return fmt.Errorf("offset %d: want ',' or '%c'", i, close)
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
	names := instanceKeys(cfg)
	id := strings.Join(slices.Sorted(maps.Keys(names)), "\x00")
	partials.mu.Lock()
	defer partials.mu.Unlock()
	if s, ok := partials.byKeys[id]; ok {
		return s, nil
	}
	if partials.compiled+len(keys) > len(parts.props) {
		return compiled()
	}
	s, err := compilePartial(parts, keys, names, true)
	if err != nil {
		return nil, err
	}
	partials.byKeys[id] = s
	partials.compiled += len(keys)
	return s, nil
}

// compilePartial compiles the schema with only the named top-level
// properties, pruned to the instance keys inst, with only the $defs they
// reference (inst nil: not pruned, every $def).
func compilePartial(parts *schemaParts, keys []string, inst map[string]struct{}, trusted bool) (*jsonschema.Schema, error) {
	b, err := partialDoc(parts, keys, inst)
	if err != nil {
		return nil, err
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("schema: parse embedded schema: %w", err)
	}
	return compileValue(doc, trusted)
}

// partialDoc is the JSON text compilePartial compiles.
func partialDoc(parts *schemaParts, keys []string, inst map[string]struct{}) ([]byte, error) {
	var props, defs bytes.Buffer
	p := pruner{out: &props, inst: inst}
	props.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			props.WriteByte(',')
		}
		writeName(&props, k)
		p.schema(parts.props[k])
	}
	props.WriteByte('}')
	// The $defs the properties reference, and those they reference in
	// turn; all of them when a $ref is not "#/$defs/NAME".
	p.out = &defs
	defs.WriteByte('{')
	done := map[string]bool{}
	for n := 0; n < len(p.refs) || (inst == nil || p.otherRef) && len(done) < len(parts.defs); n++ {
		var name string
		if n < len(p.refs) {
			name = p.refs[n]
		} else {
			for k := range parts.defs {
				if !done[k] {
					name = k
					p.refs = append(p.refs, k)
					break
				}
			}
		}
		v, ok := parts.defs[name]
		if done[name] || !ok {
			continue // a dangling $ref: the compiler says so
		}
		if len(done) > 0 {
			defs.WriteByte(',')
		}
		done[name] = true
		writeName(&defs, name)
		p.schema(v)
	}
	defs.WriteByte('}')
	if p.err != nil {
		return nil, fmt.Errorf("schema: prune embedded schema: %w", p.err)
	}
	var b bytes.Buffer
	b.Grow(props.Len() + defs.Len() + 256)
	b.WriteByte('{')
	for _, k := range slices.Sorted(maps.Keys(parts.root)) {
		writeName(&b, k)
		b.Write(parts.root[k])
		b.WriteByte(',')
	}
	b.WriteString(`"$defs":`)
	b.Write(defs.Bytes())
	b.WriteString(`,"properties":`)
	b.Write(props.Bytes())
	b.WriteByte('}')
	return b.Bytes(), nil
}

// instanceKeys is the set of every mapping key in v, at any depth.
func instanceKeys(v any) map[string]struct{} {
	out := map[string]struct{}{}
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				out[k] = struct{}{}
				walk(e)
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(v)
	return out
}

// pruner copies raw schema JSON to out, dropping from it and from every
// subschema the `properties` members whose name is not in inst (nil: none
// dropped), before anything is decoded. Only keywords whose values are
// schemas are walked (a property named "properties" is a name, not a
// keyword). It collects the $defs that $refs name, in refs; otherRef is
// set by any other $ref, which could point into a `properties` member
// that was dropped (the cloud-config schema has none: TestPruneRefs).
// The first malformed value is kept in err.
type pruner struct {
	out      *bytes.Buffer
	inst     map[string]struct{}
	refs     []string
	otherRef bool
	err      error
}

// member writes the value v of the schema keyword k.
func (p *pruner) member(k string, v []byte) {
	subschema := func(_ string, sub []byte) { p.schema(sub) }
	switch k {
	case "properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies":
		if i := jsonSpace(v, 0); i >= len(v) || v[i] != '{' {
			p.out.Write(v) // a malformed keyword: the compiler says so
			return
		}
		var keep func(string) bool
		if k == "properties" && p.inst != nil {
			keep = func(name string) bool { _, ok := p.inst[name]; return ok }
		}
		p.walk(v, '{', keep, subschema) // a dependencies array is no object: copied as it is
	case "items", "additionalItems", "additionalProperties", "unevaluatedItems", "unevaluatedProperties",
		"not", "if", "then", "else", "contains", "propertyNames", "allOf", "anyOf", "oneOf", "prefixItems":
		if i := jsonSpace(v, 0); i < len(v) && v[i] == '[' {
			p.walk(v, '[', nil, subschema)
			return
		}
		p.schema(v)
	case "$ref":
		if name, ok := strings.CutPrefix(string(v), `"#/$defs/`); ok && strings.HasSuffix(name, `"`) &&
			!strings.ContainsAny(name[:len(name)-1], `/~\"%`) {
			p.refs = append(p.refs, name[:len(name)-1])
		} else {
			p.otherRef = true
		}
		p.out.Write(v)
	default:
		p.out.Write(v)
	}
}

// schema writes the schema v: an object is walked, anything else (true,
// false) copied.
func (p *pruner) schema(v []byte) {
	if i := jsonSpace(v, 0); i >= len(v) || v[i] != '{' {
		p.out.Write(v)
		return
	}
	p.walk(v, '{', nil, p.member)
}

// walk writes the object or array v (open '{' or '[') with the members or
// elements keep (nil: every one) keeps: a member's raw name, then write
// writes its value.
func (p *pruner) walk(v []byte, open byte, keep func(name string) bool, write func(name string, v []byte)) {
	p.out.WriteByte(open)
	first := true
	p.each(v, open, func(name string, raw, sub []byte) {
		if keep != nil && !keep(name) {
			return
		}
		if !first {
			p.out.WriteByte(',')
		}
		first = false
		if raw != nil {
			p.out.Write(raw)
			p.out.WriteByte(':')
		}
		write(name, sub)
	})
	if open == '[' {
		p.out.WriteByte(']')
	} else {
		p.out.WriteByte('}')
	}
}

func (p *pruner) each(v []byte, open byte, fn func(string, []byte, []byte)) {
	if err := jsonEach(v, open, fn); err != nil && p.err == nil {
		p.err = err
	}
}

func writeName(b *bytes.Buffer, k string) {
	kb, _ := json.Marshal(k) // a string always marshals
	b.Write(kb)
	b.WriteByte(':')
}
