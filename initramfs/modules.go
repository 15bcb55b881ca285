// Package initramfs builds cloudroot's initramfs: it picks the kernel modules
// a driver list needs out of a depmod'ed module tree, stages them with a
// trimmed modules.dep, and packs the image as a newc cpio archive.
//
// Contract of the module half (this file):
//
//   - A module tree is a directory like /lib/modules/<ver> on which depmod
//     has run: modules.dep is required; modules.softdep, modules.alias,
//     modules.builtin and modules.order are read when present.
//   - Module names are normalized the kernel's way: "-" and "_" are the same
//     character ("crc32c-intel" is module crc32c_intel).
//   - A request names a module, a builtin, or an alias (the softdep
//     "pre: crypto-crc32c" is an alias for crc32c_intel and crc32c_generic).
//     A request prefixed with "?" is optional: if the kernel has no such
//     module it is skipped with a note instead of failing. A request
//     prefixed with "~" is on demand: the module (and its dependencies) is
//     shipped but not listed in modules.load; /init loads it when it needs
//     it (xfs or btrfs once the root's filesystem type is known). Its
//     softdeps are still listed, because the prober would not follow them.
//   - The resolved closure is in load order: for every module, its softdep
//     "pre:" modules, then its modules.dep dependencies (recursively), then
//     the module, then its "post:" modules. Softdeps are soft: a softdep that
//     names nothing in the tree is skipped with a note.
//   - Builtin modules need no file; they appear in the closure with
//     Builtin set so callers can report them, and are never staged or loaded.
//   - In the image, a module file whose name mixes "-" and "_"
//     (nls_iso8859-1.ko) is renamed to the normalized name
//     (nls_iso8859_1.ko): u-root's prober looks a name up as all-"_" or
//     all-"-" only and would never find it. The kernel takes a module's
//     name from the .ko itself, so the rename changes nothing else.
//
// u-root's kmodule.Prober, which cloudroot-init uses to load modules,
// follows modules.dep but ignores modules.softdep. Stage therefore also
// writes etc/cloudroot/modules.load: the requested modules plus the softdep
// modules they pull in, in load order (crc32c_generic before ext4).
package initramfs

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/coldplug"
)

// ModulesLoadPath is where Stage writes the list of modules /init loads,
// relative to the image root.
const ModulesLoadPath = "etc/cloudroot/modules.load"

// ExtraSoftdeps are "pre:" softdeps that cloudroot adds on top of the tree's
// modules.softdep. ext4 (and jbd2) on a metadata_csum filesystem cannot mount
// without a crc32c implementation, and the mount fails with a misleading
// ENOENT; Debian's depmod records "softdep ext4 pre: crypto-crc32c", but
// other trees may not, and nothing in the initramfs would follow it anyway.
var ExtraSoftdeps = map[string][]string{
	"ext4": {"crc32c_generic"},
	"jbd2": {"crc32c_generic"},
}

// Module is one kernel module of a resolved closure.
type Module struct {
	// Name is the normalized module name ("crc32c_intel").
	Name string
	// Path is the file relative to the module tree
	// ("kernel/arch/x86/crypto/crc32c-intel.ko"); empty for builtins.
	Path string
	// Deps are the paths of the modules.dep dependencies, as depmod listed
	// them (the full transitive set).
	Deps []string
	// Builtin is set for modules compiled into the kernel.
	Builtin bool
	// Requested is set for modules named in the request list.
	Requested bool
	// OnDemand is set for modules requested only with "~": shipped, but
	// loaded by /init when needed rather than at startup.
	OnDemand bool
	// Soft is set for modules pulled in by a softdep of another module in
	// the closure; like requested modules they must be loaded explicitly.
	Soft bool
	// Pre and Post are the names of this module's resolved softdeps.
	Pre, Post []string
}

// Load reports whether /init must load the module at startup: requested
// (not on demand) or softdep modules with a file. Plain dependencies are
// loaded by the prober.
func (m Module) Load() bool { return !m.Builtin && (m.Requested && !m.OnDemand || m.Soft) }

