package cloudcfg

// Merge rules — the contract (cloud-init's cloudinit/mergers, util.mergemanydict
// and handlers/cloud_config.py, behaviour for behaviour):
//
// Merging lays a *new* value over an *old* one. What happens is chosen by the
// type of the OLD value and by the mergers in force:
//
//   - old is a mapping → the dict merger; old is a list → the list merger;
//     old is a string → the str merger; anything else (number, bool, null),
//     or no merger of that type in force → the old value is kept.
//   - dict merger, for each key of new (new not a mapping → old kept):
//     key absent from old → added; new value null and allow_delete → key
//     removed; "replace" → new value; otherwise ("no_replace", the default)
//     new mapping → merged recursively (recurse_dict is always on), new list
//     with recurse_array/recurse_list → merged recursively, new string with
//     recurse_str → merged recursively, else old kept.
//   - list merger: "append" → old items then new items; "prepend" → new items
//     then old; "replace" (the default) with a non-list new → new; otherwise
//     the result has old's length and index i (i < len(new)) becomes:
//     "no_replace" → old[i]; new[i] a list and recurse_array, a string and
//     recurse_str, a mapping and recurse_dict → merged recursively; else
//     new[i]. (So a longer new list is cut to old's length, as in cloud-init.)
//     Appending a string appends its characters, appending a mapping its
//     keys (sorted: Go maps carry no order), as Python's list.extend does.
//   - str merger: "append" → old+new (new must be a string); else new.
//   - Where Python raises (appending a non-string to a string, index-merging
//     a mapping into a list, extending a list with a number) the merge fails
//     with an error naming the path; the caller drops that part or source
//     and reports it, as cloud-init's part handler does.
//
// Mergers are written `list(append)+dict(recurse_array)+str()` (names and
// options lowercased, '-' read as '_', empty options dropped; a name may carry
// cloud-init's module prefix "m_") or as a YAML list of
// `{name: list, settings: [append]}` mappings or `[list, append]` lists.
// When two mergers of one type are given, the first wins. Unknown names are
// an error; unknown options are reported (ErrUnknownOption) and ignored, as
// cloud-init ignores them.
//
// Between the cloud-config parts of one user-data (MergeParts) the parts
// are merged in order into an empty mapping. A part's mergers are its own
// merge_how (or, when absent, merge_type) key followed by its MIME
// Merge-Type/X-Merge-Type header; the key is removed from the result. A
// part with neither uses dict(replace)+list()+str(): later parts replace
// earlier keys wholesale. A part's mergers govern that part's merge only —
// nothing carries over to the next part.
//
// Between configuration sources (MergeSources, util.mergemanydict) sources
// are folded from the HIGHEST priority down: each lower source is merged
// under what is already there, with its own merge_how/merge_type (removed)
// or list()+dict()+str() — dict(no_replace): the higher source keeps its
// keys, mappings recurse, lists and strings are never combined. One quirk is
// kept on purpose: a mapping in a lower source replaces a list or string of
// a higher one (the dict merger recurses into the mapping, and the list and
// str mergers return the new value). Empty sources are skipped.

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
)

// plan is a Mergers compiled for merging.
type plan struct {
	dict *dictMerger
	list *listMerger
	str  *strMerger
}

type dictMerger struct {
	replace, allowDelete, recurseArray, recurseStr bool
}

type listMerger struct {
	method                                string // append, prepend, replace, no_replace
	recurseDict, recurseArray, recurseStr bool
}

type strMerger struct{ append bool }

func compile(ms Mergers) *plan {
	p := &plan{}
	for _, m := range ms {
		has := func(o ...string) bool {
			for _, x := range o {
				if slices.Contains(m.Options, x) {
					return true
				}
			}
			return false
		}
		switch m.Name {
		case "dict":
			if p.dict == nil {
				p.dict = &dictMerger{replace: has("replace"), allowDelete: has("allow_delete"),
					recurseArray: has("recurse_array", "recurse_list"), recurseStr: has("recurse_str")}
			}
		case "list":
			if p.list == nil {
				l := &listMerger{method: "replace", recurseDict: has("recurse_dict"),
					recurseArray: has("recurse_array", "recurse_list"), recurseStr: has("recurse_str")}
				for _, meth := range []string{"append", "prepend", "replace", "no_replace"} {
					if has(meth) {
						l.method = meth
						break
					}
				}
				p.list = l
			}
		case "str":
			if p.str == nil {
				p.str = &strMerger{append: has("append")}
			}
		}
	}
	return p
}

// MergeWith merges hi into lo with the given mergers and returns a new
// mapping; neither input is modified.
func MergeWith(lo, hi map[string]any, ms Mergers) (map[string]any, error) {
	out, err := compile(ms).merge(deepCopy(lo), deepCopy(hi), "")
	if err != nil {
		return nil, err
	}
	if m, ok := out.(map[string]any); ok {
		return m, nil
	}
	return nil, errors.New("merge did not produce a mapping")
}

