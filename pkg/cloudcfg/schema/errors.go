package schema

import (
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/internal/pyval"
	"github.com/cloudroot/cloudroot/pkg/secret"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// collect turns a validation error tree into findings with messages in
// Python jsonschema's words (what cloud-init prints). For anyOf/oneOf
// failures the deepest findings of the alternatives are kept (cloud-init's
// cloud_init_deepest_matches); alternatives failing only on their type at
// the same place become one "is not of type 'a', 'b'" finding.
func collect(ve *jsonschema.ValidationError, inst any) []Finding {
	switch k := ve.ErrorKind.(type) {
	case *kind.Group, *kind.Schema, *kind.Reference, *kind.AllOf:
		var out []Finding
		for _, c := range ve.Causes {
			out = append(out, collect(c, inst)...)
		}
		return out
	case *kind.AnyOf:
		return alternatives(ve, inst)
	case *kind.OneOf:
		if len(k.Subschemas) > 1 {
			return []Finding{leaf(ve, inst)}
		}
		return alternatives(ve, inst)
	case *kind.AdditionalProperties:
		// One error for the mapping, as Python's jsonschema reports it; the
		// message is built once the keys' document order is known
		// (unexpectedMessage).
		return []Finding{{Path: pathOf(ve.InstanceLocation), Severity: Error, Message: unexpectedMark + strings.Join(k.Properties, "\x00")}}
	case *kind.Required:
		var out []Finding
		for _, m := range k.Missing {
			out = append(out, Finding{Path: pathOf(ve.InstanceLocation), Severity: Error,
				Message: fmt.Sprintf("%s is a required property", pyval.StrRepr(m))})
		}
		return out
	}
	if len(ve.Causes) > 0 {
		var out []Finding
		for _, c := range ve.Causes {
			out = append(out, collect(c, inst)...)
		}
		return out
	}
	return []Finding{leaf(ve, inst)}
}

type typeFinding struct {
	Finding
	types []string // non-nil for a type mismatch
}

func alternatives(ve *jsonschema.ValidationError, inst any) []Finding {
	here := pathOf(ve.InstanceLocation)
	var branches [][]Finding
	var branchTypes [][]string
	onlyTypes, found := true, false
	deepest := depth(here)
	for _, c := range ve.Causes {
		var b []Finding
		var types []string
		for _, f := range collectTyped(c, inst) {
			b = append(b, f.Finding)
			found = true
			deepest = max(deepest, depth(f.Path))
			if f.types == nil || f.Path != here {
				onlyTypes = false
			}
			for _, t := range f.types {
				if !containsStr(types, t) {
					types = append(types, t)
				}
			}
		}
		branches = append(branches, b)
		branchTypes = append(branchTypes, types)
	}
	if !found {
		return []Finding{leaf(ve, inst)}
	}
	r := reprAt(inst, ve.InstanceLocation)
	if onlyTypes {
		// One finding per alternative, each with its own types, as
		// cloud-init lists them.
		var out []Finding
		for _, ts := range branchTypes {
			if len(ts) > 0 {
				out = append(out, Finding{Path: here, Severity: Error, Message: fmt.Sprintf("%s is not of type %s", r, quoteList(ts))})
			}
		}
		return out
	}
	{
		// The alternatives that got furthest into the value are the ones
		// the author meant: report all they found (cloud-init's
		// cloud_init_deepest_matches over the anyOf's errors).
		var out []Finding
		for _, b := range branches {
			bd := -1
			for _, f := range b {
				bd = max(bd, depth(f.Path))
			}
			if bd == deepest {
				out = append(out, b...)
			}
		}
		if len(out) > 0 {
			return out
		}
	}
	return []Finding{{Path: here, Severity: Error, Message: fmt.Sprintf("%s is not valid under any of the given schemas", r)}}
}

// collectTyped is collect that remembers which findings are plain type
// mismatches.
func collectTyped(ve *jsonschema.ValidationError, inst any) []typeFinding {
	if k, ok := ve.ErrorKind.(*kind.Type); ok && len(ve.Causes) == 0 {
		return []typeFinding{{Finding: leaf(ve, inst), types: k.Want}}
	}
	if _, ok := ve.ErrorKind.(*kind.Group); ok || isWrapper(ve) {
		var out []typeFinding
		for _, c := range ve.Causes {
			out = append(out, collectTyped(c, inst)...)
		}
		return out
	}
	var out []typeFinding
	for _, f := range collect(ve, inst) {
		out = append(out, typeFinding{Finding: f})
	}
	return out
}

func isWrapper(ve *jsonschema.ValidationError) bool {
	switch ve.ErrorKind.(type) {
	case *kind.Schema, *kind.Reference, *kind.AllOf:
		return true
	}
	return false
}

func containsStr(l []string, s string) bool {
	for _, e := range l {
		if e == s {
			return true
		}
	}
	return false
}

func quoteList(l []string) string {
	q := make([]string, len(l))
	for i, s := range l {
		q[i] = pyval.StrRepr(s)
	}
	return strings.Join(q, ", ")
}

func depth(path string) int {
	if path == "" {
		return 0
	}
	return strings.Count(path, ".") + 1
}

func pathOf(loc []string) string { return strings.Join(loc, ".") }

func valueAt(inst any, loc []string) any {
	v := inst
	for _, k := range loc {
		switch t := v.(type) {
		case map[string]any:
			v = t[k]
		case []any:
			i, err := strconv.Atoi(k)
			if err != nil || i < 0 || i >= len(t) {
				return nil
			}
			v = t[i]
		default:
			return nil
		}
	}
	return v
}

// Redacted stands for a value at a sensitive location (secret.Path) in a
// finding: a mistyped password is reported without being quoted, since
// findings reach status.json, logs and the console.
const Redacted = "<redacted>"

// reprAt is the Python repr of the value at loc, or Redacted when loc is
// a credential or the value holds one.
func reprAt(inst any, loc []string) string {
	v := valueAt(inst, loc)
	if secret.Path(loc) || secret.Contains(v) {
		return Redacted
	}
	return pyval.Repr(v)
}

func ratString(r *big.Rat) string {
	if r == nil {
		return "?"
	}
	if r.IsInt() {
		return r.Num().String()
	}
	f, _ := r.Float64()
	return pyval.Repr(f)
}

var printer = message.NewPrinter(language.English)

// leaf words one error as Python's jsonschema does.
func leaf(ve *jsonschema.ValidationError, inst any) Finding {
	r := reprAt(inst, ve.InstanceLocation)
	var msg string
	switch k := ve.ErrorKind.(type) {
	case *kind.Type:
		msg = fmt.Sprintf("%s is not of type %s", r, quoteList(k.Want))
	case *kind.Enum:
		w := make([]string, len(k.Want))
		for i, e := range k.Want {
			w[i] = pyval.Repr(e)
		}
		msg = fmt.Sprintf("%s is not one of [%s]", r, strings.Join(w, ", "))
	case *kind.Const:
		msg = fmt.Sprintf("%s was expected", pyval.Repr(k.Want))
	case *kind.MinItems:
		if k.Want == 1 {
			msg = fmt.Sprintf("%s should be non-empty", r)
		} else {
			msg = fmt.Sprintf("%s is too short", r)
		}
	case *kind.MaxItems:
		msg = fmt.Sprintf("%s is too long", r)
	case *kind.MinProperties:
		// Python jsonschema 4.21+ (as for minItems above); older ones
		// say "does not have enough properties" for any minimum.
		if k.Want == 1 {
			msg = fmt.Sprintf("%s should be non-empty", r)
		} else {
			msg = fmt.Sprintf("%s does not have enough properties", r)
		}
	case *kind.MaxProperties:
		msg = fmt.Sprintf("%s has too many properties", r)
	case *kind.MinLength:
		if k.Want == 1 {
			msg = fmt.Sprintf("%s should be non-empty", r)
		} else {
			msg = fmt.Sprintf("%s is too short", r)
		}
	case *kind.MaxLength:
		msg = fmt.Sprintf("%s is too long", r)
	case *kind.Pattern:
		msg = fmt.Sprintf("%s does not match %s", r, pyval.StrRepr(k.Want))
	case *kind.Minimum:
		msg = fmt.Sprintf("%s is less than the minimum of %s", r, ratString(k.Want))
	case *kind.Maximum:
		msg = fmt.Sprintf("%s is greater than the maximum of %s", r, ratString(k.Want))
	case *kind.UniqueItems:
		msg = fmt.Sprintf("%s has non-unique elements", r)
	case *kind.FalseSchema:
		msg = fmt.Sprintf("False schema does not allow %s", r)
	case *kind.OneOf:
		msg = fmt.Sprintf("%s is valid under more than one of the given schemas", r)
	case *kind.AnyOf:
		msg = fmt.Sprintf("%s is not valid under any of the given schemas", r)
	default:
		msg = ve.ErrorKind.LocalizedString(printer)
	}
	return Finding{Path: pathOf(ve.InstanceLocation), Severity: Error, Message: msg}
}

// unexpectedMark starts the Message of an additionalProperties finding
// between collect and Validate: the keys follow, NUL-separated, until
// unexpectedMessage writes the real message.
const unexpectedMark = "\x00unexpected\x00"

// unexpectedMessage completes an additionalProperties finding the way
// cloud-init 26.x reports it: an error on the mapping, "Additional
// properties are not allowed ('a' was unexpected)" or "('a', 'b' were
// unexpected)" with the keys in document order; at the top level a single
// unknown key becomes the path itself (validate_cloudconfig_schema's
// special case), several leave the path empty.
func unexpectedMessage(f Finding, line func(path string) int) Finding {
	keys := strings.Split(strings.TrimPrefix(f.Message, unexpectedMark), "\x00")
	slices.SortStableFunc(keys, func(a, b string) int {
		return line(joinPath(f.Path, a)) - line(joinPath(f.Path, b))
	})
	q := make([]string, len(keys))
	for i, k := range keys {
		q[i] = pyval.StrRepr(k)
	}
	verb := "was"
	if len(keys) > 1 {
		verb = "were"
	}
	f.Message = fmt.Sprintf("Additional properties are not allowed (%s %s unexpected)", strings.Join(q, ", "), verb)
	if f.Path == "" && len(keys) == 1 {
		f.Path = keys[0]
	}
	return f
}
