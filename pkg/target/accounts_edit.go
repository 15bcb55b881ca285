package target

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Defaults used when the target's login.defs and /etc/default/useradd say
// nothing.
const (
	DefaultUIDMin    = 1000
	DefaultUIDMax    = 60000
	DefaultSysIDMin  = 100
	DefaultShell     = "/bin/sh"
	DefaultHomeBase  = "/home"
	DefaultSkel      = "/etc/skel"
	DefaultUserGroup = "100"
	DefaultHomeMode  = 0o755
)

// GroupOpts controls AddGroup.
type GroupOpts struct {
	// GID is the group id; nil allocates one.
	GID *int
	// System allocates from SYS_GID_MIN..SYS_GID_MAX.
	System bool
	// Members are added to the group, whether or not it was created.
	Members []string
}

// UserSpec describes a user for AddUser. Empty fields take useradd's
// defaults.
type UserSpec struct {
	Name  string
	Gecos string
	// Home defaults to HOME from /etc/default/useradd (/home) + "/" + Name.
	Home string
	// Shell defaults to SHELL from /etc/default/useradd, else /bin/sh.
	Shell string
	// PrimaryGroup is a group name or gid. A missing named group is created.
	// Empty means a user private group named like the user (or, with
	// NoUserGroup, GROUP from /etc/default/useradd, default 100).
	PrimaryGroup string
	// UID is the user id; nil allocates one.
	UID *int
	// Groups are supplementary groups; missing ones are created unless
	// NoCreateGroups.
	Groups []string
	// System allocates ids from the system ranges and never creates a home.
	System         bool
	NoCreateHome   bool
	NoUserGroup    bool
	NoCreateGroups bool
	// Passwd is a password hash set only when the user is created
	// (useradd --password).
	Passwd string
	// HashedPasswd is a password hash set whether or not the user existed
	// (chpasswd -e); it wins over Passwd.
	HashedPasswd string
	// LockPasswd prefixes the hash with "!" (passwd -l), also for an
	// existing user.
	LockPasswd bool
	// ExpireDate is YYYY-MM-DD (or days since 1970-01-01); "" or "-1" none.
	ExpireDate string
	// Inactive is the days after password expiry before the account is
	// disabled; nil leaves INACTIVE from /etc/default/useradd.
	Inactive *int
}

// acctTx is one read-modify-write of the account files.
type acctTx struct {
	r      *Root
	files  map[string]*dbFile
	defs   loginDefs
	uadefs loginDefs
}

func (r *Root) begin() *acctTx {
	return &acctTx{
		r:      r,
		files:  map[string]*dbFile{},
		defs:   readDefs(r, LoginDefsFile, ""),
		uadefs: readDefs(r, UseraddDefaultsFile, "="),
	}
}

func (tx *acctTx) file(p string) (*dbFile, error) {
	if f, ok := tx.files[p]; ok {
		return f, nil
	}
	f, err := loadDB(tx.r, p)
	if err != nil {
		return nil, err
	}
	tx.files[p] = f
	return f, nil
}

// files loads the four databases.
func (tx *acctTx) all() (pw, sh, gr, gs *dbFile, err error) {
	if pw, err = tx.file(PasswdFile); err != nil {
		return
	}
	if sh, err = tx.file(ShadowFile); err != nil {
		return
	}
	if gr, err = tx.file(GroupFile); err != nil {
		return
	}
	gs, err = tx.file(GshadowFile)
	return
}

// commit writes the changed files as one set (commitAccounts): a power
// cut leaves the old databases or the new ones. Groups are listed before
// users. As shadow-utils' tools do (commonio's create_backup), each changed
// file that existed is first copied, as it was, to "<path>-" with its mode
// and owner.
func (tx *acctTx) commit() error {
	var files []acctWrite
	var changed []*dbFile
	for _, p := range []string{GroupFile, GshadowFile, PasswdFile, ShadowFile, SubGIDFile, SubUIDFile} {
		f, ok := tx.files[p]
		if !ok || !f.dirty {
			continue
		}
		if f.exists {
			if err := tx.r.WriteFileOpts(p+"-", f.orig, WriteOpts{Perm: f.mode, UID: f.uid, GID: f.gid}); err != nil {
				return fmt.Errorf("backup %s: %w", p, err)
			}
		}
		o := WriteOpts{Perm: f.mode, UID: f.uid, GID: f.gid}
		if !f.exists {
			o = tx.newFileOpts(p)
		}
		files = append(files, acctWrite{path: p, data: f.render(), opts: o})
		changed = append(changed, f)
	}
	if len(files) == 0 {
		return nil
	}
	if err := tx.r.commitAccounts(files); err != nil {
		return err
	}
	for i, f := range changed {
		o := files[i].opts
		f.orig = files[i].data
		f.exists, f.dirty = true, false
		f.mode, f.uid, f.gid = o.Perm, o.UID, o.GID
	}
	return nil
}

