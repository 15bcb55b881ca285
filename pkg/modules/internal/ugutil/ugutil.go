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
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

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
	return normalizeUsers(distroDefault, k, warn)
}

// Keys are the keys users and groups are normalised from, as given
// (Normalize walks them as cloud-init's ug_util does); a module reading
// them declares them inline (`cfg:",inline"`).
type Keys struct {
	HasGroups  bool `cfg:"groups,present"`
	Groups     any  `cfg:"groups"`
	User       any  `cfg:"user"`
	HasUsers   bool `cfg:"users,present"`
	Users      any  `cfg:"users"`
	SystemInfo struct {
		HasDefaultUser bool `cfg:"default_user,present"`
		// DefaultUser is nil when not a mapping.
		DefaultUser map[string]any `cfg:"default_user,loose"`
	} `cfg:"system_info,loose"`
}

func normalizeUsers(distroDefault map[string]any, cfg Keys, warn func(string, ...any)) ([]User, *User, []Group, error) {
	var errs []error
	var groups []Group
	if cfg.HasGroups {
		g, err := normalizeGroups(cfg.Groups)
		if err != nil {
			errs = append(errs, fmt.Errorf("groups: %w", err))
		}
		groups = g
	}

	var oldUser map[string]any
	if v := cfg.User; pyval.Truthy(v) {
		switch t := v.(type) {
		case string:
			oldUser = map[string]any{"name": t}
		case map[string]any:
			oldUser = deepCopy(t).(map[string]any)
		default:
			warn("Format for 'user' key must be a string or dictionary and not %s", pyval.TypeName(v))
		}
	}
	defUserCfg := mergeCfg(oldUser, defaultUserConfig(distroDefault, cfg))

	base := any([]any{"default"})
	if cfg.HasUsers {
		base = deepCopy(cfg.Users)
	}
	switch t := base.(type) {
	case []any, string:
	case map[string]any:
		if oldUser != nil {
			if _, ok := t["default"]; !ok {
				t["default"] = true
			}
		}
	default:
		warn("Format for 'users' key must be a comma-separated string or a dictionary or a list but found %s", pyval.TypeName(base))
		base = []any{}
	}
	if oldUser != nil {
		switch t := base.(type) {
		case []any:
			base = append(t, map[string]any{"name": "default"})
		case string:
			base = t + ",default"
		}
	}

	entries, err := normalizeUserEntries(base, defUserCfg)
	if err != nil {
		errs = append(errs, fmt.Errorf("users: %w", err))
	}
	var users []User
	var def *User
	for _, e := range entries {
		u, hard, soft := toUserConfig(e.name, e.cfg)
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
			def = &users[i]
			break
		}
	}
	return users, def, groups, errors.Join(errs...)
}

// defaultUserConfig is system_info.default_user when the config has it,
// else the distro's built-in default user.
func defaultUserConfig(distroDefault map[string]any, cfg Keys) map[string]any {
	if cfg.SystemInfo.HasDefaultUser {
		m := cfg.SystemInfo.DefaultUser
		if m == nil {
			return nil
		}
		return deepCopy(m).(map[string]any)
	}
	return distroDefault
}

type userEntry struct {
	name string
	cfg  map[string]any
}

