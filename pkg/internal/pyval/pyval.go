// Package pyval holds Python's semantics for values decoded from JSON or
// YAML, for the packages that mirror cloud-init's checks on them
// (datasources reading metadata, modules reading cloud-config).
package pyval

// Truthy is Python's truth value of a decoded value: None, False, zero,
// "" and empty lists and mappings are false; anything else is true.
func Truthy(v any) bool {
	switch t := v.(type) {
	case nil:
		return false
	case bool:
		return t
	case string:
		return t != ""
	case int:
		return t != 0
	case int64:
		return t != 0
	case uint64:
		return t != 0
	case float64:
		return t != 0
	case map[string]any:
		return len(t) > 0
	case []any:
		return len(t) > 0
	}
	return true
}