// addSubIDs gives a new normal user subordinate uid and gid ranges, as
// useradd does where /etc/subuid and /etc/subgid exist and SUB_UID_COUNT
// (SUB_GID_COUNT) is not 0: the lowest free range of that many ids in
// SUB_UID_MIN..SUB_UID_MAX (100000, 600100000, 65536 by default).
func (tx *acctTx) addSubIDs(name string) error {
	for _, sub := range []struct{ file, kind string }{{SubUIDFile, "UID"}, {SubGIDFile, "GID"}} {
		f, err := tx.file(sub.file)
		if err != nil {
			return err
		}
		count := tx.defs.num("SUB_"+sub.kind+"_COUNT", 65536)
		if !f.exists || count <= 0 || f.find(name) >= 0 {
			continue
		}
		lo, hi := tx.defs.num("SUB_"+sub.kind+"_MIN", 100000), tx.defs.num("SUB_"+sub.kind+"_MAX", 600100000)
		if start, ok := freeSubRange(f.lines, lo, hi, count); ok {
			f.add([]string{name, strconv.Itoa(start), strconv.Itoa(count)})
		}
	}
	return nil
}

// freeSubRange is the lowest start >= lo of count ids ending at most at hi
// that overlaps no "name:start:count" line.
func freeSubRange(lines []string, lo, hi, count int) (int, bool) {
	type span struct{ start, end int }
	var used []span
	for _, l := range lines {
		f := strings.Split(l, ":")
		if len(f) != 3 {
			continue
		}
		s, err1 := strconv.Atoi(f[1])
		n, err2 := strconv.Atoi(f[2])
		if err1 == nil && err2 == nil && n > 0 {
			used = append(used, span{s, s + n})
		}
	}
	slices.SortFunc(used, func(a, b span) int { return a.start - b.start })
	cand := lo
	for _, u := range used {
		if cand+count <= u.start {
			break
		}
		cand = max(cand, u.end)
	}
	return cand, cand+count-1 <= hi
}

func (tx *acctTx) newFileOpts(p string) WriteOpts {
	o := WriteOpts{Perm: 0o644, UID: -1, GID: -1}
	root := os.Geteuid() == 0
	if root {
		o.UID, o.GID = 0, 0
	}
	if p == ShadowFile || p == GshadowFile {
		o.Perm = 0o600
		if gr, err := tx.file(GroupFile); err == nil {
			if g, ok := findGroupByName(gr.groups(), "shadow"); ok {
				o.Perm = 0o640
				if root {
					o.GID = g.GID
				}
			}
		}
	}
	return o
}

func (tx *acctTx) today() int {
	now := time.Now
	if tx.r.now != nil {
		now = tx.r.now
	}
	return int(now().Unix() / 86400)
}

// idRange is [lo, hi] for normal or system ids of kind "UID" or "GID".
func (tx *acctTx) idRange(kind string, system bool) (lo, hi int) {
	min := tx.defs.num(kind+"_MIN", DefaultUIDMin)
	max := tx.defs.num(kind+"_MAX", DefaultUIDMax)
	if !system {
		return min, max
	}
	return tx.defs.num("SYS_"+kind+"_MIN", DefaultSysIDMin), tx.defs.num("SYS_"+kind+"_MAX", min-1)
}

