package yaml11

import (
	"bytes"
	"fmt"
	"math"
	"strings"

	"gopkg.in/yaml.v3"
)

// Normalized tags: every scalar, mapping and sequence of a Doc carries one.
const (
	tagStr       = "!!str"
	tagInt       = "!!int"
	tagFloat     = "!!float"
	tagBool      = "!!bool"
	tagNull      = "!!null"
	tagTimestamp = "!!timestamp"
	tagBinary    = "!!binary"
	tagMap       = "!!map"
	tagSeq       = "!!seq"
	tagSet       = "!!set"
	tagOmap      = "!!omap"
	tagPairs     = "!!pairs"
	tagMerge     = "!!merge"
	tagValue     = "!!value"
)

const quotedStyles = yaml.DoubleQuotedStyle | yaml.SingleQuotedStyle | yaml.LiteralStyle | yaml.FoldedStyle

// normalizer turns a yaml.v3 tree into the normalized tree of a Doc.
type normalizer struct {
	name     string
	limit    int
	memo     map[*yaml.Node]*yaml.Node // anchored source node → normalized (aliases share)
	busy     map[*yaml.Node]bool       // anchored and being normalized: an alias to it is recursive
	size     map[*yaml.Node]int        // normalized node an alias shares → expanded node count
	warnings []Warning
	nanKeys  int
	// release: the document has no anchors, so every source node is read
	// once and a collection lets go of each child once it is normalized
	// (the source tree is then garbage as the normalized one grows).
	release bool
	src     []byte // the source, to see a "!" yaml.v3 drops before a quoted scalar
	marks   []int  // offset of every lineStride-th line of src, built on first use
}

// lineStride is how many lines apart bangBefore's marks are: a lookup scans
// at most that many lines, and the marks take a fraction of the per-line
// index they replace (a slice per line cost 24 bytes a line, more than the
// source itself for short lines; docs/security.md, "Memory ceiling").
const lineStride = 256

// lineAt returns line (1-based) of the source, or nil past its end.
func (n *normalizer) lineAt(line int) []byte {
	if n.marks == nil {
		n.marks = []int{0}
		for off, l := 0, 0; ; {
			i := bytes.IndexByte(n.src[off:], '\n')
			if i < 0 {
				break
			}
			off += i + 1
			if l++; l%lineStride == 0 {
				n.marks = append(n.marks, off)
			}
		}
	}
	k := (line - 1) / lineStride
	if k >= len(n.marks) {
		return nil
	}
	off := n.marks[k]
	for range (line - 1) % lineStride {
		i := bytes.IndexByte(n.src[off:], '\n')
		if i < 0 {
			return nil
		}
		off += i + 1
	}
	l := n.src[off:]
	if i := bytes.IndexByte(l, '\n'); i >= 0 {
		l = l[:i]
	}
	return l
}

// bangBefore reports whether the source has a "!" where a node starts
// (yaml.v3 reports a quoted scalar tagged "!" as a plain quoted one).
func (n *normalizer) bangBefore(src *yaml.Node) bool {
	if src.Line < 1 || src.Column < 1 {
		return false
	}
	l := n.lineAt(src.Line)
	return src.Column-1 < len(l) && l[src.Column-1] == '!'
}

// anchors refuses an anchor defined twice, as PyYAML's composer does.
func (n *normalizer) anchors(root *yaml.Node) error {
	seen := map[string]*yaml.Node{}
	defer func() { n.release = len(seen) == 0 }()
	var walk func(*yaml.Node) error
	walk = func(v *yaml.Node) error {
		if v.Kind == yaml.AliasNode {
			return nil
		}
		if v.Anchor != "" {
			if first, dup := seen[v.Anchor]; dup {
				return n.errAt(v, "found duplicate anchor %q; first occurrence at line %d column %d", v.Anchor, first.Line, first.Column)
			}
			seen[v.Anchor] = v
		}
		for _, c := range v.Content {
			if err := walk(c); err != nil {
				return err
			}
		}
		return nil
	}
	return walk(root)
}

func (n *normalizer) errAt(at *yaml.Node, format string, args ...any) error {
	e := &Error{Source: n.name, Msg: fmt.Sprintf(format, args...)}
	if at != nil {
		e.Line, e.Column = at.Line, at.Column
	}
	return e
}

// shortTag spells a tag the way yaml.v3 writes core tags ("!!int").
func shortTag(t string) string {
	if rest, ok := strings.CutPrefix(t, "tag:yaml.org,2002:"); ok {
		return "!!" + rest
	}
	return t
}

// longTag spells a tag the way PyYAML's messages do.
func longTag(t string) string {
	if rest, ok := strings.CutPrefix(t, "!!"); ok {
		return "tag:yaml.org,2002:" + rest
	}
	return t
}

