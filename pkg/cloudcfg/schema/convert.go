package schema

import (
	"encoding/json"
	"math"
	"strconv"

	"github.com/cloudroot/cloudroot/pkg/yaml11"
	"gopkg.in/yaml.v3"
)

type pos struct{ line, col int }

// converter turns the normalized tree pkg/yaml11 gives (PyYAML's reading:
// aliases, merges and repeated keys already resolved) into the plain
// values the schema validator takes, recording where each key path is in
// the document. Timestamps, NaN and the infinities stay their text, and
// integers beyond int64 become json.Number, for the JSON schema library.
type converter struct {
	pos map[string]pos
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
	if n == nil {
		return nil
	}
	switch n.Kind {
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for i, e := range n.Content {
			p := joinPath(path, strconv.Itoa(i))
			c.mark(p, e)
			out = append(out, c.convert(e, p))
		}
		return out
	case yaml.MappingNode:
		out := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := yaml11.KeyString(n.Content[i])
			p := joinPath(path, k)
			c.mark(p, n.Content[i])
			out[k] = c.convert(n.Content[i+1], p)
		}
		return out
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!timestamp":
			return n.Value
		case "!!int":
			if _, err := strconv.ParseInt(n.Value, 10, 64); err != nil {
				return json.Number(n.Value)
			}
		case "!!float":
			if f, ok := yaml11.Scalar(n).(float64); ok && (math.IsNaN(f) || math.IsInf(f, 0)) {
				return n.Value
			}
		}
		return yaml11.Scalar(n)
	}
	return nil
}