// allocID picks a free id in [lo, hi] the way shadow's find_new_uid/gid do:
// preferred when free and in range; normal ids one above the highest in use
// (else the lowest free); system ids one below the lowest in use (else the
// highest free).
func allocID(used map[int]bool, lo, hi int, system bool, preferred int) (int, error) {
	if lo > hi || lo < 0 {
		return 0, fmt.Errorf("empty id range %d-%d", lo, hi)
	}
	if preferred >= lo && preferred <= hi && !used[preferred] {
		return preferred, nil
	}
	var inRange []int
	for id := range used {
		if id >= lo && id <= hi {
			inRange = append(inRange, id)
		}
	}
	if !system {
		cand := lo
		if len(inRange) > 0 {
			cand = slices.Max(inRange) + 1
		}
		if cand <= hi && !used[cand] {
			return cand, nil
		}
		for id := lo; id <= hi; id++ {
			if !used[id] {
				return id, nil
			}
		}
	} else {
		cand := hi
		if len(inRange) > 0 {
			cand = slices.Min(inRange) - 1
		}
		if cand >= lo && !used[cand] {
			return cand, nil
		}
		for id := hi; id >= lo; id-- {
			if !used[id] {
				return id, nil
			}
		}
	}
	return 0, fmt.Errorf("no free id in %d-%d", lo, hi)
}

// ValidName reports whether s is acceptable as a user or group name, with
// shadow-utils' default rule: letters, digits, '_', '.', '-' (not first),
// an optional final '$', not fully numeric, "." or "..", at most 32 bytes.
func ValidName(s string) error {
	if s == "" {
		return errors.New("empty name")
	}
	if len(s) > 32 {
		return fmt.Errorf("name %q longer than 32 characters", s)
	}
	if s == "." || s == ".." || s[0] == '-' {
		return fmt.Errorf("invalid name %q", s)
	}
	if _, err := strconv.ParseUint(s, 10, 64); err == nil {
		return fmt.Errorf("invalid name %q: fully numeric", s)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-' ||
			c == '$' && i == len(s)-1
		if !ok {
			return fmt.Errorf("invalid name %q: character %q", s, c)
		}
	}
	return nil
}

// validField rejects what would break a colon-separated line.
func validField(what, s string) error {
	if strings.ContainsAny(s, ":\n\r\x00") {
		return fmt.Errorf("%s contains ':', a newline or NUL", what)
	}
	return nil
}

func findGroupByName(gs []Group, name string) (Group, bool) {
	for _, g := range gs {
		if g.Name == name {
			return g, true
		}
	}
	return Group{}, false
}

func findUserByName(us []User, name string) (User, bool) {
	for _, u := range us {
		if u.Name == name {
			return u, true
		}
	}
	return User{}, false
}

// AddGroup creates group name unless it exists (created=false), and adds
// opts.Members to it either way.
func (r *Root) AddGroup(name string, opts GroupOpts) (Group, bool, error) {
	r.acct.Lock()
	defer r.acct.Unlock()
	tx := r.begin()
	g, created, err := tx.addGroup(name, opts)
	if err != nil {
		return Group{}, false, fmt.Errorf("target: add group %s: %w", name, err)
	}
	if err := tx.commit(); err != nil {
		return Group{}, false, fmt.Errorf("target: add group %s: %w", name, err)
	}
	return g, created, nil
}

func (tx *acctTx) addGroup(name string, opts GroupOpts) (Group, bool, error) {
	for _, m := range opts.Members {
		if err := ValidName(m); err != nil {
			return Group{}, false, fmt.Errorf("member: %w", err)
		}
	}
	_, _, gr, gs, err := tx.all()
	if err != nil {
		return Group{}, false, err
	}
	groups := gr.groups()
	if g, ok := findGroupByName(groups, name); ok {
		if len(opts.Members) > 0 {
			if err := tx.addMembers(name, opts.Members); err != nil {
				return Group{}, false, err
			}
			g.Members = appendNew(g.Members, opts.Members...)
		}
		return g, false, nil
	}
	if err := ValidName(name); err != nil {
		return Group{}, false, err
	}
	used := map[int]bool{}
	for _, g := range groups {
		used[g.GID] = true
	}
	var gid int
	if opts.GID != nil {
		gid = *opts.GID
		if gid < 0 {
			return Group{}, false, fmt.Errorf("invalid gid %d", gid)
		}
		if used[gid] {
			return Group{}, false, fmt.Errorf("gid %d is already in use", gid)
		}
	} else {
		lo, hi := tx.idRange("GID", opts.System)
		if gid, err = allocID(used, lo, hi, opts.System, -1); err != nil {
			return Group{}, false, err
		}
	}
	members := appendNew(nil, opts.Members...)
	gr.add([]string{name, "x", strconv.Itoa(gid), strings.Join(members, ",")})
	if gs.exists {
		gs.add([]string{name, "!", "", strings.Join(members, ",")})
	}
	return Group{Name: name, GID: gid, Members: members}, true, nil
}