// ImagePath is where the module file goes in the image, relative to the
// module directory: Path, with a basename that mixes "-" and "_" normalized
// and without a compression suffix (".ko.xz", ".ko.zst", ".ko.gz" become
// ".ko": Stage decompresses them, so that /init's loader, which would
// decompress each in Go in the guest — 22–32 s of the drivers stage for
// trixie's .ko.xz under TCG — hands the kernel the ELF file as it is).
func (m Module) ImagePath() string { return imagePath(m.Path) }

func imagePath(p string) string {
	dir, base := path.Split(p)
	stem, ext, _ := strings.Cut(base, ".ko")
	if compressed(ext) {
		ext = ""
	}
	if strings.Contains(stem, "-") && strings.Contains(stem, "_") {
		stem = Normalize(stem)
	}
	return dir + stem + ".ko" + ext
}

// compressed reports whether a module file's suffix after ".ko" is one of
// the compressions kmod reads (and readModule decompresses).
func compressed(ext string) bool {
	switch ext {
	case ".xz", ".zst", ".gz":
		return true
	}
	return false
}

// Request is one entry of a driver list.
type Request struct {
	// Name is a module name, a builtin or an alias; or, when it contains
	// a "/", a path in the module tree: a directory (every module under
	// it, "kernel/drivers/net/ethernet/intel") or a glob over module paths
	// ("kernel/drivers/scsi/mpt*/*.ko"). Path entries are always optional
	// and on demand: their modules are shipped for coldplug to load when
	// a device matches.
	Name string
	// Optional ("?name"): skip with a note when the kernel lacks it.
	Optional bool
	// OnDemand ("~name"): ship, but leave out of modules.load.
	OnDemand bool
}

// String renders the request the way a driver list spells it.
func (r Request) String() string {
	s := r.Name
	if r.OnDemand {
		s = "~" + s
	}
	if r.Optional {
		s = "?" + s
	}
	return s
}

// IsPath reports whether the request names a tree path rather than a module.
func (r Request) IsPath() bool { return strings.Contains(r.Name, "/") }

// ParseRequest parses "name", "?name", "~name" or "?~name", or a tree path
// ("kernel/drivers/net/ethernet/intel", "kernel/drivers/scsi/mpt*/*.ko").
func ParseRequest(s string) (Request, error) {
	r := Request{Name: strings.TrimSpace(s)}
	for len(r.Name) > 0 && (r.Name[0] == '?' || r.Name[0] == '~') {
		if r.Name[0] == '?' {
			r.Optional = true
		} else {
			r.OnDemand = true
		}
		r.Name = r.Name[1:]
	}
	if r.Name == "" {
		return Request{}, fmt.Errorf("empty module name in %q", s)
	}
	if r.IsPath() {
		r.Name = strings.TrimSuffix(r.Name, "/")
		if _, err := path.Match(r.Name, ""); err != nil || !fs.ValidPath(r.Name) {
			return Request{}, fmt.Errorf("invalid module tree path %q", s)
		}
		r.Optional, r.OnDemand = true, true
		return r, nil
	}
	for _, c := range r.Name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return Request{}, fmt.Errorf("invalid character %q in module name %q", c, r.Name)
		}
	}
	return r, nil
}

// ParseDriverList reads a driver list: one module name per line, "#" starts
// a comment, blank lines are ignored, "?name" marks an optional module and
// "~name" one loaded on demand.
// Duplicates keep their first position.
func ParseDriverList(r io.Reader) ([]Request, error) {
	var (
		reqs []Request
		seen = map[string]bool{}
		errs []error
	)
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		text, _, _ := strings.Cut(sc.Text(), "#")
		fields := strings.Fields(text)
		switch len(fields) {
		case 0:
			continue
		case 1:
		default:
			errs = append(errs, fmt.Errorf("line %d: one module per line, got %q", line, strings.TrimSpace(text)))
			continue
		}
		req, err := ParseRequest(fields[0])
		if err != nil {
			errs = append(errs, fmt.Errorf("line %d: %w", line, err))
			continue
		}
		if n := Normalize(req.Name); !seen[n] {
			seen[n] = true
			reqs = append(reqs, req)
		}
	}
	if err := sc.Err(); err != nil {
		errs = append(errs, fmt.Errorf("reading driver list: %w", err))
	}
	return reqs, errors.Join(errs...)
}

