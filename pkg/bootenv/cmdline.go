// Package bootenv reads what the initramfs knows about the machine before
// anything is mounted: the kernel command line, DMI/SMBIOS strings, the block
// devices with their filesystem labels and partition tables, and when device
// enumeration has settled.
//
// Parsing is pure and kept apart from I/O: ParseCmdline, ParseDSString, Probe
// and ProbeTable take strings and io.ReaderAt and never touch the host. The
// I/O side (ReadDMI, Env.List, Env.Settle) takes every root path as an
// argument, so tests run without root on a temp dir that mimics /sys and
// /dev. Nothing here needs udev: labels and UUIDs come from reading
// superblocks directly, the way blkid does.
//
// Command-line contract (cmdline.go):
//   - Tokens split on unquoted white space; a double quote toggles quoting
//     and is kept inside a token, except that the kernel strips a quote
//     opening the token or the value and the matching one ending it
//     (`a="b c"` is key a, value "b c").
//   - A token is key=value at the first '=', or a bare flag.
//   - A bare `--` ends the kernel's parameters; everything after it is kept
//     verbatim (still tokenized) as InitArgs and never matched by Get/Has.
//   - Keys are case-sensitive and compared exactly (the kernel's '-'/'_'
//     equivalence applies only to module parameters, which we don't read).
//   - When a key repeats, Get returns the last one; All returns every one.
package bootenv

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Param is one kernel command-line parameter.
type Param struct {
	Key      string
	Value    string
	HasValue bool // key=value (possibly empty) rather than a bare flag
}

// Cmdline is a parsed kernel command line.
type Cmdline struct {
	params   []Param
	initArgs []string
	raw      string
}

// ParseCmdline tokenizes s (the contents of /proc/cmdline) like the kernel's
// next_arg. It never fails: any input gives some Cmdline.
func ParseCmdline(s string) Cmdline {
	c := Cmdline{raw: strings.TrimRight(s, "\n")}
	rest := s
	afterDashes := false
	for {
		rest = strings.TrimLeft(rest, " \t\n\v\f\r")
		if rest == "" {
			break
		}
		var p Param
		p, rest = nextArg(rest)
		if afterDashes {
			c.initArgs = append(c.initArgs, tokenText(p))
			continue
		}
		if !p.HasValue && p.Key == "--" {
			afterDashes = true
			continue
		}
		c.params = append(c.params, p)
	}
	return c
}

// nextArg splits one token off s (which starts with a non-space) the way the
// kernel's next_arg does, returning the param and the remainder.
func nextArg(s string) (Param, string) {
	inQuote, quoted := false, false
	if s[0] == '"' {
		s = s[1:]
		inQuote, quoted = true, true
	}
	i, equals := 0, -1
	for ; i < len(s); i++ {
		ch := s[i]
		if isSpace(ch) && !inQuote {
			break
		}
		if equals < 0 && ch == '=' {
			equals = i
		}
		if ch == '"' {
			inQuote = !inQuote
		}
	}
	tok, rest := s[:i], s[i:]
	// The kernel drops a closing quote at the token's end when the token
	// (or its value) opened with one.
	var p Param
	if equals < 0 {
		p.Key = tok
		if quoted {
			p.Key = strings.TrimSuffix(p.Key, `"`)
		}
		return p, rest
	}
	p.Key, p.Value, p.HasValue = tok[:equals], tok[equals+1:], true
	if strings.HasPrefix(p.Value, `"`) {
		p.Value = strings.TrimSuffix(p.Value[1:], `"`)
	} else if quoted {
		p.Value = strings.TrimSuffix(p.Value, `"`)
	}
	return p, rest
}

func isSpace(b byte) bool {
	switch b {
	case ' ', '\t', '\n', '\v', '\f', '\r':
		return true
	}
	return false
}

func tokenText(p Param) string {
	if p.HasValue {
		return p.Key + "=" + p.Value
	}
	return p.Key
}

// String returns the command line as it was given (without a trailing
// newline).
func (c Cmdline) String() string { return c.raw }

// Params returns the kernel parameters (before any `--`) in order.
func (c Cmdline) Params() []Param { return append([]Param(nil), c.params...) }

// InitArgs returns the tokens after `--`, which the kernel passes to init.
func (c Cmdline) InitArgs() []string { return append([]string(nil), c.initArgs...) }

// Get returns the value of the last parameter named key. A bare flag yields
// ("", true).
func (c Cmdline) Get(key string) (string, bool) {
	for i := len(c.params) - 1; i >= 0; i-- {
		if c.params[i].Key == key {
			return c.params[i].Value, true
		}
	}
	return "", false
}

// Has reports whether key appears at all, as a bare flag or with a value.
func (c Cmdline) Has(key string) bool {
	_, ok := c.Get(key)
	return ok
}

// All returns the values of every parameter named key, in order.
func (c Cmdline) All(key string) []string {
	var out []string
	for _, p := range c.params {
		if p.Key == key {
			out = append(out, p.Value)
		}
	}
	return out
}