// appendNew appends the elements of add not already in list.
func appendNew(list []string, add ...string) []string {
	for _, a := range add {
		if !slices.Contains(list, a) {
			list = append(list, a)
		}
	}
	return list
}

// AddGroupMembers adds users to group (in /etc/group and, when present,
// /etc/gshadow); members already present are kept once.
func (r *Root) AddGroupMembers(group string, users ...string) error {
	r.acct.Lock()
	defer r.acct.Unlock()
	tx := r.begin()
	if err := tx.addMembers(group, users); err != nil {
		return fmt.Errorf("target: add members to group %s: %w", group, err)
	}
	return tx.commit()
}

// SetGroupMembers replaces the member list of group.
func (r *Root) SetGroupMembers(group string, members []string) error {
	r.acct.Lock()
	defer r.acct.Unlock()
	tx := r.begin()
	if err := tx.setMembers(group, func([]string) []string { return appendNew(nil, members...) }); err != nil {
		return fmt.Errorf("target: set members of group %s: %w", group, err)
	}
	return tx.commit()
}

func (tx *acctTx) addMembers(group string, users []string) error {
	return tx.setMembers(group, func(old []string) []string { return appendNew(old, users...) })
}

func (tx *acctTx) setMembers(group string, update func([]string) []string) error {
	_, _, gr, gs, err := tx.all()
	if err != nil {
		return err
	}
	i := gr.find(group)
	if i < 0 {
		return ErrNoGroup
	}
	f := gr.fieldsAt(i)
	if len(f) != 4 {
		return fmt.Errorf("%s line %d is malformed", GroupFile, i+1)
	}
	members := update(splitMembers(f[3]))
	for _, m := range members {
		if err := ValidName(m); err != nil {
			return fmt.Errorf("member: %w", err)
		}
	}
	f[3] = strings.Join(members, ",")
	gr.set(i, f)
	if gs.exists {
		if j := gs.find(group); j >= 0 {
			if f := gs.fieldsAt(j); len(f) == 4 {
				f[3] = strings.Join(update(splitMembers(f[3])), ",")
				gs.set(j, f)
			}
		}
	}
	return nil
}

// SetPasswordHash sets name's password hash and the last-change day, as
// `chpasswd -e` does. The hash is not validated beyond the file format.
func (r *Root) SetPasswordHash(name, hash string) error {
	if err := validField("password hash", hash); err != nil {
		return fmt.Errorf("target: set password of %s: %w", name, err)
	}
	r.acct.Lock()
	defer r.acct.Unlock()
	tx := r.begin()
	if err := tx.updateHash(name, func(string) string { return hash }, true); err != nil {
		return fmt.Errorf("target: set password of %s: %w", name, err)
	}
	return tx.commit()
}

// LockPassword disables password login for name by prefixing its hash with
// "!" (passwd -l); an already locked hash is left alone.
func (r *Root) LockPassword(name string) error {
	r.acct.Lock()
	defer r.acct.Unlock()
	tx := r.begin()
	if err := tx.updateHash(name, lockHash, false); err != nil {
		return fmt.Errorf("target: lock password of %s: %w", name, err)
	}
	return tx.commit()
}

func lockHash(h string) string {
	if strings.HasPrefix(h, "!") {
		return h
	}
	return "!" + h
}