// ReadDriverList parses the driver list file at path. A line "include
// FILE" reads another list in its place (FILE relative to the including
// file's directory; a ".txt" suffix may be left out), so a profile can
// build on the floor list and on other profiles. Duplicates keep their
// first position; an include cycle is an error.
func ReadDriverList(path string) ([]Request, error) {
	return readDriverList(path, nil)
}

func readDriverList(p string, stack []string) ([]Request, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return nil, fmt.Errorf("driver list %s: %w", p, err)
	}
	if slices.Contains(stack, abs) {
		return nil, fmt.Errorf("driver list %s: include cycle (%s)", p, strings.Join(append(stack, abs), " -> "))
	}
	raw, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("opening driver list: %w", err)
	}
	var (
		reqs  []Request
		seen  = map[string]bool{}
		errs  []error
		chunk strings.Builder
	)
	add := func(rs []Request) {
		for _, r := range rs {
			if n := Normalize(r.Name); !seen[n] {
				seen[n] = true
				reqs = append(reqs, r)
			}
		}
	}
	flush := func() {
		rs, err := ParseDriverList(strings.NewReader(chunk.String()))
		if err != nil {
			errs = append(errs, fmt.Errorf("parsing driver list %s: %w", p, err))
		}
		add(rs)
		chunk.Reset()
	}
	for i, line := range strings.Split(string(raw), "\n") {
		text, _, _ := strings.Cut(line, "#")
		f := strings.Fields(text)
		if len(f) == 0 || f[0] != "include" {
			chunk.WriteString(line + "\n")
			continue
		}
		flush()
		// Blank lines keep the next chunk's line numbers the file's.
		chunk.WriteString(strings.Repeat("\n", i+1))
		if len(f) != 2 {
			errs = append(errs, fmt.Errorf("driver list %s: want \"include FILE\", got %q", p, strings.TrimSpace(text)))
			continue
		}
		inc := f[1]
		if !filepath.IsAbs(inc) {
			inc = filepath.Join(filepath.Dir(p), inc)
		}
		if _, err := os.Stat(inc); err != nil && filepath.Ext(inc) == "" {
			inc += ".txt"
		}
		rs, err := readDriverList(inc, append(stack, abs))
		if err != nil {
			errs = append(errs, err)
		}
		add(rs)
	}
	flush()
	return reqs, errors.Join(errs...)
}

// Normalize returns the kernel's spelling of a module name: "-" becomes "_".
func Normalize(name string) string { return strings.ReplaceAll(name, "-", "_") }

// nameOf returns the module name of a module file path
// ("kernel/drivers/char/hw_random/virtio-rng.ko.xz" -> "virtio_rng").
func nameOf(p string) string {
	b := path.Base(p)
	for _, ext := range []string{".gz", ".xz", ".zst"} {
		b = strings.TrimSuffix(b, ext)
	}
	return Normalize(strings.TrimSuffix(b, ".ko"))
}

// Tree is a parsed, depmod'ed module tree.
type Tree struct {
	// Dir is the module directory (…/lib/modules/<ver>).
	Dir string
	// paths maps module name -> relative path of its file.
	paths map[string]string
	// deps maps module name -> dependency paths in modules.dep order.
	deps map[string][]string
	// builtin holds the names of builtin modules.
	builtin map[string]bool
	// pre and post map module name -> softdep targets (raw: names or aliases).
	pre, post map[string][]string
	// aliases are modules.alias entries in file order.
	aliases []alias
	// order is modules.order (relative paths), if present.
	order []string
}

type alias struct{ pattern, module string }

