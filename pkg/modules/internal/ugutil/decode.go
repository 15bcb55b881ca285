package ugutil

// The shapes the users, user and groups keys accept, decoded by pyval's
// decoder (each type here is a pyval.Unmarshaler). A decoder never fails
// on them: a value of a shape cloud-init refuses is recorded (the type
// name for the warning, or the error) and Normalize reports it, as
// ug_util raises or warns while the other entries still apply.

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cloudroot/cloudroot/pkg/internal/pyval"
)

// Keys are the keys users and groups are normalised from, decoded; a
// module reading them declares them inline (`cfg:",inline"`).
type Keys struct {
	HasGroups bool    `cfg:"groups,present"`
	Groups    Groups  `cfg:"groups"`
	User      OldUser `cfg:"user"`
	HasUsers  bool    `cfg:"users,present"`
	Users     Users   `cfg:"users"`
	// SystemInfo.DefaultUser is nil when null or not a mapping.
	SystemInfo struct {
		HasDefaultUser bool   `cfg:"default_user,present"`
		DefaultUser    *Entry `cfg:"default_user,loose"`
	} `cfg:"system_info,loose"`
}

// item is one key of a mapping with its value.
type item struct {
	key string
	val any
}

// items are m's keys and values in key order (a decoded mapping keeps no
// order of its own).
func items(m map[string]any) []item {
	out := make([]item, 0, len(m))
	for k, v := range m {
		out = append(out, item{k, v})
	}
	slices.SortFunc(out, func(a, b item) int { return cmp.Compare(a.key, b.key) })
	return out
}

// mapping is v as a mapping, ok false when v is not one.
func mapping(v any) (map[string]any, bool) {
	var m map[string]any
	if v == nil || (&pyval.Decoder{}).DecodeValue("", v, &m) != nil {
		return nil, false
	}
	return m, true
}

// Groups is the groups key: a comma string, a list of names and
// {group: members} mappings, or a mapping group → members
// (ug_util._normalize_groups).
type Groups struct {
	List []Group
	Err  error
}

// UnmarshalPy implements pyval.Unmarshaler.
func (g *Groups) UnmarshalPy(_ *pyval.Decoder, v any) error {
	var order []string
	members := map[string][]string{}
	add := func(name string, ms ...string) {
		if _, ok := members[name]; !ok {
			order = append(order, name)
			members[name] = []string{}
		}
		members[name] = append(members[name], ms...)
	}
	var errs []error
	if m, ok := mapping(v); ok {
		for _, it := range items(m) {
			add(it.key, UniqMerge(it.val)...)
		}
	} else {
		switch t := v.(type) {
		case string:
			for _, n := range UniqMerge(t) {
				add(n)
			}
		case []any:
			for _, e := range t {
				if em, ok := mapping(e); ok {
					for _, it := range items(em) {
						switch it.val.(type) {
						case string, []any:
							add(it.key, UniqMerge(it.val)...)
						default:
							errs = append(errs, fmt.Errorf("bad group member type %s for group %s", pyval.TypeName(it.val), it.key))
						}
					}
					continue
				}
				switch e := e.(type) {
				case string:
					if n := strings.TrimSpace(e); n != "" {
						add(n)
					}
				default:
					errs = append(errs, fmt.Errorf("unknown group name type %s", pyval.TypeName(e)))
				}
			}
		default:
			g.Err = fmt.Errorf("group config must be list, dict or string type only but found %s", pyval.TypeName(v))
			return nil
		}
	}
	g.List = make([]Group, 0, len(order))
	for _, n := range order {
		g.List = append(g.List, Group{Name: n, Members: slices.Compact(slices.Sorted(slices.Values(members[n])))})
	}
	g.Err = errors.Join(errs...)
	return nil
}

// OldUser is the user key: a name or a mapping, which becomes the default
// user. Truthy values only; another shape is warned about.
type OldUser struct {
	Entry *Entry
	// BadType is the type name of a value of another shape.
	BadType string
}