// updateHash rewrites name's hash in shadow (adding an entry when shadow
// exists but has none) or, without shadow, in passwd.
func (tx *acctTx) updateHash(name string, fn func(old string) string, touch bool) error {
	pw, sh, _, _, err := tx.all()
	if err != nil {
		return err
	}
	pi := pw.find(name)
	if pi < 0 {
		return ErrNoUser
	}
	if !sh.exists {
		f := pw.fieldsAt(pi)
		if len(f) != 7 {
			return fmt.Errorf("%s line %d is malformed", PasswdFile, pi+1)
		}
		f[1] = fn(f[1])
		pw.set(pi, f)
		return nil
	}
	si := sh.find(name)
	if si < 0 {
		s := Shadow{Name: name, Hash: fn("!"), LastChange: tx.today(), Min: -1, Max: -1, Warn: -1, Inactive: -1, Expire: -1}
		sh.add(s.fields())
		return nil
	}
	f := sh.fieldsAt(si)
	if len(f) != 9 {
		return fmt.Errorf("%s line %d is malformed", ShadowFile, si+1)
	}
	f[1] = fn(f[1])
	if touch {
		f[2] = strconv.Itoa(tx.today())
	}
	sh.set(si, f)
	return nil
}

// AddUser creates the user described by spec the way `useradd` (with
// cloud-init's options) would, without running it. When the user already
// exists nothing is recreated (created=false), but HashedPasswd and
// LockPasswd are still applied, as cloud-init does.
func (r *Root) AddUser(spec UserSpec) (User, bool, error) {
	u, created, home, err := r.addUser(spec)
	if err != nil {
		return u, created, fmt.Errorf("target: add user %s: %w", spec.Name, err)
	}
	if home != nil {
		if err := r.createHome(u, *home); err != nil {
			return u, created, fmt.Errorf("target: add user %s: %w", spec.Name, err)
		}
	}
	return u, created, nil
}

type homeSpec struct {
	mode fs.FileMode
	skel string
}

