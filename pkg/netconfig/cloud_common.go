package netconfig

// Helpers shared by the converters from cloud metadata (cloud_*.go). Each
// converter builds the network config document cloud-init's datasource
// would hand to its renderers (v1 or v2, as an ordered map) and interprets
// it with the same parsers as user-supplied config, so the model, the
// netplan pass-through and the warnings come out exactly as for that
// document written by hand.

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// pyTruthy is Python's truth value of a decoded JSON/YAML value: None,
// False, 0, "" and empty collections are false.
func pyTruthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case string:
		return x != ""
	case int:
		return x != 0
	case int64:
		return x != 0
	case float64:
		return x != 0
	case []any:
		return len(x) > 0
	case []string:
		return len(x) > 0
	case map[string]any:
		return len(x) > 0
	case *omap:
		return x != nil && len(x.keys) > 0
	}
	return true
}

// strList turns a metadata leaf into strings: a string is one item (none
// when empty), a list is its items. EC2's crawler returns a multi-line leaf
// as a list and a one-line leaf as a string.
func strList(v any) []string {
	switch x := v.(type) {
	case nil:
		return nil
	case string:
		if x == "" {
			return nil
		}
		return []string{x}
	case []string:
		return x
	case []any:
		out := make([]string, 0, len(x))
		for _, e := range x {
			if s := renderValue(e); s != "" {
				out = append(out, s)
			}
		}
		return out
	}
	return []string{renderValue(v)}
}

// leafString is a metadata value as a string ("" when absent).
func leafString(v any) string {
	if v == nil {
		return ""
	}
	if s, ok := v.(string); ok {
		return s
	}
	return renderValue(v)
}

// leafInt is Python's int(value) of a metadata value, or fallback when it is
// absent; ok is false for a value that is not an integer.
func leafInt(v any, fallback float64) (float64, bool) {
	if v == nil {
		return fallback, true
	}
	switch x := v.(type) {
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case float64:
		return math.Trunc(x), true
	}
	n, err := strconv.Atoi(strings.TrimSpace(leafString(v)))
	if err != nil {
		return fallback, false
	}
	return float64(n), true
}

// sortedKeys returns m's keys sorted.
func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// omapOf builds an ordered map from alternating keys and values.
func omapOf(kv ...any) *omap {
	o := newOmap()
	for i := 0; i+1 < len(kv); i += 2 {
		o.set(fmt.Sprint(kv[i]), kv[i+1])
	}
	return o
}

// mapOf is a metadata value as a map (nil when it is not one).
func mapOf(v any) map[string]any {
	switch x := v.(type) {
	case map[string]any:
		return x
	case *omap:
		out := make(map[string]any, len(x.keys))
		for _, k := range x.keys {
			out[k] = x.m[k]
		}
		return out
	}
	return nil
}

// listOf is a metadata value as a list (nil when it is not one).
func listOf(v any) []any {
	l, _ := v.([]any)
	return l
}

// finishConverted interprets a converted document and puts the converter's
// warnings first.
func finishConverted(doc *omap, links Links, warnings []string) (*Config, error) {
	cfg, err := parseDoc(doc, links)
	if err != nil {
		return nil, err
	}
	cfg.Warnings = append(warnings, cfg.Warnings...)
	return cfg, nil
}

// omapDel removes k from o.
func omapDel(o *omap, k string) {
	if o == nil {
		return
	}
	if _, ok := o.m[k]; !ok {
		return
	}
	delete(o.m, k)
	for i, x := range o.keys {
		if x == k {
			o.keys = append(o.keys[:i:i], o.keys[i+1:]...)
			break
		}
	}
}