// UnmarshalPy implements pyval.Unmarshaler.
func (o *OldUser) UnmarshalPy(_ *pyval.Decoder, v any) error {
	if !pyval.Truthy(v) {
		return nil
	}
	if m, ok := mapping(v); ok {
		o.Entry = decodeEntry(m, false)
		return nil
	}
	if s, ok := v.(string); ok {
		o.Entry = &Entry{Name: Str{Set: true, V: s}, keys: []string{"name"}}
		return nil
	}
	o.BadType = pyval.TypeName(v)
	return nil
}

// Users is the users key: a list (of names, comma strings, lists of names
// or mappings with a name), a comma string, or a mapping name →
// true/false/mapping.
type Users struct {
	Items []UserItem
	// Dict is set when users was a mapping; HasDefault when it had a
	// "default" key.
	Dict, HasDefault bool
	// BadType is the type name of a value of another shape.
	BadType string
	// Errs are the mapping's values cloud-init cannot map.
	Errs []error
}

// UserItem is one item of the users list: names, or one user's config.
type UserItem struct {
	Names []string
	Entry *Entry
	// BadType is the type name of an item of another shape.
	BadType string
}

// UnmarshalPy implements pyval.Unmarshaler.
func (u *Users) UnmarshalPy(_ *pyval.Decoder, v any) error {
	if m, ok := mapping(v); ok {
		u.Dict = true
		for _, it := range items(m) {
			if it.key == "default" {
				u.HasDefault = true
			}
			if em, ok := mapping(it.val); ok {
				e := decodeEntry(em, true)
				e.Name = Str{Set: true, V: it.key}
				u.Items = append(u.Items, UserItem{Entry: e})
				continue
			}
			switch it.val.(type) {
			case bool, int, int64, uint64, float64, string:
				if pyval.IsTrue(it.val) {
					u.Items = append(u.Items, UserItem{Names: []string{it.key}})
				}
			default:
				u.Errs = append(u.Errs, fmt.Errorf("unmappable user value type %s for key %s", pyval.TypeName(it.val), it.key))
			}
		}
		return nil
	}
	switch t := v.(type) {
	case string:
		for _, n := range uniqMergeSorted(t) {
			u.Items = append(u.Items, UserItem{Names: []string{n}})
		}
	case []any:
		for _, e := range t {
			if em, ok := mapping(e); ok {
				u.Items = append(u.Items, UserItem{Entry: decodeEntry(em, true)})
				continue
			}
			switch e.(type) {
			case string, []any:
				u.Items = append(u.Items, UserItem{Names: UniqMerge(e)})
			default:
				u.Items = append(u.Items, UserItem{BadType: pyval.TypeName(e)})
			}
		}
	default:
		u.BadType = pyval.TypeName(v)
	}
	return nil
}

// Entry is one user's configuration as given: each field's Set says
// whether its key was. Keys are cloud-init's; in a users entry '-' is
// read as '_' (lock-passwd is lock_passwd).
type Entry struct {
	Name              Str      `cfg:"name"`
	Gecos             Str      `cfg:"gecos"`
	PrimaryGroup      Str      `cfg:"primary_group"`
	Groups            Names    `cfg:"groups"`
	Shell             Str      `cfg:"shell"`
	Homedir           Str      `cfg:"homedir"`
	Sudo              Rules    `cfg:"sudo"`
	Doas              Rules    `cfg:"doas"`
	LockPasswd        Flag     `cfg:"lock_passwd"`
	HashedPasswd      Str      `cfg:"hashed_passwd"`
	Passwd            Str      `cfg:"passwd"`
	PlainTextPasswd   Str      `cfg:"plain_text_passwd"`
	SSHAuthorizedKeys AuthKeys `cfg:"ssh_authorized_keys"`
	SSHImportID       List     `cfg:"ssh_import_id"`
	SSHRedirectUser   Redirect `cfg:"ssh_redirect_user"`
	System            Flag     `cfg:"system"`
	UID               Int      `cfg:"uid"`
	NoCreateHome      Flag     `cfg:"no_create_home"`
	NoUserGroup       Flag     `cfg:"no_user_group"`
	CreateGroups      Flag     `cfg:"create_groups"`
	SELinuxUser       Str      `cfg:"selinux_user"`
	ExpireDate        Date     `cfg:"expiredate"`
	Inactive          Int      `cfg:"inactive"`
	Snapuser          Str      `cfg:"snapuser"`
	// keys are the keys given (those the fields read and any other).
	keys []string
}