// Disabled reports whether cloud-init=disabled is on the command line (any
// occurrence counts, as in ds-identify).
func (c Cmdline) Disabled() bool {
	for _, v := range c.All("cloud-init") {
		if v == "disabled" {
			return true
		}
	}
	return false
}

// RootKind says how a RootSpec names its device.
type RootKind int

// Root device kinds.
const (
	ByPath      RootKind = iota // /dev/vda1 (or a bare name, vda1)
	ByLabel                     // LABEL=x, /dev/disk/by-label/x
	ByUUID                      // UUID=x, /dev/disk/by-uuid/x (filesystem UUID)
	ByPartUUID                  // PARTUUID=x, /dev/disk/by-partuuid/x
	ByPartLabel                 // PARTLABEL=x, /dev/disk/by-partlabel/x
	ByDevNum                    // fe01 (hex, kernel new_decode_dev) or 254:1
)

func (k RootKind) String() string {
	switch k {
	case ByPath:
		return "path"
	case ByLabel:
		return "LABEL"
	case ByUUID:
		return "UUID"
	case ByPartUUID:
		return "PARTUUID"
	case ByPartLabel:
		return "PARTLABEL"
	case ByDevNum:
		return "devnum"
	}
	return "RootKind(" + strconv.Itoa(int(k)) + ")"
}

// RootSpec is what root= and its companions ask for.
type RootSpec struct {
	Kind  RootKind
	Value string // label, UUID, path… as written (UUID compares ignore case)
	// Major and Minor are set for ByDevNum.
	Major, Minor int

	FSType   string        // rootfstype=
	Flags    string        // rootflags=
	ReadOnly bool          // the last of ro/rw is ro; rw when neither is given
	Init     string        // init=; "" means the caller's default
	Wait     bool          // rootwait: wait for the device indefinitely
	Delay    time.Duration // rootdelay= seconds before looking
}

// String renders the spec as a root= value.
func (r RootSpec) String() string {
	switch r.Kind {
	case ByPath:
		return r.Value
	case ByDevNum:
		return fmt.Sprintf("%d:%d", r.Major, r.Minor)
	}
	return r.Kind.String() + "=" + r.Value
}

// Errors returned by Root.
var (
	ErrNoRoot      = errors.New("no root= on the kernel command line")
	ErrUnsupported = errors.New("not supported")
)

// Root parses root=, rootfstype=, rootflags=, ro/rw, init=, rootwait and
// rootdelay=. It returns ErrNoRoot when root= is absent.
func (c Cmdline) Root() (RootSpec, error) {
	var spec RootSpec
	v, ok := c.Get("root")
	if !ok {
		return spec, ErrNoRoot
	}
	spec, err := ParseRoot(v)
	if err != nil {
		return spec, err
	}
	spec.FSType, _ = c.Get("rootfstype")
	spec.Flags, _ = c.Get("rootflags")
	spec.Init, _ = c.Get("init")
	spec.Wait = c.Has("rootwait")
	if d, ok := c.Get("rootdelay"); ok {
		if n, err := strconv.Atoi(d); err == nil && n > 0 && n < 1<<20 {
			spec.Delay = time.Duration(n) * time.Second
		}
	}
	for _, p := range c.params {
		if p.HasValue {
			continue
		}
		switch p.Key {
		case "ro":
			spec.ReadOnly = true
		case "rw":
			spec.ReadOnly = false
		}
	}
	return spec, nil
}

// byDir maps the udev /dev/disk/by-* directories to kinds.
var byDir = sync.OnceValue(func() map[string]RootKind {
	return map[string]RootKind{
		"by-label":     ByLabel,
		"by-uuid":      ByUUID,
		"by-partuuid":  ByPartUUID,
		"by-partlabel": ByPartLabel,
	}
})