// explicitTag is the tag written in the document, "" when none (or the
// non-specific "!", which PyYAML resolves like no tag at all).
func explicitTag(src *yaml.Node) string {
	if src.Style&yaml.TaggedStyle == 0 || src.Tag == "!" || src.Tag == "" {
		return ""
	}
	return shortTag(src.Tag)
}

// implicit reports whether a scalar is resolved by PyYAML's implicit
// resolvers: plain, or tagged with the non-specific "!".
func implicit(src *yaml.Node) bool {
	if src.Style&yaml.TaggedStyle != 0 && src.Tag == "!" {
		return true
	}
	return src.Style&yaml.TaggedStyle == 0 && src.Style&quotedStyles == 0
}

func (n *normalizer) undefined(src *yaml.Node, tag string) error {
	return n.errAt(src, "could not determine a constructor for the tag '%s'", longTag(tag))
}

func (n *normalizer) node(src *yaml.Node, depth int) (*yaml.Node, error) {
	for src.Kind == yaml.AliasNode {
		if src.Alias == nil {
			return nil, n.errAt(src, "found undefined alias")
		}
		src = src.Alias
	}
	// Only an anchored node can be reached twice (through an alias), so
	// only those are remembered: a map entry per node cost more than the
	// node (docs/security.md, "Memory ceiling").
	anchored := src.Anchor != ""
	if anchored {
		if out, ok := n.memo[src]; ok {
			return out, nil
		}
		if n.busy == nil {
			n.busy = map[*yaml.Node]bool{}
		}
		if n.busy[src] {
			return nil, n.errAt(src, "recursive alias: the node contains itself")
		}
	}
	if depth > 5000 {
		return nil, n.errAt(src, "document nested too deeply")
	}
	if anchored {
		n.busy[src] = true
		defer delete(n.busy, src)
	}
	var out *yaml.Node
	var err error
	switch src.Kind {
	case yaml.ScalarNode:
		out, err = n.scalar(src)
	case yaml.SequenceNode:
		out, err = n.sequence(src, depth)
	case yaml.MappingNode:
		out, err = n.mapping(src, depth)
	case yaml.DocumentNode:
		if len(src.Content) == 0 {
			return &yaml.Node{Kind: yaml.ScalarNode, Tag: tagNull, Value: "null"}, nil
		}
		return n.node(src.Content[0], depth+1)
	default:
		return nil, n.errAt(src, "unexpected YAML node kind %d", src.Kind)
	}
	if err != nil {
		return nil, err
	}
	if anchored {
		n.memo[src] = out
		n.size[out] = -1 // shared: expanded remembers its size
	}
	return out, nil
}

func newNode(src *yaml.Node, kind yaml.Kind, tag string) *yaml.Node {
	return &yaml.Node{Kind: kind, Tag: tag, Line: src.Line, Column: src.Column,
		HeadComment: src.HeadComment, LineComment: src.LineComment, FootComment: src.FootComment}
}

func (n *normalizer) scalar(src *yaml.Node) (*yaml.Node, error) {
	if src.Style&quotedStyles == 0 && strings.ContainsRune(src.Value, '\t') {
		// yaml.v3 lets a tab into a plain scalar; PyYAML's scanner ends
		// the scalar there and refuses the tab.
		return nil, n.errAt(src, "found character '\\t' that cannot start any token (while scanning for the next token)")
	}
	tag := explicitTag(src)
	if tag == "" {
		if implicit(src) || (src.Style&quotedStyles != 0 && n.bangBefore(src)) {
			tag = resolveImplicit(src.Value)
		} else {
			tag = tagStr
		}
	}
	switch tag {
	case tagSeq, tagMap, tagSet, tagOmap, tagPairs:
		return nil, n.errAt(src, "expected a %s node, but found scalar", map[bool]string{true: "sequence", false: "mapping"}[tag == tagSeq || tag == tagOmap || tag == tagPairs])
	}
	v, err := construct(tag, src.Value)
	if err != nil {
		if err == errUndefined {
			return nil, n.undefined(src, tag)
		}
		return nil, n.errAt(src, "%v", err)
	}
	out := newNode(src, yaml.ScalarNode, tag)
	out.Value = v
	if tag == tagStr {
		out.Style = src.Style &^ yaml.TaggedStyle
	}
	return out, nil
}

