package pyval

import (
	"slices"
	"strings"
)

// Dict is a mapping of cloud-config decoded entry by entry, for the
// modules that walk a mapping whose keys are data (apt sources, yum and
// zypper repos, debconf selections): its entries in key order. The merged
// cloud-config is a Go map and keeps no document order, so where
// cloud-init walks a dict in insertion order cloudroot walks it sorted, as
// it always has. A value that is no mapping gives no entries and leaves
// Mapping unset.
type Dict struct {
	// Mapping is set when the value was a mapping (even an empty one).
	Mapping bool
	Entries []Entry
}

// Entry is one key of a Dict and its value as decoded.
type Entry struct {
	Key   string
	Value any
}

// DictOf is v's entries, sorted by key.
func DictOf(v any) Dict {
	m, ok := v.(map[string]any)
	if !ok {
		return Dict{}
	}
	d := Dict{Mapping: true, Entries: make([]Entry, 0, len(m))}
	for k, e := range m {
		d.Entries = append(d.Entries, Entry{k, e})
	}
	slices.SortFunc(d.Entries, func(a, b Entry) int { return strings.Compare(a.Key, b.Key) })
	return d
}

// UnmarshalPy implements Unmarshaler: a field of type Dict is its key's
// value as DictOf reads it (never an error).
func (d *Dict) UnmarshalPy(_ *Decoder, v any) error {
	*d = DictOf(v)
	return nil
}

// Get is the value at key and whether the mapping has key.
func (d Dict) Get(key string) (any, bool) {
	for _, e := range d.Entries {
		if e.Key == key {
			return e.Value, true
		}
	}
	return nil, false
}

// Len is the number of entries.
func (d Dict) Len() int { return len(d.Entries) }

// List is a string or a list as cloud-init's callers iterate it (for a
// command, arches, suites): a string is a one-item list, a list gives
// ScalarStr of each item ("" kept, so a null item is ""); anything else
// is nil. StringList and ScalarList drop empty items; List keeps them,
// as cloudroot's modules always have where they index the result.
type List []string

// ListOf is v as a List.
func ListOf(v any) List {
	switch t := v.(type) {
	case string:
		return List{t}
	case []any:
		out := make(List, 0, len(t))
		for _, e := range t {
			out = append(out, ScalarStr(e))
		}
		return out
	}
	return nil
}

// UnmarshalPy implements Unmarshaler (never an error).
func (l *List) UnmarshalPy(_ *Decoder, v any) error {
	*l = ListOf(v)
	return nil
}

// StrIfTrue is str(v) when v is true in Python's sense, else "": what
// cloud-init writes for `if value: f"{key}={value}"`.
func StrIfTrue(v any) string {
	if !Truthy(v) {
		return ""
	}
	return Str(v)
}
