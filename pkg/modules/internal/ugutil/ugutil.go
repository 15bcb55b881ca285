// Package ugutil is cloud-init's ug_util for cloudroot's modules: the
// users, user and groups keys of a cloud-config normalised into typed
// users and groups, as users_groups, set_passwords, ssh, ssh_import_id,
// ssh_console and byobu read them. It lives apart from both pkg/modules
// and the users family because modules in each use it.
//
// Users and groups from cloud-config, normalised the way cloud-init's
// ug_util.normalize_users_groups does:
//
//   - users: a list (of names, comma strings, or dicts with a name), a comma
//     string, or a dict name → true/false/dict. Absent means [default], as
//     cloud-init's base cloud.cfg sets it. "default" (or a dict without a
//     name) stands for the distro default user: system_info.default_user
//     when the config has it (null there means no default user), else the
//     distro's built-in one.
//   - user: a name or a dict; it becomes (and is merged into) the default
//     user, and adds "default" to users.
//   - groups: a comma string, a list of names and {group: members} dicts,
//     or a dict group → members.
//   - Keys have '-' replaced by '_'. The default user's config is merged
//     with precedence: the entry with its real name, then the "default"
//     entry, then user:, then the distro's; its groups are the union of the
//     distro's and the entry's. A name given twice keeps the first value of
//     a key. The default user is created last, as in cloud-init (its dict
//     entry is re-inserted after the others).
//   - Dict keys carry no order in a decoded YAML map, so names from a dict
//     are taken in sorted order.
package ugutil

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/internal/pyval"
)

// Secret is a string (a password or hash) that never reaches a log.
type Secret string

// LogValue redacts the secret for slog.
func (s Secret) LogValue() slog.Value {
	if s == "" {
		return slog.StringValue("")
	}
	return slog.StringValue("REDACTED")
}

// String redacts the secret for fmt.
func (s Secret) String() string { return s.LogValue().String() }

// User is one normalised users: entry, with cloud-init's keys.
type User struct {
	Name string
	// Default marks the distro default user.
	Default      bool
	Gecos        string
	PrimaryGroup string
	Groups       []string
	Shell        string
	Homedir      string
	// Sudo are sudoers rules (without the user name); nil means none.
	Sudo []string
	Doas []string
	// LockPasswd defaults to true.
	LockPasswd      bool
	HashedPasswd    Secret
	Passwd          Secret // useradd --password (legacy key); only for new users
	PlainTextPasswd Secret
	// SSHAuthorizedKeys were given (even empty) when SSHAuthorizedKeysSet.
	SSHAuthorizedKeys    []string
	SSHAuthorizedKeysSet bool
	SSHImportID          []string
	// SSHRedirectUser is ssh_redirect_user: true or "default".
	SSHRedirectUser bool
	System          bool
	UID             *int
	NoCreateHome    bool
	NoUserGroup     bool
	// CreateGroups defaults to true.
	CreateGroups bool
	SELinuxUser  string
	ExpireDate   string
	Inactive     *int
	Snapuser     string
	// Keys are the normalised keys that were given, sorted.
	Keys []string
}

// LogValue keeps secrets and keys out of logs.
func (u User) LogValue() slog.Value {
	return slog.GroupValue(slog.String("name", u.Name), slog.Bool("default", u.Default), slog.Any("keys", u.Keys))
}

// Group is one normalised groups: entry.
type Group struct {
	Name    string
	Members []string
}