func (n *normalizer) sequence(src *yaml.Node, depth int) (*yaml.Node, error) {
	tag := explicitTag(src)
	switch tag {
	case "", tagSeq:
		tag = tagSeq
	case tagOmap, tagPairs:
		return n.pairs(src, tag, depth)
	case tagStr, tagInt, tagFloat, tagBool, tagNull, tagTimestamp, tagBinary:
		return nil, n.errAt(src, "expected a scalar node, but found sequence")
	case tagMap, tagSet:
		return nil, n.errAt(src, "expected a mapping node, but found sequence")
	default:
		return nil, n.undefined(src, tag)
	}
	out := newNode(src, yaml.SequenceNode, tag)
	out.Style = src.Style & yaml.FlowStyle
	out.Content = make([]*yaml.Node, 0, len(src.Content))
	for i, c := range src.Content {
		v, err := n.node(c, depth+1)
		if err != nil {
			return nil, err
		}
		out.Content = append(out.Content, v)
		if n.release {
			src.Content[i] = nil
		}
	}
	return out, nil
}

// pairs builds !!omap and !!pairs: a sequence of one-item mappings becomes
// a sequence of [key, value] sequences (PyYAML's list of tuples).
func (n *normalizer) pairs(src *yaml.Node, tag string, depth int) (*yaml.Node, error) {
	what := map[string]string{tagOmap: "an ordered map", tagPairs: "pairs"}[tag]
	out := newNode(src, yaml.SequenceNode, tag)
	for _, c := range src.Content {
		for c.Kind == yaml.AliasNode && c.Alias != nil {
			c = c.Alias
		}
		if c.Kind != yaml.MappingNode {
			return nil, n.errAt(c, "expected a mapping of length 1, but found %s (while constructing %s)", kindName(c), what)
		}
		if len(c.Content) != 2 {
			return nil, n.errAt(c, "expected a single mapping item, but found %d items (while constructing %s)", len(c.Content)/2, what)
		}
		k, err := n.node(c.Content[0], depth+1)
		if err != nil {
			return nil, err
		}
		if k.Tag == tagMerge || k.Tag == tagValue {
			return nil, n.undefined(c.Content[0], k.Tag)
		}
		v, err := n.node(c.Content[1], depth+1)
		if err != nil {
			return nil, err
		}
		pair := newNode(c, yaml.SequenceNode, tagSeq)
		pair.Style = yaml.FlowStyle
		pair.Content = []*yaml.Node{k, v}
		out.Content = append(out.Content, pair)
	}
	return out, nil
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "sequence"
	}
	return "scalar"
}

type pair struct {
	k, v *yaml.Node
	own  bool // written in this mapping, not merged in
}

func (n *normalizer) mapping(src *yaml.Node, depth int) (*yaml.Node, error) {
	tag := explicitTag(src)
	switch tag {
	case "", tagMap:
		tag = tagMap
	case tagSet:
	case tagSeq, tagOmap, tagPairs:
		return nil, n.errAt(src, "expected a sequence node, but found mapping")
	case tagStr, tagInt, tagFloat, tagBool, tagNull, tagTimestamp, tagBinary:
		return nil, n.errAt(src, "expected a scalar node, but found mapping")
	default:
		return nil, n.undefined(src, tag)
	}
	var merged, own []pair
	for i := 0; i+1 < len(src.Content); i += 2 {
		kn, vn := src.Content[i], src.Content[i+1]
		kt := ""
		if kn.Kind == yaml.ScalarNode {
			kt = explicitTag(kn)
			if kt == "" && implicit(kn) {
				kt = resolveImplicit(kn.Value)
			}
		}
		if kt == tagMerge {
			ps, err := n.merge(src, vn, depth)
			if err != nil {
				return nil, err
			}
			merged = append(merged, ps...)
			continue
		}
		var k *yaml.Node
		if kt == tagValue {
			k = newNode(kn, yaml.ScalarNode, tagStr)
			k.Value = kn.Value
		} else {
			var err error
			if k, err = n.node(kn, depth+1); err != nil {
				return nil, err
			}
		}
		v, err := n.node(vn, depth+1)
		if err != nil {
			return nil, err
		}
		own = append(own, pair{k, v, true})
		if n.release {
			src.Content[i], src.Content[i+1] = nil, nil
		}
	}
	out := newNode(src, yaml.MappingNode, tag)
	out.Style = src.Style & yaml.FlowStyle
	index := map[string]int{} // key identity → index into kept
	var kept []pair
	firstOwn := map[string]*yaml.Node{}
	for _, p := range append(merged, own...) {
		id, err := n.keyID(p.k)
		if err != nil {
			return nil, n.errAt(p.k, "found unhashable key (while constructing a mapping at line %d column %d)", src.Line, src.Column)
		}
		if p.own {
			if first, dup := firstOwn[id]; dup {
				n.warnings = append(n.warnings, Warning{Source: n.name, Key: keyText(p.k), Line: p.k.Line, Column: p.k.Column, FirstLine: first.Line})
			} else {
				firstOwn[id] = p.k
			}
		}
		if i, ok := index[id]; ok {
			kept[i].v = p.v
			if k := kept[i].k; k.Tag == p.k.Tag && k.Value == p.k.Value {
				// The same key: keep the first position in the order but
				// point at the key that gave the value (errors cite it).
				kept[i].k = p.k
			}
			continue
		}
		index[id] = len(kept)
		kept = append(kept, p)
	}
	out.Content = make([]*yaml.Node, 0, 2*len(kept))
	for _, p := range kept {
		v := p.v
		if tag == tagSet {
			v = &yaml.Node{Kind: yaml.ScalarNode, Tag: tagNull, Value: "null", Line: p.v.Line, Column: p.v.Column}
		}
		out.Content = append(out.Content, p.k, v)
	}
	return out, nil
}