func (r *Root) addUser(spec UserSpec) (User, bool, *homeSpec, error) {
	for what, v := range map[string]string{
		"gecos": spec.Gecos, "home": spec.Home, "shell": spec.Shell,
		"password hash": spec.Passwd + spec.HashedPasswd, "expire date": spec.ExpireDate,
	} {
		if err := validField(what, v); err != nil {
			return User{}, false, nil, err
		}
	}
	r.acct.Lock()
	defer r.acct.Unlock()
	tx := r.begin()
	pw, sh, gr, _, err := tx.all()
	if err != nil {
		return User{}, false, nil, err
	}

	if u, ok := findUserByName(pw.users(), spec.Name); ok {
		if err := tx.applyPassword(spec); err != nil {
			return u, false, nil, err
		}
		return u, false, nil, tx.commit()
	}
	if err := ValidName(spec.Name); err != nil {
		return User{}, false, nil, err
	}

	// Like cloud-init, create the groups first (plain groupadd: normal
	// ids), then useradd allocates the uid and the user private group.
	for _, g := range spec.Groups {
		if _, ok := findGroupByName(gr.groups(), g); ok {
			continue
		}
		if spec.NoCreateGroups {
			return User{}, false, nil, fmt.Errorf("group %q: %w", g, ErrNoGroup)
		}
		if _, _, err := tx.addGroup(g, GroupOpts{}); err != nil {
			return User{}, false, nil, fmt.Errorf("create group %s: %w", g, err)
		}
	}
	gid := -1
	if spec.PrimaryGroup != "" {
		if g, ok := findGroup(gr.groups(), spec.PrimaryGroup); ok {
			gid = g.GID
		} else if _, err := parseID(spec.PrimaryGroup); err == nil {
			return User{}, false, nil, fmt.Errorf("primary group %s: %w", spec.PrimaryGroup, ErrNoGroup)
		} else {
			g, _, err := tx.addGroup(spec.PrimaryGroup, GroupOpts{})
			if err != nil {
				return User{}, false, nil, fmt.Errorf("create primary group %s: %w", spec.PrimaryGroup, err)
			}
			gid = g.GID
		}
	} else if spec.NoUserGroup {
		def := tx.uadefs.str("GROUP", DefaultUserGroup)
		if g, ok := findGroup(gr.groups(), def); ok {
			gid = g.GID
		} else if id, err := parseID(def); err == nil {
			gid = id
		} else {
			return User{}, false, nil, fmt.Errorf("default group %s: %w", def, ErrNoGroup)
		}
	} else if _, ok := findGroupByName(gr.groups(), spec.Name); ok {
		return User{}, false, nil, fmt.Errorf("group %s exists; set primary_group to add the user to it", spec.Name)
	}

	usedUIDs := map[int]bool{}
	for _, u := range pw.users() {
		usedUIDs[u.UID] = true
	}
	var uid int
	if spec.UID != nil {
		uid = *spec.UID
		if uid < 0 {
			return User{}, false, nil, fmt.Errorf("invalid uid %d", uid)
		}
		if usedUIDs[uid] {
			return User{}, false, nil, fmt.Errorf("uid %d is already in use", uid)
		}
	} else {
		lo, hi := tx.idRange("UID", spec.System)
		if uid, err = allocID(usedUIDs, lo, hi, spec.System, -1); err != nil {
			return User{}, false, nil, fmt.Errorf("allocate uid: %w", err)
		}
	}
	if gid < 0 {
		usedGIDs := map[int]bool{}
		for _, g := range gr.groups() {
			usedGIDs[g.GID] = true
		}
		lo, hi := tx.idRange("GID", spec.System)
		// shadow prefers gid == uid whenever that gid is free and in range.
		ngid, err := allocID(usedGIDs, lo, hi, spec.System, uid)
		if err != nil {
			return User{}, false, nil, fmt.Errorf("allocate gid: %w", err)
		}
		if _, _, err := tx.addGroup(spec.Name, GroupOpts{GID: &ngid}); err != nil {
			return User{}, false, nil, fmt.Errorf("create user group: %w", err)
		}
		gid = ngid
	}

	home := spec.Home
	if home == "" {
		home = path.Join(tx.uadefs.str("HOME", DefaultHomeBase), spec.Name)
	}
	shell := spec.Shell
	if shell == "" {
		shell = tx.uadefs.str("SHELL", DefaultShell)
	}
	u := User{Name: spec.Name, UID: uid, GID: gid, Gecos: spec.Gecos, Home: home, Shell: shell}
	if lo, hi := tx.idRange("UID", false); !spec.System && uid >= lo && uid <= hi {
		if err := tx.addSubIDs(spec.Name); err != nil {
			return User{}, false, nil, err
		}
	}
	for _, g := range spec.Groups {
		if err := tx.addMembers(g, []string{spec.Name}); err != nil {
			return User{}, false, nil, fmt.Errorf("add to group %s: %w", g, err)
		}
	}

	hash := "!"
	if spec.Passwd != "" {
		hash = spec.Passwd
	}
	if sh.exists {
		pw.add(u.fields("x"))
		s := Shadow{Name: u.Name, Hash: hash, LastChange: tx.today(), Min: -1, Max: -1, Warn: -1, Inactive: -1, Expire: -1}
		if !spec.System {
			s.Min = tx.defs.num("PASS_MIN_DAYS", -1)
			s.Max = tx.defs.num("PASS_MAX_DAYS", -1)
			s.Warn = tx.defs.num("PASS_WARN_AGE", -1)
			s.Inactive = tx.uadefs.num("INACTIVE", -1)
		}
		if spec.Inactive != nil {
			s.Inactive = *spec.Inactive
		}
		if s.Expire, err = expireDays(cmpOr(spec.ExpireDate, tx.uadefs.str("EXPIRE", ""))); err != nil {
			return User{}, false, nil, err
		}
		sh.add(s.fields())
	} else {
		pw.add(u.fields(hash))
	}
	// useradd, then (cloud-init's add_user) the password and the lock, each
	// its own write of shadow as each is its own tool there: the backups
	// are what they leave.
	if err := tx.commit(); err != nil {
		return User{}, false, nil, err
	}
	if err := tx.applyPassword(spec); err != nil {
		return User{}, false, nil, err
	}
	if spec.System || spec.NoCreateHome {
		return u, true, nil, nil
	}
	// useradd: HOME_MODE, else 0777 & ~UMASK (UMASK defaults to 022).
	mode := fs.FileMode(tx.defs.num("HOME_MODE", 0o777&^tx.defs.num("UMASK", 0o777&^DefaultHomeMode))) & 0o7777
	return u, true, &homeSpec{mode: mode, skel: tx.uadefs.str("SKEL", DefaultSkel)}, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// expireDays converts useradd's --expiredate (YYYY-MM-DD, or a day number)
// into days since the epoch; "" and "-1" mean never (-1).
func expireDays(s string) (int, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "-1" {
		return -1, nil
	}
	if n, err := strconv.Atoi(s); err == nil && n >= 0 {
		return n, nil
	}
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return -1, fmt.Errorf("invalid expire date %q (want YYYY-MM-DD)", s)
	}
	return int(t.Unix() / 86400), nil
}

