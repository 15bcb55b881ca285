// Package coldplug loads the kernel modules a machine's devices need, the
// way udev's coldplug does in a distribution's initramfs: it walks the
// devices in sysfs, matches each device's modalias against modules.alias
// (fnmatch patterns, as modprobe matches them), loads the matching modules
// with their softdeps, and scans again while loading drivers exposes new
// devices (a PCI bridge's children, a virtio or vmbus bus, SCSI hosts, USB
// interfaces). Bounded in rounds and in time.
//
// The matcher (this file) is pure; Scan reads a sysfs tree whose root is
// injected; Run and Watch drive the loop with an injected loader.
package coldplug

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// Alias is one "alias PATTERN MODULE" line of modules.alias.
type Alias struct {
	Pattern string
	Module  string
}

// Aliases is a parsed modules.alias. Exact patterns are indexed; the
// others are tried in file order, grouped by the bus prefix before the
// first ":" when the pattern has one without wildcards.
type Aliases struct {
	list  []Alias
	exact map[string][]int
	// byBus maps a literal prefix up to and including ":" to the indices
	// of wildcard patterns starting with it; other wildcard patterns
	// are in anyBus.
	byBus  map[string][]int
	anyBus []int
}

// NewAliases indexes list.
func NewAliases(list []Alias) *Aliases {
	a := &Aliases{list: list, exact: map[string][]int{}, byBus: map[string][]int{}}
	for i, al := range list {
		if !hasMeta(al.Pattern) {
			a.exact[al.Pattern] = append(a.exact[al.Pattern], i)
			continue
		}
		if bus, ok := busPrefix(al.Pattern); ok {
			a.byBus[bus] = append(a.byBus[bus], i)
		} else {
			a.anyBus = append(a.anyBus, i)
		}
	}
	return a
}

// List returns the aliases in file order.
func (a *Aliases) List() []Alias { return a.list }

func hasMeta(p string) bool { return strings.ContainsAny(p, "*?[\\") }

// busPrefix returns the text up to and including the first ":" when no
// wildcard comes before it ("pci:").
func busPrefix(s string) (string, bool) {
	i := strings.IndexByte(s, ':')
	if i < 0 || hasMeta(s[:i]) {
		return "", false
	}
	return s[:i+1], true
}

// ParseAliases reads modules.alias text: "alias PATTERN MODULE" lines, "#"
// comments and blank lines. Module names are normalized ("-" → "_").
func ParseAliases(r io.Reader) (*Aliases, error) {
	var list []Alias
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		f := strings.Fields(text)
		if len(f) != 3 || f[0] != "alias" {
			return nil, fmt.Errorf("modules.alias line %d: want \"alias PATTERN MODULE\", got %q", line, text)
		}
		list = append(list, Alias{Pattern: f[1], Module: Normalize(f[2])})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading modules.alias: %w", err)
	}
	return NewAliases(list), nil
}

// ReadAliases parses the modules.alias file at path.
func ReadAliases(path string) (*Aliases, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("opening modules.alias: %w", err)
	}
	defer f.Close()
	return ParseAliases(f)
}

// Normalize returns the kernel's spelling of a module name: "-" becomes "_".
func Normalize(name string) string { return strings.ReplaceAll(name, "-", "_") }

// Match returns the modules whose patterns match modalias, each once, in
// modules.alias order (modprobe loads them all).
func (a *Aliases) Match(modalias string) []string {
	var idx []int
	idx = append(idx, a.exact[modalias]...)
	if bus, ok := busPrefix(modalias); ok {
		for _, i := range a.byBus[bus] {
			if Fnmatch(a.list[i].Pattern, modalias) {
				idx = append(idx, i)
			}
		}
	}
	for _, i := range a.anyBus {
		if Fnmatch(a.list[i].Pattern, modalias) {
			idx = append(idx, i)
		}
	}
	slices.Sort(idx)
	var out []string
	for _, i := range idx {
		if m := a.list[i].Module; !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	return out
}

// Fnmatch reports whether s matches the shell pattern p as fnmatch(3) with
// no flags does (modprobe's matching of modules.alias): "*" matches any
// run of bytes, "/" included; "?" any one byte; "[...]" a set, with ranges
// and "!" or "^" to negate; "\" quotes the next byte. A malformed set
// ("[" without "]") matches a literal "[".
func Fnmatch(p, s string) bool {
	// Iterative matching with one backtrack point: the last "*".
	pi, si := 0, 0
	starP, starS := -1, 0
	for si < len(s) {
		if pi < len(p) {
			switch p[pi] {
			case '*':
				starP, starS = pi, si
				pi++
				continue
			case '?':
				pi++
				si++
				continue
			case '[':
				if ok, n, valid := matchSet(p[pi:], s[si]); valid {
					if ok {
						pi += n
						si++
						continue
					}
				} else if s[si] == '[' {
					pi++
					si++
					continue
				}
			case '\\':
				if pi+1 < len(p) {
					if p[pi+1] == s[si] {
						pi += 2
						si++
						continue
					}
				} else if s[si] == '\\' {
					pi++
					si++
					continue
				}
			default:
				if p[pi] == s[si] {
					pi++
					si++
					continue
				}
			}
		}
		if starP < 0 {
			return false
		}
		starS++
		pi, si = starP+1, starS
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}

// matchSet matches c against the set at the start of p ("[...]"). It
// returns whether c is in the set, the length of the set's text, and
// whether the set is well formed.
func matchSet(p string, c byte) (match bool, n int, valid bool) {
	i := 1
	negate := false
	if i < len(p) && (p[i] == '!' || p[i] == '^') {
		negate = true
		i++
	}
	first := true
	for i < len(p) {
		if p[i] == ']' && !first {
			return match != negate, i + 1, true
		}
		first = false
		lo := p[i]
		if lo == '\\' && i+1 < len(p) {
			i++
			lo = p[i]
		}
		i++
		hi := lo
		if i+1 < len(p) && p[i] == '-' && p[i+1] != ']' {
			hi = p[i+1]
			if hi == '\\' && i+2 < len(p) {
				i++
				hi = p[i+1]
			}
			i += 2
		}
		if lo <= c && c <= hi {
			match = true
		}
	}
	return false, 0, false
}
