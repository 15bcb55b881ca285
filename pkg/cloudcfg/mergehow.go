package cloudcfg

// Parsing merge_how / merge_type / Merge-Type and the registry of merge
// modes; merge.go holds the rules.

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// Default merger strings.
const (
	// DefaultPartMergeHow merges the cloud-config parts of one user-data
	// when a part says nothing (handlers/cloud_config.py DEF_MERGERS).
	DefaultPartMergeHow = "dict(replace)+list()+str()"
	// DefaultMergeHow merges configuration sources (mergers.DEF_MERGE_TYPE).
	DefaultMergeHow = "list()+dict()+str()"
)

// Keys cloud-config uses to choose mergers.
const (
	KeyMergeHow  = "merge_how"
	KeyMergeType = "merge_type"
)

// ErrUnknownOption is wrapped by ParseMergeHow when an option is not one the
// merger knows; the Mergers returned alongside are usable (the option is
// ignored, as in cloud-init).
var ErrUnknownOption = errors.New("unknown merge option")

// Merger is one parsed merger: a canonical name (dict, list, str) and its
// options as given.
type Merger struct {
	Name    string
	Options []string
}

// Mergers is an ordered merger list; for each type the first one applies.
type Mergers []Merger

// String renders m in cloud-init's string form.
func (m Mergers) String() string {
	var parts []string
	for _, x := range m {
		parts = append(parts, x.Name+"("+strings.Join(x.Options, ",")+")")
	}
	return strings.Join(parts, "+")
}

// Mode documents one merger option (the registry behind docs/configuration.md).
type Mode struct {
	Merger string
	Option string
	// Default is set for the behaviour used when no method option is given.
	Default bool
	Doc     string
}

// Modes lists every merger and option cloudroot understands, in the order
// they are documented.
func Modes() []Mode {
	return []Mode{
		{"dict", "no_replace", true, "keep the old value of a key both sides have (but merge into it when the new value is a mapping)"},
		{"dict", "replace", false, "the new value of a key replaces the old one"},
		{"dict", "allow_delete", false, "a new value of null removes the key"},
		{"dict", "recurse_dict", true, "merge a new mapping into the old value (always on)"},
		{"dict", "recurse_array", false, "with no_replace, merge a new list into the old value with the list merger; alias recurse_list"},
		{"dict", "recurse_list", false, "same as recurse_array"},
		{"dict", "recurse_str", false, "with no_replace, merge a new string into the old value with the str merger"},
		{"list", "replace", true, "a new non-list replaces the list; a new list replaces items index by index, keeping the old length"},
		{"list", "append", false, "old items, then new items"},
		{"list", "prepend", false, "new items, then old items"},
		{"list", "no_replace", false, "keep the old list"},
		{"list", "recurse_dict", false, "with replace, merge a new mapping item into the old item"},
		{"list", "recurse_array", false, "with replace, merge a new list item into the old item; alias recurse_list"},
		{"list", "recurse_list", false, "same as recurse_array"},
		{"list", "recurse_str", false, "with replace, merge a new string item into the old item"},
		{"str", "append", false, "old string followed by the new one"},
		{"str", "replace", true, "(no option) the new string replaces the old"},
	}
}

func knownOption(merger, opt string) bool {
	for _, m := range Modes() {
		if m.Merger == merger && m.Option == opt && !(merger == "str" && opt == "replace") {
			return true
		}
	}
	return false
}

var mergerRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([a-zA-Z_][A-Za-z0-9_]*)\((.*?)\)$`) })

// ParseMergeHow parses a merge_how / merge_type value or a Merge-Type
// header: a string in `name(opt,opt)+name()` form or a list of
// {name, settings} mappings or [name, opt...] lists. nil and "" give no
// mergers. An unknown option yields usable Mergers and an error wrapping
// ErrUnknownOption; any other error means v cannot be used.
func ParseMergeHow(v any) (Mergers, error) {
	var out Mergers
	var unknown []error
	add := func(name string, opts []string) error {
		name = strings.TrimPrefix(name, "m_")
		switch name {
		case "dict", "list", "str":
		default:
			return fmt.Errorf("unknown merger %q (want dict, list or str)", name)
		}
		for _, o := range opts {
			if !knownOption(name, o) {
				unknown = append(unknown, fmt.Errorf("%w %q for merger %s", ErrUnknownOption, o, name))
			}
		}
		out = append(out, Merger{Name: name, Options: opts})
		return nil
	}
	switch t := v.(type) {
	case nil:
		return nil, nil
	case string:
		for i, raw := range strings.Split(t, "+") {
			s := strings.ReplaceAll(strings.ToLower(strings.TrimSpace(raw)), "-", "_")
			if s == "" {
				continue
			}
			m := mergerRE().FindStringSubmatch(s)
			if m == nil {
				return nil, fmt.Errorf("merger %d %q: not in name(options) form", i+1, strings.TrimSpace(raw))
			}
			var opts []string
			for _, o := range strings.Split(m[2], ",") {
				if o = strings.TrimSpace(o); o != "" {
					opts = append(opts, o)
				}
			}
			if err := add(m[1], opts); err != nil {
				return nil, fmt.Errorf("merger %d: %w", i+1, err)
			}
		}
	case []any:
		for i, it := range t {
			var name string
			var opts []string
			switch e := it.(type) {
			case map[string]any:
				n, ok := e["name"].(string)
				if !ok {
					return nil, fmt.Errorf("merger %d: name must be a string, got %s", i+1, typeName(e["name"]))
				}
				name = strings.TrimSpace(strings.ReplaceAll(strings.ToLower(n), "-", "_"))
				s, ok := e["settings"]
				if !ok {
					return nil, fmt.Errorf("merger %d (%s): settings missing", i+1, n)
				}
				var err error
				if opts, err = stringList(s); err != nil {
					return nil, fmt.Errorf("merger %d (%s): settings: %w", i+1, n, err)
				}
			case []any:
				if len(e) == 0 {
					return nil, fmt.Errorf("merger %d: empty list", i+1)
				}
				all, err := stringList(e)
				if err != nil {
					return nil, fmt.Errorf("merger %d: %w", i+1, err)
				}
				name, opts = all[0], all[1:]
			default:
				return nil, fmt.Errorf("merger %d: want a mapping {name, settings} or a list [name, option...], got %s", i+1, typeName(it))
			}
			if name == "" {
				continue
			}
			if err := add(name, opts); err != nil {
				return nil, fmt.Errorf("merger %d: %w", i+1, err)
			}
		}
	default:
		return nil, fmt.Errorf("want a string or a list, got %s", typeName(v))
	}
	return out, errors.Join(unknown...)
}

func stringList(v any) ([]string, error) {
	switch t := v.(type) {
	case nil:
		return nil, nil
	case string:
		return []string{t}, nil
	case []any:
		out := make([]string, 0, len(t))
		for j, e := range t {
			s, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("item %d: want a string, got %s", j+1, typeName(e))
			}
			out = append(out, s)
		}
		return out, nil
	}
	return nil, fmt.Errorf("want a list of strings, got %s", typeName(v))
}

func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case bool:
		return "bool"
	case []any:
		return "list"
	case map[string]any:
		return "mapping"
	case int, int64, uint64, float64:
		return "number"
	}
	return fmt.Sprintf("%T", v)
}

// defaultPartMergers is DefaultPartMergeHow parsed.
func defaultPartMergers() Mergers {
	return Mergers{{Name: "dict", Options: []string{"replace"}}, {Name: "list"}, {Name: "str"}}
}

// defaultMergers is DefaultMergeHow parsed.
func defaultMergers() Mergers {
	return Mergers{{Name: "list"}, {Name: "dict"}, {Name: "str"}}
}
