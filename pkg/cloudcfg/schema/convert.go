package schema

import (
	"fmt"
	"math"
	"strconv"

	"gopkg.in/yaml.v3"
)

// maxNodes bounds the values built from one document, so alias expansion
// ("billion laughs") cannot exhaust memory.
const maxNodes = 1 << 18

type pos struct{ line, col int }

// converter turns a yaml.Node tree into the plain values the schema
// validator takes, recording where each key path is in the document. Scalars
// are read as PyYAML (YAML 1.1) reads them where it matters to cloud-init:
// plain yes/no/on/off are booleans; timestamps stay strings.
type converter struct {
	pos      map[string]pos
	findings []Finding
	nodes    int
	tooBig   bool
}

func newConverter() *converter { return &converter{pos: map[string]pos{}} }

func joinPath(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

func (c *converter) mark(path string, n *yaml.Node) {
	if _, ok := c.pos[path]; !ok {
		c.pos[path] = pos{n.Line, n.Column}
	}
}

func (c *converter) convert(n *yaml.Node, path string) any {
	return c.conv(n, path, 0)
}

func (c *converter) conv(n *yaml.Node, path string, depth int) any {
	if n == nil || c.tooBig {
		return nil
	}
	c.nodes++
	if c.nodes > maxNodes || depth > 10000 {
		if !c.tooBig {
			c.tooBig = true
			c.findings = append(c.findings, Finding{Path: path, Line: n.Line, Column: n.Column, Severity: Error,
				Message: "document too large or too deeply nested (alias expansion) to validate"})
		}
		return nil
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil
		}
		return c.conv(n.Content[0], path, depth+1)
	case yaml.AliasNode:
		return c.conv(n.Alias, path, depth+1)
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for i, e := range n.Content {
			p := joinPath(path, strconv.Itoa(i))
			c.mark(p, e)
			out = append(out, c.conv(e, p, depth+1))
		}
		return out
	case yaml.MappingNode:
		return c.mapping(n, path, depth)
	case yaml.ScalarNode:
		return scalar(n)
	}
	return nil
}

func (c *converter) mapping(n *yaml.Node, path string, depth int) map[string]any {
	out := map[string]any{}
	seen := map[string]int{}
	var merges []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		kn, vn := n.Content[i], n.Content[i+1]
		if kn.Kind == yaml.ScalarNode && kn.ShortTag() == "!!merge" {
			merges = append(merges, vn)
			continue
		}
		k := keyString(kn)
		p := joinPath(path, k)
		if first, dup := seen[k]; dup {
			c.findings = append(c.findings, Finding{Path: p, Line: kn.Line, Column: kn.Column, Severity: Error,
				Message: fmt.Sprintf("mapping key %s already defined at line %d (cloud-init keeps the last value; cloudroot rejects the document)", pyStr(k), first)})
			delete(c.pos, p)
		}
		seen[k] = kn.Line
		c.mark(p, kn)
		out[k] = c.conv(vn, p, depth+1)
	}
	// YAML merge keys: merged mappings fill in keys not given explicitly.
	for _, m := range merges {
		srcs := []*yaml.Node{m}
		if m.Kind == yaml.SequenceNode {
			srcs = m.Content
		}
		for _, s := range srcs {
			mm, ok := c.conv(s, path, depth+1).(map[string]any)
			if !ok {
				continue
			}
			for k, v := range mm {
				if _, ok := out[k]; !ok {
					out[k] = v
					c.mark(joinPath(path, k), s)
				}
			}
		}
	}
	return out
}

func keyString(kn *yaml.Node) string {
	if kn.Kind == yaml.ScalarNode {
		switch v := scalar(kn).(type) {
		case string:
			return v
		case nil:
			return "None"
		case bool:
			if v {
				return "True"
			}
			return "False"
		default:
			return fmt.Sprint(v)
		}
	}
	return fmt.Sprintf("<%s at line %d>", map[yaml.Kind]string{yaml.MappingNode: "mapping", yaml.SequenceNode: "list"}[kn.Kind], kn.Line)
}

// scalar decodes a scalar node.
func scalar(n *yaml.Node) any {
	tag := n.ShortTag()
	switch tag {
	case "!!null":
		return nil
	case "!!str":
		if n.Style == 0 {
			switch n.Value {
			case "yes", "Yes", "YES", "on", "On", "ON":
				return true
			case "no", "No", "NO", "off", "Off", "OFF":
				return false
			}
		}
		return n.Value
	case "!!timestamp":
		return n.Value
	case "!!bool", "!!int", "!!float", "!!binary":
		var v any
		if err := n.Decode(&v); err != nil {
			return n.Value
		}
		if f, ok := v.(float64); ok && (math.IsNaN(f) || math.IsInf(f, 0)) {
			return n.Value
		}
		return v
	}
	return n.Value
}