// Normalize returns the users (in creation order), the default user (nil
// when none) and the groups from k. distroDefault is the distro's built-in
// default user (distro.Info.DefaultUser), used when the config has no
// system_info.default_user. Format problems are given to warn; err joins
// the entries that could not be normalised, while the returned lists hold
// all the others.
func Normalize(k Keys, distroDefault map[string]any, warn func(string, ...any)) (users []User, defaultUser *User, groups []Group, err error) {
	var errs []error
	if k.HasGroups {
		if k.Groups.Err != nil {
			errs = append(errs, fmt.Errorf("groups: %w", k.Groups.Err))
		}
		groups = k.Groups.List
	}

	oldUser := k.User.Entry
	if k.User.BadType != "" {
		warn("Format for 'user' key must be a string or dictionary and not %s", k.User.BadType)
	}
	defUser := merge(oldUser, defaultEntry(k, distroDefault))

	base := Users{Items: []UserItem{{Names: []string{"default"}}}}
	if k.HasUsers {
		base = k.Users
	}
	if base.BadType != "" {
		warn("Format for 'users' key must be a comma-separated string or a dictionary or a list but found %s", base.BadType)
		base = Users{}
	}
	if oldUser != nil && !(base.Dict && base.HasDefault) {
		base.Items = append(slices.Clip(base.Items), UserItem{Names: []string{"default"}})
	}

	entries, err := normalizeUserEntries(base, defUser)
	if err != nil {
		errs = append(errs, fmt.Errorf("users: %w", err))
	}
	for _, e := range entries {
		u, hard, soft := toUser(e.name, e.cfg, e.def)
		if err := errors.Join(hard, soft); err != nil {
			errs = append(errs, fmt.Errorf("user %s: %w", e.name, err))
		}
		if hard == nil {
			// A bad sudo or doas value is reported, but the user is still
			// created, as in cloud-init (which fails after useradd).
			users = append(users, u)
		}
	}
	for i := range users {
		if users[i].Default {
			defaultUser = &users[i]
			break
		}
	}
	return users, defaultUser, groups, errors.Join(errs...)
}

// defaultEntry is system_info.default_user when the config has it (nil
// when null or not a mapping), else the distro's built-in default user.
func defaultEntry(k Keys, distroDefault map[string]any) *Entry {
	if k.SystemInfo.HasDefaultUser {
		return k.SystemInfo.DefaultUser
	}
	if distroDefault == nil {
		return nil
	}
	return decodeEntry(distroDefault, false)
}

type userEntry struct {
	name string
	cfg  *Entry
	def  bool
}

// normalizeUserEntries is ug_util._normalize_users.
func normalizeUserEntries(base Users, defUser *Entry) ([]userEntry, error) {
	errs := slices.Clone(base.Errs)
	var order []string
	users := map[string]*Entry{}
	put := func(n string, cfg *Entry) {
		if _, ok := users[n]; !ok {
			order = append(order, n)
		}
		users[n] = cfg
	}
	for _, it := range base.Items {
		switch {
		case it.Entry != nil:
			n := "default"
			if it.Entry.Name.Set {
				n = it.Entry.Name.V
			}
			if n == "" {
				errs = append(errs, errors.New("user entry with an empty name"))
				continue
			}
			put(n, merge(users[n], it.Entry.without("name")))
		case it.BadType != "":
			errs = append(errs, fmt.Errorf("user config must be dictionary/list or string types only and not %s", it.BadType))
		default:
			for _, n := range it.Names {
				if _, ok := users[n]; !ok {
					put(n, &Entry{})
				}
			}
		}
	}

	defName := ""
	if defConfig, ok := users["default"]; ok {
		order = slices.DeleteFunc(order, func(s string) bool { return s == "default" })
		delete(users, "default")
		if !defUser.empty() {
			defName = defUser.Name.V
			d := defUser.without("name", "groups")
			if defName == "" {
				errs = append(errs, errors.New("default user has no name"))
			} else {
				parsed := users[defName]
				if parsed == nil {
					parsed = &Entry{}
				}
				order = slices.DeleteFunc(order, func(s string) bool { return s == defName })
				delete(users, defName)
				// The groups of both, as one comma string (as ug_util
				// joins them).
				joined := strings.Join(uniqMergeSorted(parsed.Groups.list(), defUser.Groups.list()), ",")
				p := *parsed
				p.Groups = Names{Set: true, V: UniqMerge(joined)}
				p.keys = addKey(p.keys, "groups")
				put(defName, merge(&p, merge(defConfig, d)))
			}
		}
	}
	out := make([]userEntry, 0, len(order))
	for _, n := range order {
		out = append(out, userEntry{name: n, cfg: users[n], def: defName != "" && n == defName})
	}
	return out, errors.Join(errs...)
}

