// Package pyval holds Python's semantics for values decoded from JSON or
// YAML, for the packages that mirror cloud-init's checks on them
// (datasources reading metadata, modules reading cloud-config).
package pyval

import (
	"fmt"
	"math/big"
	"time"
)

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

// TypeName is the name of a decoded value's Python type, as cloud-init's
// messages give it (type_utils.obj_name, type(v).__name__): NoneType, bool,
// int, float, str, list, dict, datetime.
func TypeName(v any) string {
	switch v.(type) {
	case nil:
		return "NoneType"
	case bool:
		return "bool"
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, *big.Int:
		return "int"
	case float64:
		return "float"
	case string:
		return "str"
	case []any:
		return "list"
	case map[string]any:
		return "dict"
	case time.Time:
		return "datetime"
	}
	return fmt.Sprintf("%T", v)
}
