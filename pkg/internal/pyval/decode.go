package pyval

// The lenient decoder: cloud-config as YAML decodes it (map[string]any,
// []any, scalars) into a module's typed configuration, with the loose
// typing cloud-init's handlers apply to it (str() of a scalar, translate_bool
// of a flag, int() of a number in a string) and cloud-init's deprecated
// spellings translated here, in one place. Keys the struct does not name
// are left alone: the schema validator reports them.
//
// A struct field says what it reads with a tag:
//
//	Layout string   `cfg:"layout"`                  // str(v); absent or null: ""
//	Remove bool     `cfg:"remove_defaults,old=remove-defaults@22.1"`
//	Mode   string   `cfg:"mode,default=auto"`        // absent: "auto"
//	Port   *int     `cfg:"port"`                     // nil when absent or null
//	Trust  []string `cfg:"trusted"`                  // a string or a list of scalars
//	Raw    any      `cfg:"extra"`                    // the value as decoded
//	Section *X      `cfg:"section"`                  // a mapping, decoded recursively
//	HasNTP  bool    `cfg:"ntp,present"`             // the key is given (null included)
//	Info    X       `cfg:"system_info,loose"`       // a value of the wrong shape is ignored
//	Quiet   bool    `cfg:"quiet,default=true"`       // null or not a boolean: true
//	Name    string  `cfg:"name,scalar"`              // a mapping or a list: ""
//	Value   string  `cfg:"value,str"`                // str(v), null included ("None")
//	Users   U       `cfg:",inline"`                  // U's keys read from this same mapping
//	All     map[string]any `cfg:",all"`             // the whole mapping (a walk over every key)
//
// Field kinds and their conversions:
//   - string: Str(v) of any non-null value.
//   - bool: TranslateBool (True, "true", "1", "on", "yes", any case; an
//     int is its truth); with a default, null and values TranslateBool
//     does not know give the default, as util.get_cfg_option_bool's
//     callers in cloudroot always read flags.
//   - string with scalar: ScalarStr (a mapping or a list is "", a bool
//     is true/false, a float has no exponent), cloudroot's reading of
//     keys that are only ever scalars; []string with scalar: ScalarList.
//   - string with str: Str of the value given, null included ("None"),
//     as util.get_cfg_option_str reads a key that is present.
//   - int: an int, an integral float, or a string int() accepts.
//   - []string: a string is a one-item list; a list gives Str of each
//     item, nulls and "" dropped.
//   - struct, *struct: a mapping; []struct: a list of mappings.
//   - any, map[string]any, []any: the value as decoded (a mapping or a
//     list for the last two, else an error; null leaves them nil).
//   - map[string]string: a mapping, Str of each value ("" for null).
//   - a type implementing Unmarshaler decodes itself.
//
// Errors name the key path, as cloud-init's handlers do when they raise
// on a value of the wrong type.

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
)

// Unmarshaler is a field type that decodes itself from the value at its
// key (called only when the key is present, null included).
type Unmarshaler interface {
	UnmarshalPy(d *Decoder, v any) error
}

// TypeErrors is implemented by a configuration struct whose module words
// its own message for a value of the wrong shape: key path ("ntp",
// "apt.sources") → format, with %s for the Python type name given.
type TypeErrors interface {
	TypeErrors() map[string]string
}

// Decoder converts decoded cloud-config values into typed structs.
type Decoder struct {
	// Deprecated receives the message (Deprecation's text) for each
	// deprecated spelling found; nil drops them.
	Deprecated func(msg string)
	// Warn receives recoverable problems (both spellings of a key given);
	// nil drops them.
	Warn func(msg string)
	// messages are the TypeErrors of the struct being decoded.
	messages map[string]string
}

// Decode fills the struct out points to from m, a decoded mapping (the
// merged cloud-config or one section of it).
func (d *Decoder) Decode(m map[string]any, out any) error {
	rv := reflect.ValueOf(out)
	if rv.Kind() != reflect.Pointer || rv.Elem().Kind() != reflect.Struct {
		return fmt.Errorf("pyval: Decode needs a pointer to a struct, got %T", out)
	}
	if te, ok := out.(TypeErrors); ok {
		d.messages = te.TypeErrors()
		defer func() { d.messages = nil }()
	}
	return d.decodeStruct("", m, rv.Elem())
}

