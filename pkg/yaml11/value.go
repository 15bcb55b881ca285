package yaml11

import (
	"encoding/base64"
	"math"
	"math/big"
	"strconv"
	"time"

	"gopkg.in/yaml.v3"
)

// Value converts a node of a normalized tree (Doc.Root or below) into
// plain Go values, as Load does.
func Value(n *yaml.Node) any {
	if n == nil {
		return nil
	}
	switch n.Kind {
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			m[KeyString(n.Content[i])] = Value(n.Content[i+1])
		}
		return m
	case yaml.SequenceNode:
		out := make([]any, len(n.Content))
		for i, c := range n.Content {
			out[i] = Value(c)
		}
		return out
	case yaml.ScalarNode:
		return Scalar(n)
	}
	return nil
}

// Scalar is the Go value of a normalized scalar node: string, int (or
// *big.Int beyond int64), float64, bool, nil, time.Time; !!binary gives
// its decoded bytes as a string.
func Scalar(n *yaml.Node) any {
	switch n.Tag {
	case tagNull:
		return nil
	case tagBool:
		return n.Value == "true"
	case tagInt:
		if i, err := strconv.ParseInt(n.Value, 10, 64); err == nil {
			return int(i)
		}
		b, _ := new(big.Int).SetString(n.Value, 10)
		return b
	case tagFloat:
		return floatOf(n.Value)
	case tagTimestamp:
		return timeOf(n.Value)
	case tagBinary:
		b, _ := base64.StdEncoding.DecodeString(n.Value)
		return string(b)
	}
	return n.Value
}

func timeOf(iso string) time.Time {
	for _, layout := range []string{"2006-01-02T15:04:05.999999Z07:00", "2006-01-02T15:04:05.999999", "2006-01-02"} {
		if t, err := time.Parse(layout, iso); err == nil {
			return t
		}
	}
	return time.Time{}
}

// KeyString is a mapping key as a string key, the way Python's json.dumps
// writes dict keys: null, true, false, ints in decimal, floats as repr
// (Infinity, NaN).
func KeyString(k *yaml.Node) string {
	if k.Kind != yaml.ScalarNode {
		return ""
	}
	switch k.Tag {
	case tagFloat:
		return PyJSONFloat(floatOf(k.Value))
	case tagBinary:
		b, _ := base64.StdEncoding.DecodeString(k.Value)
		return string(b)
	}
	return k.Value // str, null ("null"), bool ("true"), int, timestamp (isoformat)
}

func isInt(v any) bool {
	switch v.(type) {
	case int, int64, *big.Int:
		return true
	}
	return false
}

// PyJSONFloat is a float as Python's json.dumps writes it (allow_nan):
// repr, with NaN, Infinity and -Infinity for the values JSON lacks.
func PyJSONFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	return PyFloatRepr(f)
}