// UnmarshalPy implements pyval.Unmarshaler for system_info.default_user:
// a mapping, its keys as given.
func (e *Entry) UnmarshalPy(_ *pyval.Decoder, v any) error {
	m, ok := mapping(v)
	if !ok {
		return fmt.Errorf("default_user: expected a mapping, got %s", pyval.TypeName(v))
	}
	*e = *decodeEntry(m, false)
	return nil
}

// entryFields is Entry without its UnmarshalPy, for the decoder's walk
// over the tags.
type entryFields Entry

// decodeEntry decodes a user's mapping; clean reads '-' in a key as '_'
// (ug_util does so for users entries, after taking their name).
func decodeEntry(m map[string]any, clean bool) *Entry {
	e := &Entry{}
	given := make(map[string]any, len(m))
	for _, it := range items(m) {
		k := it.key
		if clean && k != "name" {
			if k = strings.TrimSpace(strings.ReplaceAll(k, "-", "_")); k == "" || k == "name" {
				continue
			}
		}
		given[k] = it.val
		if !slices.Contains(e.keys, k) {
			e.keys = append(e.keys, k)
		}
	}
	// Every field type decodes any value: the decoder reports nothing.
	_ = (&pyval.Decoder{}).Decode(given, (*entryFields)(e))
	return e
}

// Str is a key read as text (pyval.ScalarStr: a mapping or a list is "").
type Str struct {
	Set bool
	V   string
}

// UnmarshalPy implements pyval.Unmarshaler.
func (s *Str) UnmarshalPy(_ *pyval.Decoder, v any) error {
	*s = Str{Set: true, V: pyval.ScalarStr(v)}
	return nil
}

// Flag is a boolean key, kept as given: lock_passwd and create_groups
// read it with translate_bool (default true), the others by its truth.
type Flag struct {
	Set bool
	raw any
}

// UnmarshalPy implements pyval.Unmarshaler.
func (f *Flag) UnmarshalPy(_ *pyval.Decoder, v any) error {
	*f = Flag{Set: true, raw: v}
	return nil
}

// Translate is translate_bool of the value, def when absent or unknown.
func (f Flag) Translate(def bool) bool {
	if !f.Set {
		return def
	}
	return pyval.TranslateBool(f.raw, def)
}

// Truth is the value's truth (false when absent).
func (f Flag) Truth() bool { return f.Set && pyval.Truthy(f.raw) }

// Names is a list of names given as a comma string or a list (V, merged
// as util.uniq_merge does), or as a mapping (Dict: V are its keys,
// sorted).
type Names struct {
	Set  bool
	Dict bool
	V    []string
}

// UnmarshalPy implements pyval.Unmarshaler.
func (n *Names) UnmarshalPy(_ *pyval.Decoder, v any) error {
	*n = Names{Set: true}
	if m, ok := mapping(v); ok {
		n.Dict = true
		for _, it := range items(m) {
			n.V = append(n.V, it.key)
		}
		return nil
	}
	switch v.(type) {
	case string, []any, []string:
		n.V = UniqMerge(v)
	}
	return nil
}

// Rules are sudo or doas rules: a string or a list of strings; null, false
// or "" mean none. Another shape is an error (Err, with %[1]s for the key).
type Rules struct {
	Set bool
	V   []string
	err string
}

// UnmarshalPy implements pyval.Unmarshaler.
func (r *Rules) UnmarshalPy(_ *pyval.Decoder, v any) error {
	*r = Rules{Set: true}
	switch t := v.(type) {
	case nil:
	case bool:
		if t {
			r.err = "can not create %[1]s rule addition with type bool"
		}
	case string:
		if t != "" {
			r.V = []string{t}
		}
	case []any:
		for _, e := range t {
			s, ok := e.(string)
			if !ok {
				r.V, r.err = nil, "%[1]s rule of type "+pyval.TypeName(e)
				break
			}
			r.V = append(r.V, s)
		}
	default:
		r.err = "can not create %[1]s rule addition with type " + pyval.TypeName(v)
	}
	return nil
}

