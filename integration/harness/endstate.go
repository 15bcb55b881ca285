package harness

// The end state of a provisioned root, as a flat manifest: one key per
// fact ("user:alice", "file:/etc/hosts", "cloud:instances/iid/sem/config_ssh"),
// one comparable string per key. Two roots provisioned from the same seed
// (cloudroot's and cloud-init's) are compared by diffing their manifests;
// an allowlist names the differences that are expected, each with a reason.
//
// What goes in: every account (passwd, shadow fields without hash bytes,
// groups), home directories and authorized_keys, sudoers.d, hostname and
// hosts, fstab, the SSH host keys present (type, mode, owner — never the key
// bytes, which differ by design), sshd configuration, network configuration
// (ENI, netplan, networkd, udev's persistent-net rules), the /var/lib/cloud
// tree (layout; content of its small text files, but not of semaphores,
// whose content is a pid and a time), status.json and result.json reduced
// to datasource, stage completion and errors, and any further files the
// caller names (write_files targets...). File content has its version
// strings and times replaced by placeholders (NormalizeVolatile).

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"
)

// RootFS is the read side of a root filesystem: *Image, or a fake in tests.
type RootFS interface {
	ReadFile(p string) ([]byte, error)
	Stat(p string) (FileInfo, error)
	ReadDir(p string) ([]string, error)
}

var _ RootFS = (*Image)(nil)

// Manifest maps each fact's key to its value.
type Manifest map[string]string

// EndStateSpec names what EndState collects beyond its fixed set.
type EndStateSpec struct {
	// Files are recorded with mode, owner and content (absent files too).
	Files []string
}

// maxContent bounds the file content a manifest carries; longer or binary
// files are recorded by size.
const maxContent = 16 << 10

// Fixed files whose content, mode and owner are recorded.
var endStateFiles = []string{
	"/etc/hostname", "/etc/hosts", "/etc/fstab", "/etc/mailname",
	"/etc/ssh/sshd_config", "/etc/sudoers",
	"/etc/network/interfaces",
	"/etc/udev/rules.d/70-persistent-net.rules",
	"/etc/default/locale", "/etc/timezone",
	"/root/.ssh/authorized_keys",
}

// Directories whose every entry is recorded like endStateFiles.
var endStateDirs = []string{
	"/etc/sudoers.d", "/etc/ssh/sshd_config.d",
	"/etc/network/interfaces.d", "/etc/netplan", "/etc/systemd/network",
}

// CloudDir is cloud-init's state directory.
const CloudDir = "/var/lib/cloud"

// EndState reads the manifest of root.
func EndState(root RootFS, spec EndStateSpec) (Manifest, error) {
	m := Manifest{}
	var errs []error
	if err := m.accounts(root); err != nil {
		errs = append(errs, err)
	}
	files := slices.Clone(endStateFiles)
	for _, d := range endStateDirs {
		names, err := root.ReadDir(d)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
		if err == nil && len(names) == 0 {
			m["dir:"+d] = "empty"
		}
		for _, n := range names {
			files = append(files, path.Join(d, n))
		}
	}
	files = append(files, spec.Files...)
	for _, p := range files {
		if err := m.file(root, p); err != nil {
			errs = append(errs, err)
		}
	}
	if err := m.hostKeys(root); err != nil {
		errs = append(errs, err)
	}
	if err := m.machineID(root); err != nil {
		errs = append(errs, err)
	}
	if err := m.cloudTree(root, CloudDir); err != nil {
		errs = append(errs, err)
	}
	if err := m.status(root); err != nil {
		errs = append(errs, err)
	}
	return m, errors.Join(errs...)
}

// describe is a file's mode, owner and type-specific detail: a symlink's
// target, a directory's "dir", a file's content (or size).
func describe(root RootFS, p string, fi FileInfo, content bool) (string, error) {
	head := fmt.Sprintf("mode=%04o owner=%d:%d", fi.Mode.Perm()|fi.Mode&(fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky), fi.UID, fi.GID)
	switch {
	case fi.Mode&fs.ModeSymlink != 0:
		return "symlink -> " + fi.LinkTarget, nil
	case fi.Mode.IsDir():
		return "dir " + head, nil
	case !fi.Mode.IsRegular():
		return fmt.Sprintf("%v %s", fi.Mode.Type(), head), nil
	case !content:
		return "file " + head, nil
	}
	if fi.Size > maxContent {
		return fmt.Sprintf("file %s size=%d", head, fi.Size), nil
	}
	b, err := root.ReadFile(p)
	if err != nil {
		return "", fmt.Errorf("end state: reading %s: %w", p, err)
	}
	if !utf8.Valid(b) {
		return fmt.Sprintf("file %s binary size=%d", head, len(b)), nil
	}
	return "file " + head + "\n" + NormalizeVolatile(string(b)), nil
}

