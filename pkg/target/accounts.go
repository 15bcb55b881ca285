package target

// Accounts: /etc/passwd, /etc/shadow, /etc/group and /etc/gshadow edited in
// place, because the initramfs has no useradd. The contract:
//
//   - Files are read, changed line by line and written back atomically with
//     WriteFileOpts. Lines that are not changed (entries, comments, blank
//     lines, NIS "+" lines, malformed lines) are kept byte for byte; only a
//     missing final newline is added when something is appended.
//   - An existing file keeps its mode and owner. A new passwd/group is 0644
//     root:root; a new shadow/gshadow is 0640 root:shadow when the target has
//     a "shadow" group, else 0600 root:root. gshadow is only maintained when
//     it exists; without /etc/shadow the hash lives in passwd's second field
//     (as useradd does).
//   - Ids follow useradd: ranges from the target's /etc/login.defs
//     (UID_MIN/UID_MAX/SYS_UID_MIN/SYS_UID_MAX and the GID_ variants,
//     defaults 1000-60000 and 100-999); a normal id is one above the highest
//     in use in the range, a system id one below the lowest in use; a user
//     private group takes the user's uid as gid when that gid is free.
//   - Every read-modify-write holds the Root's account lock. Nothing here
//     logs; password hashes never appear in errors.

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
)

// Paths of the account databases and their configuration inside the root.
const (
	PasswdFile          = "/etc/passwd"
	ShadowFile          = "/etc/shadow"
	GroupFile           = "/etc/group"
	GshadowFile         = "/etc/gshadow"
	SubUIDFile          = "/etc/subuid"
	SubGIDFile          = "/etc/subgid"
	LoginDefsFile       = "/etc/login.defs"
	UseraddDefaultsFile = "/etc/default/useradd"
)

// ErrNoUser and ErrNoGroup are returned (wrapped) when a lookup finds nothing.
var (
	ErrNoUser  = errors.New("no such user")
	ErrNoGroup = errors.New("no such group")
)

// User is a passwd entry.
type User struct {
	Name     string
	UID, GID int
	Gecos    string
	Home     string
	Shell    string
}

// Group is a group entry.
type Group struct {
	Name    string
	GID     int
	Members []string
}

// Shadow is a shadow entry. Numeric fields are -1 when empty.
type Shadow struct {
	Name       string
	Hash       string
	LastChange int // days since 1970-01-01
	Min, Max   int
	Warn       int
	Inactive   int
	Expire     int // days since 1970-01-01
}

// LineError is a malformed line in an account file.
type LineError struct {
	File string
	Line int // 1-based
	Msg  string
}

func (e *LineError) Error() string { return fmt.Sprintf("%s line %d: %s", e.File, e.Line, e.Msg) }

// ParsePasswd parses passwd(5) text. Comments and blank lines are skipped;
// malformed lines are skipped and reported as joined *LineErrors alongside
// the entries that did parse.
func ParsePasswd(b []byte) ([]User, error) {
	var out []User
	var errs []error
	eachEntry(b, func(n int, line string) {
		u, err := parsePasswdLine(line)
		if err != nil {
			errs = append(errs, &LineError{File: PasswdFile, Line: n, Msg: err.Error()})
			return
		}
		out = append(out, u)
	})
	return out, errors.Join(errs...)
}

// ParseGroup parses group(5) text, like ParsePasswd.
func ParseGroup(b []byte) ([]Group, error) {
	var out []Group
	var errs []error
	eachEntry(b, func(n int, line string) {
		g, err := parseGroupLine(line)
		if err != nil {
			errs = append(errs, &LineError{File: GroupFile, Line: n, Msg: err.Error()})
			return
		}
		out = append(out, g)
	})
	return out, errors.Join(errs...)
}

// ParseShadow parses shadow(5) text, like ParsePasswd. Errors never quote
// the line (it holds a hash).
func ParseShadow(b []byte) ([]Shadow, error) {
	var out []Shadow
	var errs []error
	eachEntry(b, func(n int, line string) {
		s, err := parseShadowLine(line)
		if err != nil {
			errs = append(errs, &LineError{File: ShadowFile, Line: n, Msg: err.Error()})
			return
		}
		out = append(out, s)
	})
	return out, errors.Join(errs...)
}

// eachEntry calls fn for every line that is neither blank, a comment nor a
// NIS compat ("+"/"-") line.
func eachEntry(b []byte, fn func(n int, line string)) {
	for i, line := range strings.Split(string(b), "\n") {
		line = strings.TrimRight(line, "\r")
		if isEntry(line) {
			fn(i+1, line)
		}
	}
}

func isEntry(line string) bool {
	return line != "" && line[0] != '#' && line[0] != '+' && line[0] != '-' && strings.TrimSpace(line) != ""
}