// normalizeUserEntries is ug_util._normalize_users.
func normalizeUserEntries(base any, defUserCfg map[string]any) ([]userEntry, error) {
	var errs []error
	var list []any
	switch t := base.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(t)) {
			switch v := t[k].(type) {
			case bool, int, int64, uint64, float64, string:
				if pyval.IsTrue(v) {
					list = append(list, k)
				}
			case map[string]any:
				v["name"] = k
				list = append(list, v)
			default:
				errs = append(errs, fmt.Errorf("unmappable user value type %s for key %s", pyval.TypeName(t[k]), k))
			}
		}
	case string:
		for _, n := range uniqMergeSorted(t) {
			list = append(list, n)
		}
	case []any:
		list = t
	}

	var order []string
	users := map[string]map[string]any{}
	put := func(n string, cfg map[string]any) {
		if _, ok := users[n]; !ok {
			order = append(order, n)
		}
		users[n] = cfg
	}
	for _, item := range list {
		switch t := item.(type) {
		case string, []any:
			for _, n := range UniqMerge(t) {
				if _, ok := users[n]; !ok {
					put(n, map[string]any{})
				}
			}
		case map[string]any:
			n := "default"
			if v, ok := t["name"]; ok {
				n = pyval.ScalarStr(v)
				delete(t, "name")
			}
			if n == "" {
				errs = append(errs, errors.New("user entry with an empty name"))
				continue
			}
			put(n, mergeCfg(users[n], t))
		default:
			errs = append(errs, fmt.Errorf("user config must be dictionary/list or string types only and not %s", pyval.TypeName(item)))
		}
	}
	for n, cfg := range users {
		clean := map[string]any{}
		for k, v := range cfg {
			if k = strings.TrimSpace(strings.ReplaceAll(k, "-", "_")); k != "" {
				clean[k] = v
			}
		}
		users[n] = clean
	}

	defName := ""
	if defConfig, ok := users["default"]; ok {
		order = slices.DeleteFunc(order, func(s string) bool { return s == "default" })
		delete(users, "default")
		if len(defUserCfg) > 0 {
			d := deepCopy(defUserCfg).(map[string]any)
			defName = pyval.ScalarStr(d["name"])
			defGroups := d["groups"]
			delete(d, "name")
			delete(d, "groups")
			if defName == "" {
				errs = append(errs, errors.New("default user has no name"))
			} else {
				parsed := users[defName]
				if parsed == nil {
					parsed = map[string]any{}
				}
				order = slices.DeleteFunc(order, func(s string) bool { return s == defName })
				delete(users, defName)
				joined := uniqMergeSorted(parsed["groups"], defGroups)
				parsed["groups"] = strings.Join(joined, ",")
				put(defName, mergeCfg(parsed, mergeCfg(defConfig, d)))
			}
		}
	}
	out := make([]userEntry, 0, len(order))
	for _, n := range order {
		cfg := users[n]
		cfg["default"] = defName != "" && n == defName
		out = append(out, userEntry{name: n, cfg: cfg})
	}
	return out, errors.Join(errs...)
}

// normalizeGroups is ug_util._normalize_groups.
func normalizeGroups(v any) ([]Group, error) {
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
	switch t := v.(type) {
	case string:
		for _, n := range UniqMerge(t) {
			add(n)
		}
	case []any:
		for _, e := range t {
			switch e := e.(type) {
			case map[string]any:
				for _, k := range slices.Sorted(maps.Keys(e)) {
					switch m := e[k].(type) {
					case string, []any:
						add(k, UniqMerge(m)...)
					default:
						errs = append(errs, fmt.Errorf("bad group member type %s for group %s", pyval.TypeName(e[k]), k))
					}
				}
			case string:
				if n := strings.TrimSpace(e); n != "" {
					add(n)
				}
			default:
				errs = append(errs, fmt.Errorf("unknown group name type %s", pyval.TypeName(e)))
			}
		}
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(t)) {
			add(k, UniqMerge(t[k])...)
		}
	default:
		return nil, fmt.Errorf("group config must be list, dict or string type only but found %s", pyval.TypeName(v))
	}
	out := make([]Group, 0, len(order))
	for _, n := range order {
		ms := slices.Compact(slices.Sorted(slices.Values(members[n])))
		out = append(out, Group{Name: n, Members: ms})
	}
	return out, errors.Join(errs...)
}

