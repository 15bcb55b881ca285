package pyval

// DeepCopy is copy.deepcopy of a decoded YAML value: mappings and lists are
// copied all the way down, scalars are shared (they are immutable). Tests
// and fuzz targets use it to compare a config before and after a module
// ran.
func DeepCopy(v any) any {
	switch t := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(t))
		for k, e := range t {
			m[k] = DeepCopy(e)
		}
		return m
	case []any:
		l := make([]any, len(t))
		for i, e := range t {
			l[i] = DeepCopy(e)
		}
		return l
	}
	return v
}