// list is the names as util.uniq_merge reads the value: a mapping gives
// none.
func (n Names) list() []string {
	if n.Dict {
		return nil
	}
	return n.V
}

// empty reports whether no key was given.
func (e *Entry) empty() bool { return e == nil || len(e.keys) == 0 }

// without is a copy of e without the keys named.
func (e *Entry) without(keys ...string) *Entry {
	c := *e
	c.keys = slices.DeleteFunc(slices.Clone(e.keys), func(k string) bool { return slices.Contains(keys, k) })
	for _, k := range keys {
		switch k {
		case "name":
			c.Name = Str{}
		case "groups":
			c.Groups = Names{}
		}
	}
	return &c
}

func addKey(keys []string, k string) []string {
	if slices.Contains(keys, k) {
		return keys
	}
	return append(slices.Clone(keys), k)
}

// merge is util.mergemanydict of two user configs: high's keys win, and
// where both give a mapping (groups, ssh_authorized_keys) the mappings
// are merged, high's values winning. Neither input is modified.
func merge(high, low *Entry) *Entry {
	switch {
	case high == nil && low == nil:
		return nil
	case high == nil:
		c := *low
		return &c
	case low == nil:
		c := *high
		return &c
	}
	out := &Entry{
		Name:              pick(high.Name, low.Name),
		Gecos:             pick(high.Gecos, low.Gecos),
		PrimaryGroup:      pick(high.PrimaryGroup, low.PrimaryGroup),
		Groups:            pick(high.Groups, low.Groups),
		Shell:             pick(high.Shell, low.Shell),
		Homedir:           pick(high.Homedir, low.Homedir),
		Sudo:              pick(high.Sudo, low.Sudo),
		Doas:              pick(high.Doas, low.Doas),
		LockPasswd:        pick(high.LockPasswd, low.LockPasswd),
		HashedPasswd:      pick(high.HashedPasswd, low.HashedPasswd),
		Passwd:            pick(high.Passwd, low.Passwd),
		PlainTextPasswd:   pick(high.PlainTextPasswd, low.PlainTextPasswd),
		SSHAuthorizedKeys: pick(high.SSHAuthorizedKeys, low.SSHAuthorizedKeys),
		SSHImportID:       pick(high.SSHImportID, low.SSHImportID),
		SSHRedirectUser:   pick(high.SSHRedirectUser, low.SSHRedirectUser),
		System:            pick(high.System, low.System),
		UID:               pick(high.UID, low.UID),
		NoCreateHome:      pick(high.NoCreateHome, low.NoCreateHome),
		NoUserGroup:       pick(high.NoUserGroup, low.NoUserGroup),
		CreateGroups:      pick(high.CreateGroups, low.CreateGroups),
		SELinuxUser:       pick(high.SELinuxUser, low.SELinuxUser),
		ExpireDate:        pick(high.ExpireDate, low.ExpireDate),
		Inactive:          pick(high.Inactive, low.Inactive),
		Snapuser:          pick(high.Snapuser, low.Snapuser),
		keys:              slices.Clone(low.keys),
	}
	for _, k := range high.keys {
		out.keys = addKey(out.keys, k)
	}
	if high.Groups.Dict && low.Groups.Dict {
		out.Groups.V = slices.Compact(slices.Sorted(slices.Values(append(slices.Clone(high.Groups.V), low.Groups.V...))))
	}
	if high.SSHAuthorizedKeys.Dict != nil && low.SSHAuthorizedKeys.Dict != nil {
		d := slices.Clone(high.SSHAuthorizedKeys.Dict)
		for _, kt := range low.SSHAuthorizedKeys.Dict {
			if !slices.ContainsFunc(d, func(h keyText) bool { return h.key == kt.key }) {
				d = append(d, kt)
			}
		}
		slices.SortFunc(d, func(a, b keyText) int { return strings.Compare(a.key, b.key) })
		out.SSHAuthorizedKeys.Dict = d
	}
	return out
}