func parsePasswdLine(line string) (User, error) {
	f := strings.Split(line, ":")
	if len(f) != 7 {
		return User{}, fmt.Errorf("passwd entry has %d fields, want 7", len(f))
	}
	if f[0] == "" {
		return User{}, errors.New("empty user name")
	}
	uid, err1 := parseID(f[2])
	gid, err2 := parseID(f[3])
	if err := errors.Join(err1, err2); err != nil {
		return User{}, fmt.Errorf("user %q: %w", f[0], err)
	}
	return User{Name: f[0], UID: uid, GID: gid, Gecos: f[4], Home: f[5], Shell: f[6]}, nil
}

func parseGroupLine(line string) (Group, error) {
	f := strings.Split(line, ":")
	if len(f) != 4 {
		return Group{}, fmt.Errorf("group entry has %d fields, want 4", len(f))
	}
	if f[0] == "" {
		return Group{}, errors.New("empty group name")
	}
	gid, err := parseID(f[2])
	if err != nil {
		return Group{}, fmt.Errorf("group %q: %w", f[0], err)
	}
	return Group{Name: f[0], GID: gid, Members: splitMembers(f[3])}, nil
}

func parseShadowLine(line string) (Shadow, error) {
	f := strings.Split(line, ":")
	if len(f) != 9 {
		return Shadow{}, fmt.Errorf("shadow entry has %d fields, want 9", len(f))
	}
	if f[0] == "" {
		return Shadow{}, errors.New("empty user name")
	}
	s := Shadow{Name: f[0], Hash: f[1]}
	var errs []error
	for i, p := range []*int{&s.LastChange, &s.Min, &s.Max, &s.Warn, &s.Inactive, &s.Expire} {
		v, err := parseOptInt(f[2+i])
		if err != nil {
			errs = append(errs, fmt.Errorf("user %q field %d: %w", f[0], 3+i, err))
		}
		*p = v
	}
	return s, errors.Join(errs...)
}

func parseID(s string) (int, error) {
	n, err := strconv.ParseUint(s, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("bad id %q", s)
	}
	return int(n), nil
}

func parseOptInt(s string) (int, error) {
	if s == "" {
		return -1, nil
	}
	n, err := strconv.ParseInt(s, 10, 32)
	if err != nil {
		return -1, fmt.Errorf("bad number %q", s)
	}
	return max(int(n), -1), nil
}

func formatOptInt(n int) string {
	if n < 0 {
		return ""
	}
	return strconv.Itoa(n)
}

func splitMembers(s string) []string {
	var out []string
	for m := range strings.SplitSeq(s, ",") {
		if m = strings.TrimSpace(m); m != "" {
			out = append(out, m)
		}
	}
	return out
}

func (u User) fields(pw string) []string {
	return []string{u.Name, pw, strconv.Itoa(u.UID), strconv.Itoa(u.GID), u.Gecos, u.Home, u.Shell}
}

func (s Shadow) fields() []string {
	return []string{s.Name, s.Hash, formatOptInt(s.LastChange), formatOptInt(s.Min), formatOptInt(s.Max),
		formatOptInt(s.Warn), formatOptInt(s.Inactive), formatOptInt(s.Expire), ""}
}

// dbFile is one account file held as raw lines so that untouched lines are
// written back unchanged.
type dbFile struct {
	path   string
	exists bool
	mode   fs.FileMode
	uid    int
	gid    int
	lines  []string
	dirty  bool
	// orig is the content as read (or last written): shadow-utils' backup
	// ("<path>-") of a changed file.
	orig []byte
}

func loadDB(r *Root, p string) (*dbFile, error) {
	f := &dbFile{path: p, uid: -1, gid: -1}
	hp, err := r.Resolve(p)
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(hp)
	if errors.Is(err, fs.ErrNotExist) {
		return f, nil
	}
	if err != nil {
		return nil, fmt.Errorf("target: %s: %w", p, err)
	}
	b, err := os.ReadFile(hp)
	if err != nil {
		return nil, fmt.Errorf("target: read %s: %w", p, err)
	}
	f.exists = true
	f.mode = fi.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
	f.uid, f.gid = fileOwner(fi)
	f.lines = splitLines(b)
	f.orig = b
	return f, nil
}

