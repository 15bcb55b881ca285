package harness

import (
	"sort"
	"strconv"
	"strings"
)

// PasswdEntry is one /etc/passwd line.
type PasswdEntry struct {
	Name     string
	UID, GID int
	Gecos    string
	Home     string
	Shell    string
}

// GroupEntry is one /etc/group line.
type GroupEntry struct {
	Name    string
	GID     int
	Members []string
}

// ParsePasswd reads /etc/passwd content, keyed by user name.
func ParsePasswd(b []byte) map[string]PasswdEntry {
	m := map[string]PasswdEntry{}
	for _, l := range Lines(b) {
		f := strings.Split(l, ":")
		if len(f) != 7 || strings.HasPrefix(l, "#") {
			continue
		}
		uid, err1 := strconv.Atoi(f[2])
		gid, err2 := strconv.Atoi(f[3])
		if err1 != nil || err2 != nil {
			continue
		}
		m[f[0]] = PasswdEntry{Name: f[0], UID: uid, GID: gid, Gecos: f[4], Home: f[5], Shell: f[6]}
	}
	return m
}

// ParseGroup reads /etc/group content, keyed by group name.
func ParseGroup(b []byte) map[string]GroupEntry {
	m := map[string]GroupEntry{}
	for _, l := range Lines(b) {
		f := strings.Split(l, ":")
		if len(f) != 4 || strings.HasPrefix(l, "#") {
			continue
		}
		gid, err := strconv.Atoi(f[2])
		if err != nil {
			continue
		}
		var members []string
		for _, u := range strings.Split(f[3], ",") {
			if u = strings.TrimSpace(u); u != "" {
				members = append(members, u)
			}
		}
		m[f[0]] = GroupEntry{Name: f[0], GID: gid, Members: members}
	}
	return m
}

// Groups lists the supplementary groups naming user as a member.
func Groups(groups map[string]GroupEntry, user string) []string {
	var out []string
	for _, g := range groups {
		for _, u := range g.Members {
			if u == user {
				out = append(out, g.Name)
			}
		}
	}
	sort.Strings(out)
	return out
}

// ParseShadow returns each user's password field from /etc/shadow content.
func ParseShadow(b []byte) map[string]string {
	m := map[string]string{}
	for _, l := range Lines(b) {
		f := strings.Split(l, ":")
		if len(f) < 2 {
			continue
		}
		m[f[0]] = f[1]
	}
	return m
}

// PasswordState describes a shadow password field without revealing it:
// "locked", "locked, hash set (sha512)", "hash set (sha512)", "no password".
func PasswordState(field string) string {
	locked := strings.HasPrefix(field, "!")
	h := strings.TrimLeft(field, "!")
	var s string
	switch {
	case h == "" && locked:
		return "locked"
	case h == "":
		return "empty (no password needed!)"
	case h == "*" || h == "x":
		s = "no password"
	case strings.HasPrefix(h, "$6$"):
		s = "hash set (sha512)"
	case strings.HasPrefix(h, "$5$"):
		s = "hash set (sha256)"
	case strings.HasPrefix(h, "$y$"):
		s = "hash set (yescrypt)"
	case strings.HasPrefix(h, "$1$"):
		s = "hash set (md5)"
	default:
		s = "hash set"
	}
	if locked {
		return "locked, " + s
	}
	return s
}