// setter is a field that knows whether its key was given.
type setter interface {
	Str | Names | Rules | Flag | AuthKeys | List | Redirect | Int | Date
}

// pick is high when its key was given, else low.
func pick[T setter](high, low T) T {
	if isSet(high) {
		return high
	}
	return low
}

func isSet(v any) bool {
	switch t := v.(type) {
	case Str:
		return t.Set
	case Names:
		return t.Set
	case Rules:
		return t.Set
	case Flag:
		return t.Set
	case AuthKeys:
		return t.Set
	case List:
		return t.Set
	case Redirect:
		return t.Set
	case Int:
		return t.Set
	case Date:
		return t.Set
	}
	return false
}

// toUser converts a normalised user config. hard errors prevent creating
// the user; soft ones (sudo, doas) only lose that key. Errors come in key
// order.
func toUser(name string, e *Entry, def bool) (u User, hard, soft error) {
	u = User{
		Name:              name,
		Default:           def,
		Gecos:             e.Gecos.V,
		PrimaryGroup:      e.PrimaryGroup.V,
		Shell:             e.Shell.V,
		Homedir:           e.Homedir.V,
		Sudo:              e.Sudo.V,
		Doas:              e.Doas.V,
		LockPasswd:        e.LockPasswd.Translate(true),
		HashedPasswd:      Secret(e.HashedPasswd.V),
		Passwd:            Secret(e.Passwd.V),
		PlainTextPasswd:   Secret(e.PlainTextPasswd.V),
		SSHAuthorizedKeys: e.SSHAuthorizedKeys.Keys(),
		// ssh_authorized_keys given, even empty.
		SSHAuthorizedKeysSet: e.SSHAuthorizedKeys.Set,
		SSHImportID:          e.SSHImportID.V,
		SSHRedirectUser:      e.SSHRedirectUser.V,
		System:               e.System.Truth(),
		NoCreateHome:         e.NoCreateHome.Truth(),
		NoUserGroup:          e.NoUserGroup.Truth(),
		CreateGroups:         e.CreateGroups.Translate(true),
		SELinuxUser:          e.SELinuxUser.V,
		ExpireDate:           e.ExpireDate.V,
		Snapuser:             e.Snapuser.V,
		Keys:                 slices.Sorted(slices.Values(slices.DeleteFunc(slices.Clone(e.keys), func(k string) bool { return k == "default" || k == "name" }))),
	}
	u.Groups = e.Groups.V
	var hards []error
	if err := e.Inactive.Err("inactive"); err != nil {
		hards = append(hards, err)
	} else {
		u.Inactive = e.Inactive.V
	}
	if err := e.SSHRedirectUser.Err(); err != nil {
		hards = append(hards, err)
	}
	if err := e.UID.Err("uid"); err != nil {
		hards = append(hards, err)
	} else {
		u.UID = e.UID.V
	}
	softs := []error{e.Doas.Err("doas"), e.Sudo.Err("sudo")}
	return u, errors.Join(hards...), errors.Join(softs...)
}

// UniqMerge is util.uniq_merge: strings are split on commas; elements are
// trimmed, empties dropped, first occurrence kept.
func UniqMerge(lists ...any) []string {
	var out []string
	seen := map[string]bool{}
	addOne := func(s string) {
		if s = strings.TrimSpace(s); s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for _, l := range lists {
		switch t := l.(type) {
		case string:
			for s := range strings.SplitSeq(t, ",") {
				addOne(s)
			}
		case []any:
			for _, e := range t {
				addOne(pyval.ScalarStr(e))
			}
		case []string:
			for _, e := range t {
				addOne(e)
			}
		}
	}
	return out
}

func uniqMergeSorted(lists ...any) []string {
	out := UniqMerge(lists...)
	slices.Sort(out)
	return out
}

// KeyList is an ssh_authorized_keys value as users entries read it: a
// string, a list, or a mapping (values in key order).
func KeyList(v any) []string {
	var k AuthKeys
	_ = k.UnmarshalPy(nil, v)
	return k.Keys()
}