// Err is the error for a rule of the wrong shape under key.
func (r Rules) Err(key string) error {
	if r.err == "" {
		return nil
	}
	return fmt.Errorf(r.err, key)
}

// AuthKeys is ssh_authorized_keys: a string, a list, or a mapping (its
// values, in key order).
type AuthKeys struct {
	Set bool
	// Dict holds a mapping's values (as text) in key order.
	Dict []keyText
	V    []string
}

// keyText is one key of a mapping with its value as text.
type keyText struct{ key, text string }

// UnmarshalPy implements pyval.Unmarshaler.
func (a *AuthKeys) UnmarshalPy(_ *pyval.Decoder, v any) error {
	*a = AuthKeys{Set: true}
	if m, ok := mapping(v); ok {
		a.Dict = []keyText{}
		for _, it := range items(m) {
			a.Dict = append(a.Dict, keyText{it.key, pyval.ScalarStr(it.val)})
		}
		return nil
	}
	switch t := v.(type) {
	case string:
		a.V = []string{t}
	case []any:
		a.V = pyval.ScalarList(t)
	}
	return nil
}

// Keys are the keys given.
func (a AuthKeys) Keys() []string {
	if a.Dict == nil {
		return a.V
	}
	var out []string
	for _, kt := range a.Dict {
		if kt.text != "" {
			out = append(out, kt.text)
		}
	}
	return out
}

// List is a string or a list of scalars (pyval.ScalarList).
type List struct {
	Set bool
	V   []string
}

// UnmarshalPy implements pyval.Unmarshaler.
func (l *List) UnmarshalPy(_ *pyval.Decoder, v any) error {
	*l = List{Set: true, V: pyval.ScalarList(v)}
	return nil
}

// Redirect is ssh_redirect_user: true or "default"; false or null mean
// no. Another value is an error.
type Redirect struct {
	Set bool
	V   bool
	bad string
}

// UnmarshalPy implements pyval.Unmarshaler.
func (r *Redirect) UnmarshalPy(_ *pyval.Decoder, v any) error {
	*r = Redirect{Set: true}
	switch v {
	case true, "default":
		r.V = true
	case false, nil:
	default:
		r.bad = fmt.Sprint(v)
	}
	return nil
}

// Err is the error for a value of another kind.
func (r Redirect) Err() error {
	if r.bad == "" {
		return nil
	}
	return fmt.Errorf("ssh_redirect_user must be true or \"default\", not %s", r.bad)
}

// Int is an integer key (uid, inactive): an int, an integral float or a
// string of digits; null is absent.
type Int struct {
	Set bool
	V   *int
	bad string
}

// UnmarshalPy implements pyval.Unmarshaler.
func (n *Int) UnmarshalPy(_ *pyval.Decoder, v any) error {
	*n = Int{Set: true}
	switch t := v.(type) {
	case nil:
		return nil
	case int:
		n.V = &t
		return nil
	case int64:
		i := int(t)
		n.V = &i
		return nil
	case uint64:
		i := int(t)
		n.V = &i
		return nil
	case float64:
		if t == float64(int(t)) {
			i := int(t)
			n.V = &i
			return nil
		}
	case string:
		if i, err := strconv.Atoi(strings.TrimSpace(t)); err == nil {
			n.V = &i
			return nil
		}
	}
	n.bad = fmt.Sprint(v)
	return nil
}

// Err is the error for a value that is not an integer, under key.
func (n Int) Err(key string) error {
	if n.bad == "" {
		return nil
	}
	return fmt.Errorf("%s %s is not an integer", key, n.bad)
}

// Date is expiredate: a YAML date or text.
type Date struct {
	Set bool
	V   string
}

// UnmarshalPy implements pyval.Unmarshaler.
func (d *Date) UnmarshalPy(_ *pyval.Decoder, v any) error {
	*d = Date{Set: true, V: pyval.ScalarStr(v)}
	if t, ok := v.(time.Time); ok {
		d.V = t.Format(time.DateOnly)
	}
	return nil
}