// ParseRoot parses a root= value alone (the other fields stay zero).
func ParseRoot(v string) (RootSpec, error) {
	var spec RootSpec
	if v == "" {
		return spec, fmt.Errorf("root=: empty value")
	}
	for _, pre := range []struct {
		prefix string
		kind   RootKind
	}{
		{"LABEL=", ByLabel},
		{"UUID=", ByUUID},
		{"PARTUUID=", ByPartUUID},
		{"PARTLABEL=", ByPartLabel},
	} {
		val, ok := strings.CutPrefix(v, pre.prefix)
		if !ok {
			continue
		}
		if val == "" {
			return spec, fmt.Errorf("root=%s: empty %s", v, pre.kind)
		}
		if pre.kind == ByPartUUID {
			if u, off, found := strings.Cut(val, "/"); found {
				return spec, fmt.Errorf("root=%s: %s/%s: %w", v, u, off, ErrUnsupported)
			}
		}
		return RootSpec{Kind: pre.kind, Value: val}, nil
	}
	if rest, ok := strings.CutPrefix(v, "/dev/disk/"); ok {
		dir, name, _ := strings.Cut(rest, "/")
		if kind, known := byDir()[dir]; known && name != "" && !strings.Contains(name, "/") {
			return RootSpec{Kind: kind, Value: unescapeUdev(name)}, nil
		}
		return RootSpec{Kind: ByPath, Value: v}, nil
	}
	if strings.HasPrefix(v, "/") {
		return RootSpec{Kind: ByPath, Value: v}, nil
	}
	if maj, min, ok := parseMajMin(v); ok {
		return RootSpec{Kind: ByDevNum, Value: v, Major: maj, Minor: min}, nil
	}
	if n, err := strconv.ParseUint(v, 16, 32); err == nil {
		// new_decode_dev: major in bits 8-19, minor in bits 0-7 and 20-31.
		maj := int((n & 0xfff00) >> 8)
		min := int((n & 0xff) | ((n >> 12) & 0xfff00))
		return RootSpec{Kind: ByDevNum, Value: v, Major: maj, Minor: min}, nil
	}
	if strings.ContainsAny(v, "=:") {
		return spec, fmt.Errorf("root=%s: unrecognized form", v)
	}
	// A bare device name, as in root=vda1.
	return RootSpec{Kind: ByPath, Value: "/dev/" + v}, nil
}

func parseMajMin(v string) (int, int, bool) {
	a, b, ok := strings.Cut(v, ":")
	if !ok {
		return 0, 0, false
	}
	maj, err1 := strconv.ParseUint(a, 10, 12)
	min, err2 := strconv.ParseUint(b, 10, 20)
	if err1 != nil || err2 != nil {
		return 0, 0, false
	}
	return int(maj), int(min), true
}

// unescapeUdev decodes udev's \xNN escapes in /dev/disk/by-* names.
func unescapeUdev(s string) string {
	if !strings.Contains(s, `\x`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && s[i+1] == 'x' {
			if n, err := strconv.ParseUint(s[i+2:i+4], 16, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// DSArg is a datasource selection as written on the command line or in the
// SMBIOS serial: `ds=nocloud;s=http://x/;i=iid;h=host`.
type DSArg struct {
	Name       string // datasource name as written, e.g. "nocloud"
	SeedFrom   string // s=, seedfrom=
	InstanceID string // i=, instance-id=
	Hostname   string // h=, local-hostname=
	// Raw holds every key=value after the name, keys as written (short
	// forms stay short); a key without '=' maps to "".
	Raw map[string]string
}

// NoCloud reports whether the selection names NoCloud (nocloud or the
// deprecated nocloud-net, any case).
func (d DSArg) NoCloud() bool {
	return strings.EqualFold(d.Name, "nocloud") || strings.EqualFold(d.Name, "nocloud-net")
}

// Network reports whether the seed needs the network, as cloud-init decides
// it: seedfrom is http, https, ftp or ftps, or (without seedfrom) the name is
// nocloud-net.
func (d DSArg) Network() bool {
	if d.SeedFrom == "" {
		return strings.EqualFold(d.Name, "nocloud-net")
	}
	for _, p := range []string{"http://", "https://", "ftp://", "ftps://"} {
		if strings.HasPrefix(d.SeedFrom, p) {
			return true
		}
	}
	return false
}

// dsKeys are the command-line keys that select a datasource; the last
// occurrence of any of them wins.
var dsKeys = []string{"ds", "ci.ds", "ci.datasource"}

// DS returns the datasource selected by ds=, ci.ds= or ci.datasource= (the
// last such parameter wins).
func (c Cmdline) DS() (DSArg, bool) {
	for i := len(c.params) - 1; i >= 0; i-- {
		p := c.params[i]
		for _, k := range dsKeys {
			if p.Key == k && p.HasValue {
				return ParseDSString(p.Value), true
			}
		}
	}
	return DSArg{}, false
}

// ParseDSString parses a datasource selection: `nocloud;s=…;i=…;h=…`, with
// or without a leading `ds=` (or `ci.ds=`, `ci.datasource=`). This is also
// how cloud-init reads a DMI product_serial of the form `ds=nocloud;s=…`.
// Values are split at ';' only; a value may contain '='.
func ParseDSString(v string) DSArg {
	v = strings.TrimSpace(v)
	for _, k := range dsKeys {
		if rest, ok := strings.CutPrefix(v, k+"="); ok {
			v = rest
			break
		}
	}
	parts := strings.Split(v, ";")
	d := DSArg{Name: parts[0]}
	for _, item := range parts[1:] {
		if item == "" {
			continue
		}
		k, val, _ := strings.Cut(item, "=")
		if d.Raw == nil {
			d.Raw = make(map[string]string)
		}
		d.Raw[k] = val
		switch k {
		case "s", "seedfrom":
			d.SeedFrom = val
		case "i", "instance-id":
			d.InstanceID = val
		case "h", "local-hostname":
			d.Hostname = val
		}
	}
	return d
}