// merge lays nv over old. Neither is modified (copy on write): a failed
// merge leaves the accumulated config as it was. The result shares
// unchanged subtrees with old and nv.
func (p *plan) merge(old, nv any, path string) (any, error) {
	switch o := old.(type) {
	case map[string]any:
		if p.dict == nil {
			return old, nil
		}
		return p.onDict(o, nv, path)
	case []any:
		if p.list == nil {
			return old, nil
		}
		return p.onList(o, nv, path)
	case string:
		if p.str == nil {
			return old, nil
		}
		return p.onStr(o, nv, path)
	}
	return old, nil
}

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

func (p *plan) onDict(old map[string]any, nv any, path string) (any, error) {
	nm, ok := nv.(map[string]any)
	if !ok {
		return old, nil
	}
	d := p.dict
	old = maps.Clone(old)
	for _, k := range sortedKeys(nm) {
		v := nm[k]
		ov, present := old[k]
		if !present {
			old[k] = v
			continue
		}
		if v == nil && d.allowDelete {
			delete(old, k)
			continue
		}
		if d.replace {
			old[k] = v
			continue
		}
		recurse := false
		switch v.(type) {
		case []any:
			recurse = d.recurseArray
		case string:
			recurse = d.recurseStr
		case map[string]any:
			recurse = true
		}
		if !recurse {
			continue
		}
		m, err := p.merge(ov, v, join(path, k))
		if err != nil {
			return nil, err
		}
		old[k] = m
	}
	return old, nil
}

// extend is Python's list.extend(v) for the values a merge can meet.
func extend(v any, path string) ([]any, error) {
	switch t := v.(type) {
	case []any:
		return t, nil
	case string:
		var out []any
		for _, r := range t {
			out = append(out, string(r))
		}
		return out, nil
	case map[string]any:
		var out []any
		for _, k := range sortedKeys(t) {
			out = append(out, k)
		}
		return out, nil
	}
	return nil, fmt.Errorf("%s: cannot extend a list with %s", orTop(path), typeName(v))
}

func orTop(path string) string {
	if path == "" {
		return "(top level)"
	}
	return path
}

func (p *plan) onList(old []any, nv any, path string) (any, error) {
	l := p.list
	if _, isList := nv.([]any); l.method == "replace" && !isList {
		return nv, nil
	}
	switch l.method {
	case "append", "prepend":
		add, err := extend(nv, path)
		if err != nil {
			return nil, err
		}
		out := make([]any, 0, len(old)+len(add))
		if l.method == "append" {
			out = append(append(out, old...), add...)
		} else {
			out = append(append(out, add...), old...)
		}
		return out, nil
	}
	switch t := nv.(type) {
	case []any:
		old = slices.Clone(old)
		n := min(len(old), len(t))
		for i := range n {
			if l.method == "no_replace" {
				continue
			}
			recurse := false
			switch t[i].(type) {
			case []any:
				recurse = l.recurseArray
			case string:
				recurse = l.recurseStr
			case map[string]any:
				recurse = l.recurseDict
			}
			if !recurse {
				old[i] = t[i]
				continue
			}
			m, err := p.merge(old[i], t[i], join(path, strconv.Itoa(i)))
			if err != nil {
				return nil, err
			}
			old[i] = m
		}
		return old, nil
	case string:
		return old, nil // no_replace: indexes of a string, old kept
	case map[string]any:
		if len(old) > 0 && len(t) > 0 {
			return nil, fmt.Errorf("%s: cannot merge a mapping into a list index by index", orTop(path))
		}
		return old, nil
	}
	return nil, fmt.Errorf("%s: cannot merge %s into a list", orTop(path), typeName(nv))
}

func (p *plan) onStr(old string, nv any, path string) (any, error) {
	if !p.str.append {
		return nv, nil
	}
	s, ok := nv.(string)
	if !ok {
		return nil, fmt.Errorf("%s: cannot append %s to a string", orTop(path), typeName(nv))
	}
	return old + s, nil
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// deepCopy copies mappings and lists; scalars are shared (immutable).
// map[any]any (from a YAML decoder) becomes map[string]any.
func deepCopy(v any) any {
	switch t := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(t))
		for k, e := range t {
			m[k] = deepCopy(e)
		}
		return m
	case map[any]any:
		m := make(map[string]any, len(t))
		for k, e := range t {
			m[fmt.Sprint(k)] = deepCopy(e)
		}
		return m
	case []any:
		l := make([]any, len(t))
		for i, e := range t {
			l[i] = deepCopy(e)
		}
		return l
	}
	return v
}

// extractMergers removes merge_how (or, without it, merge_type) from cfg
// and parses it, as mergers.dict_extract_mergers does.
func extractMergers(cfg map[string]any) (Mergers, error) {
	key := KeyMergeHow
	raw, ok := cfg[key]
	if !ok || raw == nil {
		delete(cfg, key)
		key = KeyMergeType
		if raw, ok = cfg[key]; !ok {
			return nil, nil
		}
	}
	delete(cfg, key)
	ms, err := ParseMergeHow(raw)
	if err != nil {
		return ms, fmt.Errorf("%s: %w", key, err)
	}
	return ms, nil
}