// Volatile text both implementations write into files: version strings
// and times. NormalizeVolatile replaces them by placeholders, so a file
// whose only difference is when and by which version it was written
// compares equal.
var volatile = []struct {
	re   *regexp.Regexp
	with string
}{
	// sudoers.d, hosts...: "# Created by cloud-init v. 26.2 on Wed, 25 Nov 2026 18:07:35 +0000"
	{regexp.MustCompile(`(?m)^# Created by cloud-init v\. \S+ on .*$`), "# Created by cloud-init v. VERSION on DATE"},
	// boot-finished: "204.08 - Wed, 25 Nov 2026 18:10:35 +0000 - v. 26.2"
	{regexp.MustCompile(`(?m)^\d+(\.\d+)? - .+ - v\. \S+$`), "UPTIME - DATE - v. VERSION"},
}

// NormalizeVolatile replaces version strings and times in s (see volatile).
func NormalizeVolatile(s string) string {
	for _, v := range volatile {
		s = v.re.ReplaceAllString(s, v.with)
	}
	return s
}

// file records p (absent: "absent").
func (m Manifest) file(root RootFS, p string) error {
	fi, err := root.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		m["file:"+p] = "absent"
		return nil
	}
	if err != nil {
		return fmt.Errorf("end state: %w", err)
	}
	v, err := describe(root, p, fi, true)
	if err != nil {
		return err
	}
	m["file:"+p] = v
	return nil
}

// accounts records users, their shadow fields, groups and home directories.
func (m Manifest) accounts(root RootFS) error {
	pb, err := root.ReadFile("/etc/passwd")
	if err != nil {
		return fmt.Errorf("end state: %w", err)
	}
	gb, err := root.ReadFile("/etc/group")
	if err != nil {
		return fmt.Errorf("end state: %w", err)
	}
	users, groups := ParsePasswd(pb), ParseGroup(gb)
	shadow := map[string][]string{}
	if sb, err := root.ReadFile("/etc/shadow"); err == nil {
		for _, l := range Lines(sb) {
			if f := strings.Split(l, ":"); len(f) == 9 {
				shadow[f[0]] = f
			}
		}
	}
	gidName := map[int]string{}
	for _, g := range groups {
		gidName[g.GID] = g.Name
	}
	var errs []error
	for name, u := range users {
		m["user:"+name] = fmt.Sprintf("uid=%d gid=%d(%s) gecos=%q home=%s shell=%s groups=%s",
			u.UID, u.GID, gidName[u.GID], u.Gecos, u.Home, u.Shell, strings.Join(Groups(groups, name), ","))
		if f, ok := shadow[name]; ok {
			// Hash presence and lock, the ageing fields; not the hash, nor
			// the last change (a date).
			m["shadow:"+name] = fmt.Sprintf("password=%s min=%s max=%s warn=%s inactive=%s expire=%s",
				PasswordState(f[1]), f[3], f[4], f[5], f[6], f[7])
		} else {
			m["shadow:"+name] = "absent"
		}
		if u.UID < 1000 || u.UID == 65534 {
			continue
		}
		for _, p := range []string{u.Home, path.Join(u.Home, ".ssh")} {
			fi, err := root.Stat(p)
			if errors.Is(err, fs.ErrNotExist) {
				m["file:"+p] = "absent"
				continue
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("end state: %w", err))
				continue
			}
			v, err := describe(root, p, fi, false)
			if err != nil {
				errs = append(errs, err)
			}
			m["file:"+p] = v
		}
		if err := m.file(root, path.Join(u.Home, ".ssh", "authorized_keys")); err != nil {
			errs = append(errs, err)
		}
	}
	for name, g := range groups {
		mem := slices.Clone(g.Members)
		sort.Strings(mem)
		m["group:"+name] = fmt.Sprintf("gid=%d members=%s", g.GID, strings.Join(mem, ","))
	}
	return errors.Join(errs...)
}