// DecodeValue decodes one value v into out (a pointer to any supported
// field type), path naming it in errors.
func (d *Decoder) DecodeValue(path string, v any, out any) error {
	rv := reflect.ValueOf(out)
	if rv.Kind() != reflect.Pointer {
		return fmt.Errorf("pyval: DecodeValue needs a pointer, got %T", out)
	}
	return d.decodeValue(path, v, rv.Elem())
}

// fieldTag is a parsed `cfg` tag.
type fieldTag struct {
	key      string
	old      []oldSpelling
	def      string
	hasDef   bool
	present  bool
	required bool
	loose    bool
	scalar   bool
	str      bool
	inline   bool
	all      bool
}

// oldSpelling is a deprecated spelling of a key and the version that
// deprecated it.
type oldSpelling struct{ key, version string }

func parseTag(tag string) fieldTag {
	parts := strings.Split(tag, ",")
	t := fieldTag{key: parts[0]}
	for _, p := range parts[1:] {
		switch {
		case p == "present":
			t.present = true
		case p == "required":
			t.required = true
		case p == "loose":
			t.loose = true
		case p == "scalar":
			t.scalar = true
		case p == "str":
			t.str = true
		case p == "inline":
			t.inline = true
		case p == "all":
			t.all = true
		case strings.HasPrefix(p, "old="):
			k, v, _ := strings.Cut(strings.TrimPrefix(p, "old="), "@")
			t.old = append(t.old, oldSpelling{k, v})
		case strings.HasPrefix(p, "default="):
			t.def, t.hasDef = strings.TrimPrefix(p, "default="), true
		}
	}
	return t
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func (d *Decoder) deprecated(what, version, extra string) {
	if d.Deprecated != nil {
		d.Deprecated(Deprecation(what, version, extra))
	}
}

func (d *Decoder) warn(msg string) {
	if d.Warn != nil {
		d.Warn(msg)
	}
}

// lookup finds the field's value in m: its key, else (with a deprecation)
// one of its old spellings; when both are given the key wins, with
// cloud-init's warning.
func (d *Decoder) lookup(m map[string]any, t fieldTag) (any, bool) {
	v, ok := m[t.key]
	for _, o := range t.old {
		ov, has := m[o.key]
		if !has {
			continue
		}
		d.deprecated(fmt.Sprintf("Key '%s'", o.key), o.version, fmt.Sprintf("Use '%s' instead.", t.key))
		if ok {
			d.warn(fmt.Sprintf("Found both %s (deprecated) and %s config keys. Ignoring %s.", o.key, t.key, o.key))
			continue
		}
		v, ok = ov, true
	}
	return v, ok
}

func (d *Decoder) decodeStruct(path string, m map[string]any, sv reflect.Value) error {
	st := sv.Type()
	var errs []error
	for i := range st.NumField() {
		f := st.Field(i)
		tag, ok := f.Tag.Lookup("cfg")
		if !ok || !f.IsExported() {
			continue
		}
		t := parseTag(tag)
		fv := sv.Field(i)
		if t.key == "" && t.all && fv.Type() == reflect.TypeFor[map[string]any]() {
			fv.Set(reflect.ValueOf(m))
			continue
		}
		if t.key == "" && t.inline && fv.Kind() == reflect.Struct {
			if err := d.decodeStruct(path, m, fv); err != nil {
				errs = append(errs, err)
			}
			continue
		}
		if t.present {
			_, has := m[t.key]
			for _, o := range t.old {
				_, ohas := m[o.key]
				has = has || ohas
			}
			fv.SetBool(has)
			continue
		}
		v, has := d.lookup(m, t)
		if !has {
			if t.required {
				errs = append(errs, fmt.Errorf("%s: '%s' is a required property", path, t.key))
				continue
			}
			if t.hasDef {
				if err := d.decodeValue(join(path, t.key), t.def, fv); err != nil {
					errs = append(errs, err)
				}
			}
			continue
		}
		switch {
		case t.hasDef && fv.Kind() == reflect.Bool:
			def := TranslateBool(t.def, false)
			fv.SetBool(def)
			if v != nil {
				fv.SetBool(TranslateBool(v, def))
			}
			continue
		case t.scalar && fv.Kind() == reflect.String:
			fv.SetString(ScalarStr(v))
			continue
		case t.scalar && fv.Type() == reflect.TypeFor[[]string]():
			fv.Set(reflect.ValueOf(ScalarList(v)))
			continue
		case t.str && fv.Kind() == reflect.String:
			fv.SetString(Str(v))
			continue
		}
		if err := d.decodeValue(join(path, t.key), v, fv); err != nil {
			if t.loose {
				fv.SetZero()
				continue
			}
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

var unmarshalerType = reflect.TypeFor[Unmarshaler]()

func (d *Decoder) decodeValue(path string, v any, fv reflect.Value) error {
	if fv.CanAddr() && fv.Addr().Type().Implements(unmarshalerType) {
		return fv.Addr().Interface().(Unmarshaler).UnmarshalPy(d, v)
	}
	switch fv.Kind() {
	case reflect.Interface:
		if v != nil {
			fv.Set(reflect.ValueOf(v))
		}
		return nil
	case reflect.Pointer:
		if v == nil {
			return nil
		}
		p := reflect.New(fv.Type().Elem())
		if err := d.decodeValue(path, v, p.Elem()); err != nil {
			return err
		}
		fv.Set(p)
		return nil
	case reflect.String:
		if v != nil {
			fv.SetString(Str(v))
		}
		return nil
	case reflect.Bool:
		fv.SetBool(TranslateBool(v, false))
		return nil
	case reflect.Int, reflect.Int64:
		if v == nil {
			return nil
		}
		n, err := Int(v)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		fv.SetInt(int64(n))
		return nil
	case reflect.Float64:
		switch t := v.(type) {
		case float64:
			fv.SetFloat(t)
		case int:
			fv.SetFloat(float64(t))
		case nil:
		default:
			f, err := strconv.ParseFloat(strings.TrimSpace(Str(v)), 64)
			if err != nil {
				return fmt.Errorf("%s: could not convert string to float: %s", path, StrRepr(Str(v)))
			}
			fv.SetFloat(f)
		}
		return nil
	case reflect.Map:
		if v == nil {
			return nil
		}
		m, ok := v.(map[string]any)
		switch {
		case fv.Type() == reflect.TypeFor[map[string]any]():
			if !ok {
				return d.typeError(path, "a mapping", v)
			}
			fv.Set(reflect.ValueOf(m))
			return nil
		case fv.Type() == reflect.TypeFor[map[string]string]():
			if !ok {
				return d.typeError(path, "a mapping", v)
			}
			out := make(map[string]string, len(m))
			for k, e := range m {
				if e != nil {
					out[k] = Str(e)
				} else {
					out[k] = ""
				}
			}
			fv.Set(reflect.ValueOf(out))
			return nil
		}
	case reflect.Slice:
		switch fv.Type().Elem().Kind() {
		case reflect.String:
			fv.Set(reflect.ValueOf(StringList(v)))
			return nil
		case reflect.Interface:
			if v == nil {
				return nil
			}
			l, ok := v.([]any)
			if !ok {
				return d.typeError(path, "a list", v)
			}
			fv.Set(reflect.ValueOf(l))
			return nil
		case reflect.Struct, reflect.Pointer:
			l, ok := v.([]any)
			if !ok {
				if v == nil {
					return nil
				}
				return d.typeError(path, "a list", v)
			}
			out := reflect.MakeSlice(fv.Type(), len(l), len(l))
			var errs []error
			for i, e := range l {
				if err := d.decodeValue(fmt.Sprintf("%s[%d]", path, i), e, out.Index(i)); err != nil {
					errs = append(errs, err)
				}
			}
			fv.Set(out)
			return errors.Join(errs...)
		}
	case reflect.Struct:
		if v == nil {
			return nil
		}
		m, ok := v.(map[string]any)
		if !ok {
			return d.typeError(path, "a mapping", v)
		}
		return d.decodeStruct(path, m, fv)
	}
	return fmt.Errorf("pyval: %s: unsupported field type %s", path, fv.Type())
}

// typeError is the error for v at path, which should be want: the
// struct's own wording (TypeErrors) or "PATH: expected WANT, got TYPE".
func (d *Decoder) typeError(path, want string, v any) error {
	if f, ok := d.messages[path]; ok {
		return fmt.Errorf(f, TypeName(v))
	}
	return fmt.Errorf("%s: expected %s, got %s", path, want, TypeName(v))
}

// TranslateBool is cloud-init's util.translate_bool as cloudroot reads
// flags: a bool is itself; true, "true", "1", "on", "yes", "y" (any case,
// space trimmed) are true and their opposites false; an int is its truth;
// anything else (null included) is def.
func TranslateBool(v any, def bool) bool {
	switch t := v.(type) {
	case bool:
		return t
	case int:
		return t != 0
	case string:
		switch strings.ToLower(strings.TrimSpace(t)) {
		case "true", "1", "on", "yes", "y":
			return true
		case "false", "0", "off", "no", "n", "":
			return false
		}
	}
	return def
}

// IsTrue is cloud-init's util.is_true: a bool is itself, anything else is
// true when str() of it, lowered and stripped, is true, 1, on or yes.
func IsTrue(v any) bool {
	switch t := v.(type) {
	case bool:
		return t
	case nil:
		return false
	}
	switch strings.ToLower(strings.TrimSpace(Str(v))) {
	case "true", "1", "on", "yes":
		return true
	}
	return false
}

// IsFalse is cloud-init's util.is_false: a bool is its negation, anything
// else is false when str() of it, lowered and stripped, is off, 0, no or
// false.
func IsFalse(v any) bool {
	switch t := v.(type) {
	case bool:
		return !t
	case nil:
		return false
	}
	switch strings.ToLower(strings.TrimSpace(Str(v))) {
	case "off", "0", "no", "false":
		return true
	}
	return false
}

// ScalarStr is a scalar as text the way cloudroot has always read keys
// that hold only scalars: null, a mapping and a list are "", a bool is
// true or false, a float is written without an exponent; anything else
// is its decimal text.
func ScalarStr(v any) string {
	switch t := v.(type) {
	case nil, map[string]any, []any:
		return ""
	case string:
		return t
	case bool:
		return strconv.FormatBool(t)
	case int:
		return strconv.Itoa(t)
	case int64:
		return strconv.FormatInt(t, 10)
	case uint64:
		return strconv.FormatUint(t, 10)
	case float64:
		return strconv.FormatFloat(t, 'f', -1, 64)
	}
	return fmt.Sprint(v)
}

// ScalarList is a string or a list of scalars as cloudroot has always
// read them: a string is a one-item list, a list gives ScalarStr of each
// item with "" dropped; anything else is nil.
func ScalarList(v any) []string {
	switch t := v.(type) {
	case string:
		return []string{t}
	case []string:
		return t
	case []any:
		out := make([]string, 0, len(t))
		for _, e := range t {
			if s := ScalarStr(e); s != "" {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// Int is Python's int() of a decoded value: an int, a float truncated, a
// bool, or a string of decimal digits (space and one sign allowed).
func Int(v any) (int, error) {
	switch t := v.(type) {
	case int:
		return t, nil
	case int64:
		return int(t), nil
	case uint64:
		if t > math.MaxInt {
			return 0, fmt.Errorf("int too large: %d", t)
		}
		return int(t), nil
	case float64:
		if math.IsNaN(t) || math.IsInf(t, 0) {
			return 0, fmt.Errorf("cannot convert float %s to integer", Repr(t))
		}
		return int(t), nil
	case bool:
		if t {
			return 1, nil
		}
		return 0, nil
	case string:
		n, err := strconv.Atoi(strings.ReplaceAll(strings.TrimSpace(t), "_", ""))
		if err != nil {
			return 0, fmt.Errorf("invalid literal for int() with base 10: %s", StrRepr(t))
		}
		return n, nil
	}
	return 0, fmt.Errorf("int() argument must be a string, a bytes-like object or a real number, not '%s'", TypeName(v))
}

// StringList accepts a string or a list of scalars, as many cloud-init
// keys do: a string is a one-item list, a list gives str() of each item
// (nulls and empty strings dropped); anything else is nil.
func StringList(v any) []string {
	switch t := v.(type) {
	case nil:
		return nil
	case string:
		return []string{t}
	case []string:
		return t
	case []any:
		out := make([]string, 0, len(t))
		for _, e := range t {
			switch e.(type) {
			case nil, map[string]any, []any:
				continue
			}
			if s := Str(e); s != "" {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}