// Part is one cloud-config part of a user-data (or vendor-data) payload.
type Part struct {
	// Name identifies the part in problems (e.g. "part-001").
	Name   string
	Config map[string]any
	// MergeHow is the part's Merge-Type (or X-Merge-Type) MIME header; "" if none.
	MergeHow string
}

// MergeParts merges the cloud-config parts of one payload in order (see the
// contract above). The mapping is always usable: a part whose mergers cannot
// be parsed or whose merge fails is left out and named in the returned
// error, which joins one error per problem; unknown merge options are
// reported (errors.Is ErrUnknownOption) but the part is merged.
func MergeParts(parts []Part) (map[string]any, error) {
	buf := map[string]any{}
	var errs []error
	for i, pt := range parts {
		if pt.Name == "" {
			pt.Name = fmt.Sprintf("part %d", i+1)
		}
		out, err := MergePart(buf, pt)
		if err != nil {
			errs = append(errs, err)
		}
		buf = out
	}
	return buf, errors.Join(errs...)
}

// MergePart merges one part into acc, the result of the parts before it,
// with the part's own mergers (its merge_how or merge_type key, then its
// Merge-Type header) or DefaultPartMergeHow; acc is not modified. When the
// part cannot be used, acc is returned with an error naming the part; an
// error wrapping ErrUnknownOption comes with the part merged.
func MergePart(acc map[string]any, pt Part) (map[string]any, error) {
	if acc == nil {
		acc = map[string]any{}
	}
	if pt.Config == nil {
		return acc, nil
	}
	var warns []error
	cfg := deepCopy(pt.Config).(map[string]any)
	ms, err := extractMergers(cfg)
	if err != nil && !errors.Is(err, ErrUnknownOption) {
		return acc, fmt.Errorf("%s: ignored: %w", pt.Name, err)
	}
	if err != nil {
		warns = append(warns, fmt.Errorf("%s: %w", pt.Name, err))
	}
	hdr, err := ParseMergeHow(pt.MergeHow)
	if err != nil && !errors.Is(err, ErrUnknownOption) {
		return acc, fmt.Errorf("%s: ignored: Merge-Type header: %w", pt.Name, err)
	}
	if err != nil {
		warns = append(warns, fmt.Errorf("%s: Merge-Type header: %w", pt.Name, err))
	}
	ms = append(ms, hdr...)
	if len(ms) == 0 {
		ms = defaultPartMergers()
	}
	out, err := compile(ms).merge(acc, cfg, "")
	if err != nil {
		return acc, fmt.Errorf("%s: ignored: merging with %s: %w", pt.Name, ms, err)
	}
	return out.(map[string]any), errors.Join(warns...)
}

// Named is a configuration source and its name for problem reports.
type Named struct {
	Name   string
	Config map[string]any
}

// MergeSources merges configuration sources given lowest priority first
// with util.mergemanydict semantics (see the contract above). Sources whose
// merge fails are left out; use MergeNamed to learn about them.
func MergeSources(lowToHigh ...map[string]any) map[string]any {
	srcs := make([]Named, len(lowToHigh))
	for i, s := range lowToHigh {
		srcs[i] = Named{Name: fmt.Sprintf("source %d", i+1), Config: s}
	}
	m, _ := MergeNamed(srcs...)
	return m
}

// MergeNamed is MergeSources with problems: a source whose merge_how cannot
// be parsed is merged with the default mergers, a source whose merge fails
// is left out; each is reported as a *Problem in the joined error.
func MergeNamed(lowToHigh ...Named) (map[string]any, error) {
	merged := map[string]any{}
	var errs []error
	for i := len(lowToHigh) - 1; i >= 0; i-- {
		src := lowToHigh[i]
		if len(src.Config) == 0 {
			continue
		}
		cfg := deepCopy(src.Config).(map[string]any)
		ms, err := extractMergers(cfg)
		if err != nil {
			errs = append(errs, &Problem{Source: src.Name, Err: err})
			if !errors.Is(err, ErrUnknownOption) {
				ms = nil
			}
		}
		if len(ms) == 0 {
			ms = defaultMergers()
		}
		out, err := compile(ms).merge(merged, cfg, "")
		if err != nil {
			errs = append(errs, &Problem{Source: src.Name, Err: fmt.Errorf("ignored: merging with %s: %w", ms, err)})
			continue
		}
		merged = out.(map[string]any)
	}
	return merged, errors.Join(errs...)
}

// Problem is a configuration source that could not be (fully) used.
type Problem struct {
	Source string
	Err    error
}

func (p *Problem) Error() string { return p.Source + ": " + p.Err.Error() }
func (p *Problem) Unwrap() error { return p.Err }