// hostKeys records each /etc/ssh/ssh_host_* file: mode, owner and, for a
// public key, its type (the key itself differs by design).
func (m Manifest) hostKeys(root RootFS) error {
	names, err := root.ReadDir("/etc/ssh")
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("end state: %w", err)
	}
	var errs []error
	for _, n := range names {
		if !strings.HasPrefix(n, "ssh_host_") {
			continue
		}
		p := path.Join("/etc/ssh", n)
		fi, err := root.Stat(p)
		if err != nil {
			errs = append(errs, fmt.Errorf("end state: %w", err))
			continue
		}
		v, err := describe(root, p, fi, false)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if strings.HasSuffix(n, ".pub") && fi.Mode.IsRegular() {
			b, err := root.ReadFile(p)
			if err != nil {
				errs = append(errs, fmt.Errorf("end state: %w", err))
				continue
			}
			typ, _, _ := strings.Cut(strings.TrimSpace(string(b)), " ")
			v += " type=" + typ
		}
		m["hostkey:"+n] = v
	}
	return errors.Join(errs...)
}

// machineID records whether /etc/machine-id holds an ID (not the ID).
func (m Manifest) machineID(root RootFS) error {
	b, err := root.ReadFile("/etc/machine-id")
	switch {
	case errors.Is(err, fs.ErrNotExist):
		m["machine-id"] = "absent"
	case err != nil:
		return fmt.Errorf("end state: %w", err)
	case len(strings.TrimSpace(string(b))) == 32:
		m["machine-id"] = "set"
	default:
		m["machine-id"] = fmt.Sprintf("not an ID (%d bytes)", len(b))
	}
	return nil
}

// cloudTree records every entry under dir, keyed "cloud:<relative path>":
// directories and symlinks as such, semaphores and JSON or pickle files
// by mode and owner, other small text files with their content.
func (m Manifest) cloudTree(root RootFS, dir string) error {
	names, err := root.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) && dir == CloudDir {
			m["cloud:"] = "absent"
			return nil
		}
		return fmt.Errorf("end state: %w", err)
	}
	var errs []error
	for _, n := range names {
		p := path.Join(dir, n)
		fi, err := root.Stat(p)
		if err != nil {
			errs = append(errs, fmt.Errorf("end state: %w", err))
			continue
		}
		rel := strings.TrimPrefix(p, CloudDir+"/")
		content := path.Base(dir) != "sem" && !strings.HasSuffix(n, ".json") && !strings.HasSuffix(n, ".pkl")
		v, err := describe(root, p, fi, content)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		m["cloud:"+rel] = v
		if fi.Mode.IsDir() {
			if err := m.cloudTree(root, p); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// status records status.json and result.json: the datasource, each stage's
// completion and errors, result's errors. Times are left out.
func (m Manifest) status(root RootFS) error {
	var errs []error
	b, err := root.ReadFile(StatusPath)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		m["status"] = "absent"
	case err != nil:
		errs = append(errs, fmt.Errorf("end state: %w", err))
	default:
		st, err := ParseStatus(b)
		if err != nil {
			m["status"] = "unparsable: " + err.Error()
			break
		}
		m["status:datasource"] = st.Datasource
		m["status:stage"] = st.Stage
		for name, s := range st.Stages {
			done := "not run"
			switch {
			case s.Finished != nil:
				done = "finished"
			case s.Start != nil:
				done = "started, not finished"
			}
			m["status:"+name] = fmt.Sprintf("%s errors=%s", done, jsonList(s.Errors))
			for level, es := range s.RecoverableErrors {
				m["status:"+name+":recoverable:"+level] = jsonList(es)
			}
		}
	}
	b, err = root.ReadFile(ResultPath)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		m["result"] = "absent"
	case err != nil:
		errs = append(errs, fmt.Errorf("end state: %w", err))
	default:
		r, err := ParseResult(b)
		if err != nil {
			m["result"] = "unparsable: " + err.Error()
			break
		}
		m["result:datasource"] = r.Datasource
		m["result:errors"] = jsonList(r.Errors)
		for level, es := range r.RecoverableErrors {
			m["result:recoverable:"+level] = jsonList(es)
		}
	}
	return errors.Join(errs...)
}

