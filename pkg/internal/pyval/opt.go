package pyval

// Opt is a key a handler reads loosely and whose absence it tells from a
// value, null included (cloud-init's `"key" in cfg` beside cfg["key"] or
// cfg.get("key", default)): the decoder sets Given and keeps the value as
// decoded. A struct field of type Opt names the key in its cfg tag, so the
// module reads o.Value instead of walking the mapping by hand.
type Opt struct {
	// Given is whether the key is present (null included).
	Given bool
	// Value is the value as decoded (nil when absent or null).
	Value any
}

// UnmarshalPy records the value at the key.
func (o *Opt) UnmarshalPy(_ *Decoder, v any) error {
	o.Given, o.Value = true, v
	return nil
}

// Str is str() of the value when given, else "".
func (o Opt) Str() string {
	if !o.Given {
		return ""
	}
	return Str(o.Value)
}

// Or is str() of the value when given (null is "None"), else def.
func (o Opt) Or(def string) string {
	if !o.Given {
		return def
	}
	return Str(o.Value)
}

// Truthy is Python's bool() of the value (false when absent).
func (o Opt) Truthy() bool { return Truthy(o.Value) }