// applyPassword applies HashedPasswd then LockPasswd, each committed (as
// chpasswd -e and passwd -l write the databases one after the other).
func (tx *acctTx) applyPassword(spec UserSpec) error {
	if spec.HashedPasswd != "" {
		if err := tx.updateHash(spec.Name, func(string) string { return spec.HashedPasswd }, true); err != nil {
			return err
		}
		if err := tx.commit(); err != nil {
			return err
		}
	}
	if spec.LockPasswd {
		if err := tx.updateHash(spec.Name, lockHash, false); err != nil {
			return err
		}
		// passwd -l rewrites shadow (and its backup) even when the
		// hash was locked already.
		if f, ok := tx.files[ShadowFile]; ok && f.exists {
			f.dirty = true
		}
	}
	return tx.commit()
}

// createHome makes u's home (parents 0755 root) with mode and copies the
// skeleton into it, owned by the user, as useradd -m does. An existing home
// is left alone (useradd does not copy the skeleton into it either).
func (r *Root) createHome(u User, h homeSpec) error {
	if _, err := r.Lstat(u.Home); err == nil {
		return nil
	}
	if err := r.MkdirAll(path.Dir(path.Clean(u.Home)), 0o755); err != nil {
		return fmt.Errorf("create home: %w", err)
	}
	if err := r.MkdirAll(u.Home, h.mode); err != nil {
		return fmt.Errorf("create home: %w", err)
	}
	if err := r.chownIfRoot(u.Home, u.UID, u.GID, false); err != nil {
		return fmt.Errorf("create home: %w", err)
	}
	if err := r.Chmod(u.Home, h.mode); err != nil { // chown may clear setgid
		return fmt.Errorf("create home: %w", err)
	}
	if fi, err := r.Stat(h.skel); err != nil || !fi.IsDir() {
		return nil
	}
	if err := r.CopyTree(h.skel, u.Home, u.UID, u.GID); err != nil {
		return fmt.Errorf("copy %s: %w", h.skel, err)
	}
	return nil
}

// chownIfRoot chowns p when running as root (only root can give files
// away); otherwise it does nothing.
func (r *Root) chownIfRoot(p string, uid, gid int, link bool) error {
	if os.Geteuid() != 0 {
		return nil
	}
	if link {
		return r.Lchown(p, uid, gid)
	}
	return r.Chown(p, uid, gid)
}

// Readlink returns the target of the symlink p.
func (r *Root) Readlink(p string) (string, error) {
	hp, err := r.resolveNoFollow(p)
	if err != nil {
		return "", err
	}
	return os.Readlink(hp)
}

// CopyTree copies the contents of directory src into directory dst (both
// inside the root), keeping modes, copying symlinks as symlinks, skipping
// other special files, and owning everything by uid:gid when running as
// root. Existing files in dst are replaced.
func (r *Root) CopyTree(src, dst string, uid, gid int) error {
	ents, err := r.ReadDir(src)
	if err != nil {
		return err
	}
	for _, e := range ents {
		s, d := path.Join(src, e.Name()), path.Join(dst, e.Name())
		fi, err := r.Lstat(s)
		if err != nil {
			return err
		}
		switch {
		case fi.IsDir():
			if err := r.MkdirAll(d, fi.Mode()); err != nil {
				return err
			}
			if err := r.chownIfRoot(d, uid, gid, false); err != nil {
				return err
			}
			if err := r.Chmod(d, fi.Mode()); err != nil {
				return err
			}
			if err := r.CopyTree(s, d, uid, gid); err != nil {
				return err
			}
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := r.Readlink(s)
			if err != nil {
				return err
			}
			if err := r.Symlink(target, d); err != nil {
				return err
			}
			if err := r.chownIfRoot(d, uid, gid, true); err != nil {
				return err
			}
		case fi.Mode().IsRegular():
			b, err := r.ReadFile(s)
			if err != nil {
				return err
			}
			o := WriteOpts{Perm: fi.Mode(), UID: -1, GID: -1}
			if os.Geteuid() == 0 {
				o.UID, o.GID = uid, gid
			}
			if err := r.WriteFileOpts(d, b, o); err != nil {
				return err
			}
		}
	}
	return nil
}