func jsonList(s []string) string {
	if s == nil {
		s = []string{}
	}
	b, _ := json.Marshal(s)
	return string(b)
}

// ManifestDiff is one key whose value differs between two manifests; a
// missing side has In* false.
type ManifestDiff struct {
	Key         string
	A, B        string
	InA, InB    bool
	Allowed     bool
	AllowReason string
}

// String shows the difference, A's value first.
func (d ManifestDiff) String() string {
	side := func(in bool, v string) string {
		if !in {
			return "(missing)"
		}
		return strings.ReplaceAll(v, "\n", "\n      | ")
	}
	return fmt.Sprintf("%s\n   A: %s\n   B: %s", d.Key, side(d.InA, d.A), side(d.InB, d.B))
}

// DiffManifests lists the keys that differ between a and b, sorted.
func DiffManifests(a, b Manifest) []ManifestDiff {
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	var out []ManifestDiff
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		va, ina := a[k]
		vb, inb := b[k]
		if ina == inb && va == vb {
			continue
		}
		out = append(out, ManifestDiff{Key: k, A: va, B: vb, InA: ina, InB: inb})
	}
	return out
}

// Lines of a manifest, sorted, one "key = value" per entry (multi-line
// values indented), for writing it out.
func (m Manifest) String() string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(m)) {
		fmt.Fprintf(&b, "%s = %s\n", k, strings.ReplaceAll(m[k], "\n", "\n    | "))
	}
	return b.String()
}

// Allowance is one expected difference: the keys matching Key (a path.Match
// pattern) may differ in the way When says, for Reason.
type Allowance struct {
	Key string `json:"key"`
	// When: "differs" (both have the key, values differ), "only-a",
	// "only-b" (the key is missing on the other side), or "any".
	When   string `json:"when"`
	Reason string `json:"reason"`
}

// allowKinds are Allowance.When's values.
var allowKinds = []string{"differs", "only-a", "only-b", "any"}

// ParseAllowlist reads a JSON list of Allowances ({"allow": [...]}; other
// top-level keys, such as a comment, are ignored). Every entry needs a
// valid pattern, a known When and a reason.
func ParseAllowlist(b []byte) ([]Allowance, error) {
	var doc struct {
		Allow []Allowance `json:"allow"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("parsing the allowlist: %w", err)
	}
	var errs []error
	for i, a := range doc.Allow {
		if _, err := path.Match(a.Key, ""); err != nil || a.Key == "" {
			errs = append(errs, fmt.Errorf("allowlist entry %d: bad key pattern %q", i, a.Key))
		}
		if !slices.Contains(allowKinds, a.When) {
			errs = append(errs, fmt.Errorf("allowlist entry %d (%s): when %q is not one of %v", i, a.Key, a.When, allowKinds))
		}
		if strings.TrimSpace(a.Reason) == "" {
			errs = append(errs, fmt.Errorf("allowlist entry %d (%s): no reason", i, a.Key))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("parsing the allowlist: %w", err)
	}
	return doc.Allow, nil
}

// matches reports whether a allows d.
func (a Allowance) matches(d ManifestDiff) bool {
	if ok, _ := path.Match(a.Key, d.Key); !ok {
		return false
	}
	switch a.When {
	case "any":
		return true
	case "differs":
		return d.InA && d.InB
	case "only-a":
		return d.InA && !d.InB
	case "only-b":
		return !d.InA && d.InB
	}
	return false
}

// Allow marks each diff the first matching allowance explains and returns
// the diffs and the allowances that matched nothing (stale entries).
func Allow(diffs []ManifestDiff, list []Allowance) ([]ManifestDiff, []Allowance) {
	used := make([]bool, len(list))
	out := slices.Clone(diffs)
	for i, d := range out {
		for j, a := range list {
			if a.matches(d) {
				out[i].Allowed, out[i].AllowReason = true, a.Reason
				used[j] = true
				break
			}
		}
	}
	var unused []Allowance
	for j, a := range list {
		if !used[j] {
			unused = append(unused, a)
		}
	}
	return out, unused
}