// splitLines splits b into lines without their "\n" (a final unterminated
// line is kept).
func splitLines(b []byte) []string {
	if len(b) == 0 {
		return nil
	}
	lines := strings.Split(string(b), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

func (f *dbFile) render() []byte {
	var b bytes.Buffer
	for _, l := range f.lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// find returns the index of the entry whose first field is name, or -1.
func (f *dbFile) find(name string) int {
	for i, l := range f.lines {
		if !isEntry(l) {
			continue
		}
		if n, _, _ := strings.Cut(l, ":"); n == name {
			return i
		}
	}
	return -1
}

func (f *dbFile) fieldsAt(i int) []string {
	return strings.Split(strings.TrimRight(f.lines[i], "\r"), ":")
}

func (f *dbFile) set(i int, fields []string) {
	if l := strings.Join(fields, ":"); l != f.lines[i] {
		f.lines[i] = l
		f.dirty = true
	}
}

func (f *dbFile) add(fields []string) {
	f.lines = append(f.lines, strings.Join(fields, ":"))
	f.dirty = true
}

// users/groups parse the entries leniently (malformed lines are ignored, as
// getpwnam does).
func (f *dbFile) users() []User {
	us, _ := ParsePasswd(f.render())
	return us
}

func (f *dbFile) groups() []Group {
	gs, _ := ParseGroup(f.render())
	return gs
}

// LookupUser finds a user in the target's /etc/passwd by name or, when name
// is numeric and no user has that name, by uid.
func (r *Root) LookupUser(name string) (User, error) {
	f, err := loadDB(r, PasswdFile)
	if err != nil {
		return User{}, err
	}
	if u, ok := findUser(f.users(), name); ok {
		return u, nil
	}
	return User{}, fmt.Errorf("target: user %q: %w", name, ErrNoUser)
}

// LookupGroup finds a group in the target's /etc/group by name or, when name
// is numeric and no group has that name, by gid.
func (r *Root) LookupGroup(name string) (Group, error) {
	f, err := loadDB(r, GroupFile)
	if err != nil {
		return Group{}, err
	}
	if g, ok := findGroup(f.groups(), name); ok {
		return g, nil
	}
	return Group{}, fmt.Errorf("target: group %q: %w", name, ErrNoGroup)
}

// LookupShadow returns the shadow entry of name. Without /etc/shadow the
// entry is synthesised from passwd's password field.
func (r *Root) LookupShadow(name string) (Shadow, error) {
	sf, err := loadDB(r, ShadowFile)
	if err != nil {
		return Shadow{}, err
	}
	if !sf.exists {
		pf, err := loadDB(r, PasswdFile)
		if err != nil {
			return Shadow{}, err
		}
		if i := pf.find(name); i >= 0 {
			if f := pf.fieldsAt(i); len(f) > 1 {
				return Shadow{Name: name, Hash: f[1], LastChange: -1, Min: -1, Max: -1, Warn: -1, Inactive: -1, Expire: -1}, nil
			}
		}
		return Shadow{}, fmt.Errorf("target: shadow entry %q: %w", name, ErrNoUser)
	}
	ss, _ := ParseShadow(sf.render())
	for _, s := range ss {
		if s.Name == name {
			return s, nil
		}
	}
	return Shadow{}, fmt.Errorf("target: shadow entry %q: %w", name, ErrNoUser)
}

func findUser(us []User, name string) (User, bool) {
	for _, u := range us {
		if u.Name == name {
			return u, true
		}
	}
	if id, err := parseID(name); err == nil {
		for _, u := range us {
			if u.UID == id {
				return u, true
			}
		}
	}
	return User{}, false
}

func findGroup(gs []Group, name string) (Group, bool) {
	for _, g := range gs {
		if g.Name == name {
			return g, true
		}
	}
	if id, err := parseID(name); err == nil {
		for _, g := range gs {
			if g.GID == id {
				return g, true
			}
		}
	}
	return Group{}, false
}

// loginDefs is /etc/login.defs or /etc/default/useradd as key → value.
type loginDefs map[string]string

func readDefs(r *Root, p string, sep string) loginDefs {
	d := loginDefs{}
	b, err := r.ReadFile(p)
	if err != nil {
		return d
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		var k, v string
		if sep == "" {
			f := strings.Fields(line)
			if len(f) < 2 {
				continue
			}
			k, v = f[0], f[1]
		} else {
			var ok bool
			if k, v, ok = strings.Cut(line, sep); !ok {
				continue
			}
		}
		v = strings.TrimSpace(v)
		if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
			v = v[1 : len(v)-1]
		}
		d[strings.TrimSpace(k)] = v
	}
	return d
}

// num is getdef_num: C-style base (0755 is octal, 0x1ff hex).
func (d loginDefs) num(key string, def int) int {
	v, ok := d[key]
	if !ok {
		return def
	}
	n, err := strconv.ParseInt(v, 0, 64)
	if err != nil {
		return def
	}
	return int(n)
}

func (d loginDefs) str(key, def string) string {
	if v, ok := d[key]; ok && v != "" {
		return v
	}
	return def
}

// FileOwner returns the uid and gid of fi, or -1, -1 when unknown.
func FileOwner(fi fs.FileInfo) (uid, gid int) { return fileOwner(fi) }