// merge returns the pairs a `<<` value brings, in PyYAML's order: for a
// list, the later mappings first so that the earlier ones override them.
func (n *normalizer) merge(parent, vn *yaml.Node, depth int) ([]pair, error) {
	for vn.Kind == yaml.AliasNode && vn.Alias != nil {
		vn = vn.Alias
	}
	mapPairs := func(m *yaml.Node) ([]pair, error) {
		nm, err := n.node(m, depth+1)
		if err != nil {
			return nil, err
		}
		ps := make([]pair, 0, len(nm.Content)/2)
		for i := 0; i+1 < len(nm.Content); i += 2 {
			ps = append(ps, pair{k: nm.Content[i], v: nm.Content[i+1]})
		}
		return ps, nil
	}
	switch vn.Kind {
	case yaml.MappingNode:
		return mapPairs(vn)
	case yaml.SequenceNode:
		var subs [][]pair
		for _, s := range vn.Content {
			for s.Kind == yaml.AliasNode && s.Alias != nil {
				s = s.Alias
			}
			if s.Kind != yaml.MappingNode {
				return nil, n.errAt(s, "expected a mapping for merging, but found %s (while constructing a mapping at line %d column %d)", kindName(s), parent.Line, parent.Column)
			}
			ps, err := mapPairs(s)
			if err != nil {
				return nil, err
			}
			subs = append(subs, ps)
		}
		var out []pair
		for i := len(subs) - 1; i >= 0; i-- {
			out = append(out, subs[i]...)
		}
		return out, nil
	}
	return nil, n.errAt(vn, "expected a mapping or list of mappings for merging, but found %s (while constructing a mapping at line %d column %d)", kindName(vn), parent.Line, parent.Column)
}

// keyID is a key's identity under Python's equality: 1, 1.0 and True are
// one key; every NaN is its own.
func (n *normalizer) keyID(k *yaml.Node) (string, error) {
	if k.Kind != yaml.ScalarNode {
		return "", fmt.Errorf("unhashable")
	}
	switch k.Tag {
	case tagNull:
		return "null", nil
	case tagBool:
		if k.Value == "true" {
			return "n:1", nil
		}
		return "n:0", nil
	case tagInt:
		return "n:" + k.Value, nil
	case tagFloat:
		f := floatOf(k.Value)
		if k.Value == ".nan" {
			return "nan", nil // PyYAML's one shared nan_value: the same key
		}
		if math.IsNaN(f) {
			n.nanKeys++
			return fmt.Sprintf("nan:%d", n.nanKeys), nil
		}
		if !math.IsInf(f, 0) && f == math.Trunc(f) {
			return "n:" + bigOfFloat(f), nil
		}
		return "f:" + k.Value, nil
	case tagTimestamp:
		return "t:" + k.Value, nil
	case tagBinary:
		return "b:" + k.Value, nil
	}
	return "s:" + k.Value, nil
}

// keyText is a key as warnings print it.
func keyText(k *yaml.Node) string {
	if k.Kind == yaml.ScalarNode {
		return KeyString(k)
	}
	return fmt.Sprintf("<%s>", kindName(k))
}

// expanded counts the nodes a walk of the normalized tree visits, with
// aliases expanded, and refuses a tree larger than the limit.
func (n *normalizer) expanded(v *yaml.Node) (int, error) {
	s, shared := n.size[v]
	if s >= 0 && shared {
		return s, nil
	}
	s = 1
	for _, c := range v.Content {
		cs, err := n.expanded(c)
		if err != nil {
			return 0, err
		}
		s += cs
		if s > n.limit {
			return 0, &Error{Source: n.name, Line: v.Line, Column: v.Column, Err: ErrTooLarge,
				Msg: fmt.Sprintf("%v (more than %d)", ErrTooLarge, n.limit)}
		}
	}
	if shared {
		n.size[v] = s
	}
	return s, nil
}