// toUserConfig converts a normalised cloud-init user dict. hard errors
// prevent creating the user; soft ones (sudo, doas) only lose that key.
func toUserConfig(name string, m map[string]any) (u User, hard, soft error) {
	u = User{
		Name:         name,
		Default:      m["default"] == true,
		LockPasswd:   true,
		CreateGroups: true,
		Keys:         slices.Sorted(maps.Keys(m)),
	}
	u.Keys = slices.DeleteFunc(u.Keys, func(k string) bool { return k == "default" })
	var hards, softs []error
	for k, v := range m {
		var err error
		switch k {
		case "gecos":
			u.Gecos = pyval.ScalarStr(v)
		case "primary_group":
			u.PrimaryGroup = pyval.ScalarStr(v)
		case "groups":
			u.Groups = userGroups(v)
		case "shell":
			u.Shell = pyval.ScalarStr(v)
		case "homedir":
			u.Homedir = pyval.ScalarStr(v)
		case "sudo", "doas":
			rs, err := ruleList(v, k)
			if err != nil {
				softs = append(softs, err)
			}
			if k == "sudo" {
				u.Sudo = rs
			} else {
				u.Doas = rs
			}
		case "lock_passwd":
			u.LockPasswd = pyval.TranslateBool(v, true)
		case "hashed_passwd":
			u.HashedPasswd = Secret(pyval.ScalarStr(v))
		case "passwd":
			u.Passwd = Secret(pyval.ScalarStr(v))
		case "plain_text_passwd":
			u.PlainTextPasswd = Secret(pyval.ScalarStr(v))
		case "ssh_authorized_keys":
			u.SSHAuthorizedKeys, u.SSHAuthorizedKeysSet = KeyList(v), true
		case "ssh_import_id":
			u.SSHImportID = pyval.ScalarList(v)
		case "ssh_redirect_user":
			switch v {
			case true, "default":
				u.SSHRedirectUser = true
			case false, nil:
			default:
				err = fmt.Errorf("ssh_redirect_user must be true or \"default\", not %v", v)
			}
		case "system":
			u.System = pyval.Truthy(v)
		case "no_create_home":
			u.NoCreateHome = pyval.Truthy(v)
		case "no_user_group":
			u.NoUserGroup = pyval.Truthy(v)
		case "create_groups":
			u.CreateGroups = pyval.TranslateBool(v, true)
		case "uid":
			u.UID, err = optInt(v, "uid")
		case "inactive":
			u.Inactive, err = optInt(v, "inactive")
		case "expiredate":
			switch t := v.(type) {
			case time.Time:
				u.ExpireDate = t.Format(time.DateOnly)
			default:
				u.ExpireDate = pyval.ScalarStr(v)
			}
		case "selinux_user":
			u.SELinuxUser = pyval.ScalarStr(v)
		case "snapuser":
			u.Snapuser = pyval.ScalarStr(v)
		}
		if err != nil {
			hards = append(hards, err)
		}
	}
	return u, errors.Join(hards...), errors.Join(softs...)
}

func userGroups(v any) []string {
	switch t := v.(type) {
	case map[string]any:
		return slices.Sorted(maps.Keys(t))
	case string, []any:
		return UniqMerge(t)
	}
	return nil
}

// ruleList is the sudo/doas value: a string or list of rules; null, false or
// "" mean none.
func ruleList(v any, key string) ([]string, error) {
	switch t := v.(type) {
	case nil:
		return nil, nil
	case bool:
		if !t {
			return nil, nil
		}
		return nil, fmt.Errorf("can not create %s rule addition with type bool", key)
	case string:
		if t == "" {
			return nil, nil
		}
		return []string{t}, nil
	case []any:
		var out []string
		for _, e := range t {
			s, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("%s rule of type %s", key, pyval.TypeName(e))
			}
			out = append(out, s)
		}
		return out, nil
	}
	return nil, fmt.Errorf("can not create %s rule addition with type %s", key, pyval.TypeName(v))
}

// KeyList is an ssh_authorized_keys value: a string, a list, or a dict
// (values in key order).
func KeyList(v any) []string {
	switch t := v.(type) {
	case string:
		return []string{t}
	case []any:
		return pyval.ScalarList(t)
	case map[string]any:
		var out []string
		for _, k := range slices.Sorted(maps.Keys(t)) {
			if s := pyval.ScalarStr(t[k]); s != "" {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

func optInt(v any, key string) (*int, error) {
	switch t := v.(type) {
	case nil:
		return nil, nil
	case int:
		return &t, nil
	case int64:
		n := int(t)
		return &n, nil
	case uint64:
		n := int(t)
		return &n, nil
	case float64:
		if t == float64(int(t)) {
			n := int(t)
			return &n, nil
		}
	case string:
		if n, err := strconv.Atoi(strings.TrimSpace(t)); err == nil {
			return &n, nil
		}
	}
	return nil, fmt.Errorf("%s %v is not an integer", key, v)
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

// mergeCfg merges two config dicts; high's values win, nested dicts are
// merged recursively. Neither input is modified.
func mergeCfg(high, low map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range low {
		out[k] = deepCopy(v)
	}
	for k, v := range high {
		hm, hok := v.(map[string]any)
		lm, lok := out[k].(map[string]any)
		if hok && lok {
			out[k] = mergeCfg(hm, lm)
			continue
		}
		out[k] = deepCopy(v)
	}
	return out
}

func deepCopy(v any) any {
	switch t := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(t))
		for k, e := range t {
			m[k] = deepCopy(e)
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
