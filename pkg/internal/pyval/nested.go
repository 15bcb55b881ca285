package pyval

// KeyInNested is cloud-init's util.is_key_in_nested_dict: key is a key of
// m, of a mapping at any depth below it, or of a mapping directly inside
// a list there.
func KeyInNested(m map[string]any, key string) bool {
	for k, v := range m {
		if k == key {
			return true
		}
		switch t := v.(type) {
		case map[string]any:
			if KeyInNested(t, key) {
				return true
			}
		case []any:
			for _, e := range t {
				if d, ok := e.(map[string]any); ok && KeyInNested(d, key) {
					return true
				}
			}
		}
	}
	return false
}