// MissingError names the required modules the tree does not have.
type MissingError struct {
	Dir   string
	Names []string
}

func (e *MissingError) Error() string {
	return fmt.Sprintf("modules not found in %s (neither a module, a builtin nor an alias): %s",
		e.Dir, strings.Join(e.Names, ", "))
}

// LoadTree parses the depmod output in dir. modules.dep must exist; the
// other index files are optional.
func LoadTree(dir string) (*Tree, error) {
	t := &Tree{
		Dir:     dir,
		paths:   map[string]string{},
		deps:    map[string][]string{},
		builtin: map[string]bool{},
		pre:     map[string][]string{},
		post:    map[string][]string{},
	}
	parsers := []struct {
		file     string
		required bool
		parse    func(io.Reader) error
	}{
		{"modules.dep", true, t.parseDep},
		{"modules.builtin", false, t.parseBuiltin},
		{"modules.softdep", false, t.parseSoftdep},
		{"modules.alias", false, t.parseAlias},
		{"modules.order", false, t.parseOrder},
	}
	for _, p := range parsers {
		f, err := os.Open(filepath.Join(dir, p.file))
		if errors.Is(err, os.ErrNotExist) && !p.required {
			continue
		}
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil, fmt.Errorf("opening %s (run depmod on the tree first): %w", p.file, err)
			}
			return nil, fmt.Errorf("opening %s: %w", p.file, err)
		}
		err = p.parse(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("parsing %s: %w", filepath.Join(dir, p.file), err)
		}
	}
	return t, nil
}

func scanLines(r io.Reader, fn func(line int, text string) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		if err := fn(line, text); err != nil {
			return err
		}
	}
	return sc.Err()
}

// relPath makes a modules.dep path relative to the tree (depmod writes
// absolute paths for modules outside it, which is rare).
func (t *Tree) relPath(p string) string {
	if filepath.IsAbs(p) {
		if r, err := filepath.Rel(t.Dir, p); err == nil && !strings.HasPrefix(r, "..") {
			return filepath.ToSlash(r)
		}
	}
	return p
}

// parseDep reads "path: dep dep ..." lines.
func (t *Tree) parseDep(r io.Reader) error {
	return scanLines(r, func(line int, text string) error {
		mod, rest, ok := strings.Cut(text, ":")
		if !ok || strings.TrimSpace(mod) == "" {
			return fmt.Errorf("line %d: want \"path: deps\", got %q", line, text)
		}
		p := t.relPath(strings.TrimSpace(mod))
		name := nameOf(p)
		if _, dup := t.paths[name]; dup {
			return nil // depmod keeps the first (highest priority) one too
		}
		t.paths[name] = p
		var deps []string
		for _, d := range strings.Fields(rest) {
			deps = append(deps, t.relPath(d))
		}
		t.deps[name] = deps
		return nil
	})
}

// parseBuiltin reads modules.builtin: one path per line.
func (t *Tree) parseBuiltin(r io.Reader) error {
	return scanLines(r, func(_ int, text string) error {
		t.builtin[nameOf(text)] = true
		return nil
	})
}

// parseSoftdep reads "softdep NAME pre: a b post: c" lines. Targets before
// any "pre:"/"post:" are ignored, as kmod does.
func (t *Tree) parseSoftdep(r io.Reader) error {
	return scanLines(r, func(line int, text string) error {
		f := strings.Fields(text)
		if len(f) < 2 || f[0] != "softdep" {
			return fmt.Errorf("line %d: want \"softdep NAME pre: ... post: ...\", got %q", line, text)
		}
		name := Normalize(f[1])
		var dst map[string][]string
		for _, tok := range f[2:] {
			switch tok {
			case "pre:":
				dst = t.pre
			case "post:":
				dst = t.post
			default:
				if dst != nil {
					dst[name] = appendNew(dst[name], tok)
				}
			}
		}
		return nil
	})
}

// appendNew appends the values not already in s.
func appendNew(s []string, vs ...string) []string {
	for _, v := range vs {
		if !slices.Contains(s, v) {
			s = append(s, v)
		}
	}
	return s
}

// parseAlias reads "alias PATTERN MODULE" lines.
func (t *Tree) parseAlias(r io.Reader) error {
	return scanLines(r, func(line int, text string) error {
		f := strings.Fields(text)
		if len(f) != 3 || f[0] != "alias" {
			return fmt.Errorf("line %d: want \"alias PATTERN MODULE\", got %q", line, text)
		}
		t.aliases = append(t.aliases, alias{pattern: f[1], module: Normalize(f[2])})
		return nil
	})
}

// parseOrder reads modules.order: one path per line.
func (t *Tree) parseOrder(r io.Reader) error {
	return scanLines(r, func(_ int, text string) error {
		t.order = append(t.order, text)
		return nil
	})
}

// lookup returns the module names a request name stands for: the module
// itself, a builtin, or every module an alias matches (in modules.alias order).
func (t *Tree) lookup(name string) []string {
	n := Normalize(name)
	if _, ok := t.paths[n]; ok || t.builtin[n] {
		return []string{n}
	}
	var out []string
	for _, a := range t.aliases {
		match := a.pattern == name || coldplug.Fnmatch(a.pattern, name)
		if match && (t.paths[a.module] != "" || t.builtin[a.module]) {
			out = appendNew(out, a.module)
		}
	}
	return out
}

// Result is a resolved closure plus what was skipped on the way.
type Result struct {
	// Modules is the closure in load order.
	Modules []Module
	// Notes are human-readable remarks: skipped optional modules and
	// softdeps, builtins, aliases.
	Notes []string
}

// LoadOrder returns the names of the modules /init must load, in order.
func (r *Result) LoadOrder() []string {
	var out []string
	for _, m := range r.Modules {
		if m.Load() {
			out = append(out, m.Name)
		}
	}
	return out
}

// Resolve computes the closure of reqs in load order. Missing required
// modules are reported together in a *MissingError.
func (t *Tree) Resolve(reqs []Request) (*Result, error) {
	res := &Result{}
	index := map[string]int{} // name -> position in res.Modules
	state := map[string]int{} // 0 new, 1 visiting, 2 done
	var missing []string

	// visit appends name's closure to res.Modules in load order.
	var visit func(name string, requested, onDemand, soft bool)
	visit = func(name string, requested, onDemand, soft bool) {
		if state[name] != 0 {
			if i, ok := index[name]; ok {
				m := &res.Modules[i]
				switch {
				case requested && m.Requested:
					m.OnDemand = m.OnDemand && onDemand // an eager request wins
				case requested:
					m.Requested, m.OnDemand = true, onDemand
				}
				m.Soft = m.Soft || soft
			}
			// state 1 is a softdep cycle: the module is already on its way.
			return
		}
		state[name] = 1
		m := Module{Name: name, Requested: requested, OnDemand: requested && onDemand, Soft: soft, Builtin: t.builtin[name] && t.paths[name] == ""}
		if !m.Builtin {
			m.Path = t.paths[name]
			m.Deps = slices.Clone(t.deps[name])
		}
		for _, target := range t.softdeps(name, t.pre, ExtraSoftdeps) {
			mods := t.lookup(target)
			if len(mods) == 0 {
				res.Notes = append(res.Notes, fmt.Sprintf("%s: softdep pre: %s not in the tree, skipped", name, target))
			}
			for _, sm := range mods {
				m.Pre = appendNew(m.Pre, sm)
				visit(sm, false, false, true)
			}
		}
		// depmod lists the full transitive set with the first to load last.
		for i := len(m.Deps) - 1; i >= 0; i-- {
			visit(nameOf(m.Deps[i]), false, false, false)
		}
		index[name] = len(res.Modules)
		res.Modules = append(res.Modules, m)
		state[name] = 2
		for _, target := range t.softdeps(name, t.post, nil) {
			mods := t.lookup(target)
			if len(mods) == 0 {
				res.Notes = append(res.Notes, fmt.Sprintf("%s: softdep post: %s not in the tree, skipped", name, target))
			}
			for _, sm := range mods {
				res.Modules[index[name]].Post = appendNew(res.Modules[index[name]].Post, sm)
				visit(sm, false, false, true)
			}
		}
	}

	for _, r := range reqs {
		if r.IsPath() {
			mods := t.expandPath(r.Name)
			if len(mods) == 0 {
				res.Notes = append(res.Notes, fmt.Sprintf("no module under %s, skipped", r.Name))
			}
			for _, m := range mods {
				visit(m, true, true, false)
			}
			continue
		}
		mods := t.lookup(r.Name)
		switch {
		case len(mods) == 0 && r.Optional:
			res.Notes = append(res.Notes, fmt.Sprintf("optional module %s not in the tree, skipped", r.Name))
			continue
		case len(mods) == 0:
			missing = append(missing, r.Name)
			continue
		case len(mods) > 1 || mods[0] != Normalize(r.Name):
			res.Notes = append(res.Notes, fmt.Sprintf("%s is an alias for %s", r.Name, strings.Join(mods, ", ")))
		}
		for _, m := range mods {
			if t.builtin[m] && t.paths[m] == "" {
				res.Notes = append(res.Notes, fmt.Sprintf("%s is built into the kernel", m))
			}
			visit(m, true, r.OnDemand, false)
		}
	}
	if len(missing) > 0 {
		return res, &MissingError{Dir: t.Dir, Names: missing}
	}
	return res, nil
}

// expandPath returns the modules whose file is under the directory p or
// whose path matches the glob p, in modules.order order (then by name).
func (t *Tree) expandPath(p string) []string {
	var out []string
	match := func(mp string) bool {
		if strings.HasPrefix(mp, p+"/") {
			return true
		}
		ok, _ := path.Match(p, mp)
		if !ok {
			// A glob naming directories ("kernel/drivers/scsi/mpt*")
			// takes everything under them.
			for d := path.Dir(mp); d != "." && !ok; d = path.Dir(d) {
				ok, _ = path.Match(p, d)
			}
		}
		return ok
	}
	seen := map[string]bool{}
	for _, mp := range t.order {
		if n := nameOf(mp); t.paths[n] == mp && match(mp) && !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	var rest []string
	for n, mp := range t.paths {
		if !seen[n] && match(mp) {
			rest = append(rest, n)
		}
	}
	slices.Sort(rest)
	return append(out, rest...)
}

// Aliases returns the tree's modules.alias entries for modules that have a
// file, for matching device modaliases (host-only images).
func (t *Tree) Aliases() *coldplug.Aliases {
	var list []coldplug.Alias
	for _, a := range t.aliases {
		if t.paths[a.module] != "" {
			list = append(list, coldplug.Alias{Pattern: a.pattern, Module: a.module})
		}
	}
	return coldplug.NewAliases(list)
}

// softdeps returns the raw softdep targets of name from the tree plus extra,
// skipping extras the tree does not have and targets that name the module
// itself.
func (t *Tree) softdeps(name string, tree, extra map[string][]string) []string {
	out := slices.Clone(tree[name])
	for _, e := range extra[name] {
		if len(t.lookup(e)) > 0 {
			out = appendNew(out, e)
		}
	}
	return slices.DeleteFunc(out, func(s string) bool { return Normalize(s) == name })
}

// Resolve loads the module tree at kmodDir and resolves names (each "name"
// or "?name" for optional) into the closure in load order.
func Resolve(kmodDir string, names []string) ([]Module, error) {
	t, err := LoadTree(kmodDir)
	if err != nil {
		return nil, err
	}
	reqs := make([]Request, 0, len(names))
	for _, n := range names {
		r, err := ParseRequest(n)
		if err != nil {
			return nil, err
		}
		reqs = append(reqs, r)
	}
	res, err := t.Resolve(reqs)
	if err != nil {
		return nil, err
	}
	return res.Modules, nil
}
