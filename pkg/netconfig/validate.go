package netconfig

// Validation of every value that reaches a rendered file.
//
// Renderers write model strings into line-based formats (ENI, networkd,
// NetworkManager keyfiles, udev rules, resolv.conf) and into shell-sourced
// ones (sysconfig ifcfg files, ENI's post-up commands). A newline in a value
// adds a line; a quote, `$(...)` or a backquote runs a command when the file
// is sourced. cloud-init 26.x checks addresses and gateways and little else
// (a MAC, a driver or a search domain is written as given). cloudroot checks
// every string of the model once, where a parsed document becomes the model
// (the end of parseV1 and parseV2, which every parser and cloud converter
// goes through), and every renderer refuses a model that still holds an
// unsafe value (ErrUnsafeValue), so a hand-built Config cannot slip past.
//
// What is done with a bad value, in the spirit of cloud-init's "Skipping
// invalid command":
//   - a value that says which device is configured (a name, a MAC address, a
//     v2 match, a driver or device id) skips the whole interface with a
//     warning: configuring another device than the one meant is worse than
//     configuring none;
//   - any other value (a nameserver, a search domain, a broadcast address,
//     a bond/bridge parameter, a member or link name) is dropped alone, with
//     a warning.
//
// For v2 the verbatim document the netplan renderer passes through is
// scrubbed the same way before it is interpreted.

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"
	"unicode"

	"github.com/cloudroot/cloudroot/pkg/internal/dnsname"
)

// ErrUnsafeValue: a renderer was given a model value that could add a line
// or run a command in a rendered file.
var ErrUnsafeValue = errors.New("unsafe value in network config")

// shellMeta are the characters that mean something to a shell reading an
// unquoted or double-quoted word, or that a glob expands.
const shellMeta = "\"'`$\\;&|<>(){}*?[]"

// safeText reports whether s has no control characters, no quotes and no
// shell metacharacters (spaces allowed): safe inside any rendered line.
func safeText(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f || (r > 0x7f && !unicode.IsPrint(r)) || strings.ContainsRune(shellMeta, r) {
			return false
		}
	}
	return true
}

// validMAC reports whether s is a hardware address (6, 8 or 20 bytes in
// hex with : or - separators, or dotted quads of hex).
func validMAC(s string) bool {
	_, err := net.ParseMAC(s)
	return err == nil
}

// validDriver reports whether s can be a kernel driver name or a v2 driver
// glob: letters, digits, _ - . : and the glob characters * ? [ ].
func validDriver(s string, glob bool) bool {
	if s == "" || len(s) > 255 {
		return false
	}
	for _, r := range s {
		switch {
		case r < 0x80 && (unicode.IsLetter(r) || unicode.IsDigit(r)):
		case strings.ContainsRune("_-.:", r):
		case glob && strings.ContainsRune("*?[]!", r):
		default:
			return false
		}
	}
	return true
}

// validMatchName reports whether s is a device name or a glob of one.
func validMatchName(s string) bool {
	return ValidName(strings.NewReplacer("*", "x", "?", "x", "[", "x", "]", "x").Replace(s))
}

// ValidDomain reports whether s is a DNS domain name as a resolver search
// list takes it: dot-separated labels of 1 to 63 letters, digits, hyphens
// and underscores, not starting or ending with a hyphen, at most 253
// characters, an optional final dot. Strict (DHCP-sourced names) also
// refuses underscores, as RFC 1123 host names do.
func ValidDomain(s string, strict bool) bool { return dnsname.Valid(s, strict) }

// validNameserver reports whether s is an IP address, with a zone that is
// a valid device name when there is one.
func validNameserver(s string) bool {
	a, err := netip.ParseAddr(s)
	if err != nil {
		return false
	}
	return a.Zone() == "" || ValidName(a.Zone())
}

// validParamKey reports whether a bond/bridge/custom parameter name is safe
// to write as a key: letters, digits, _ - . only.
func validParamKey(k string) bool {
	return k != "" && validDriver(k, false) && !strings.Contains(k, ":")
}

// validParamValue reports whether a parameter value (a scalar or a list of
// scalars) is safe to write.
func validParamValue(v any) bool {
	switch x := v.(type) {
	case nil, bool, int, int64, float64:
		return true
	case string:
		return safeText(x)
	case []any:
		for _, e := range x {
			if _, nested := e.([]any); nested || !validParamValue(e) {
				return false
			}
		}
		return true
	case []string:
		for _, e := range x {
			if !safeText(e) {
				return false
			}
		}
		return true
	}
	// Mappings (bridge path-cost: port → cost) are checked key by key.
	if keys, get, ok := mapKeys(v); ok {
		for _, k := range keys {
			if !ValidName(k) || !validParamValue(get(k)) {
				return false
			}
		}
		return true
	}
	return safeText(scalarString(v))
}

// checker walks a model, reporting (and, when fix is set, removing) every
// unsafe value.
type checker struct {
	fix      bool
	problems []string
}

func (k *checker) bad(format string, args ...any) {
	k.problems = append(k.problems, fmt.Sprintf(format, args...))
}

// sanitize drops the unsafe values of cfg (see the file comment), adding a
// warning for each.
func (c *Config) sanitize() {
	k := &checker{fix: true}
	k.config(c)
	c.Warnings = append(c.Warnings, k.problems...)
	c.Rejected = append(c.Rejected, k.problems...)
}

// checkSafe is what every renderer runs first: it refuses a model holding a
// value sanitize would have dropped.
func checkSafe(c *Config) error {
	k := &checker{}
	k.config(c)
	if len(k.problems) > 0 {
		return fmt.Errorf("%s: %w", strings.Join(k.problems, "; "), ErrUnsafeValue)
	}
	return nil
}

func (k *checker) config(c *Config) {
	kept := c.Interfaces[:0:0]
	for _, i := range c.Interfaces {
		if why := k.identity(i); why != "" {
			k.bad("%s; interface skipped", why)
			if k.fix {
				continue
			}
		}
		k.iface(i)
		kept = append(kept, i)
	}
	if k.fix {
		c.Interfaces = kept
	}
	c.DNS = k.dns("global nameserver", c.DNS)
}

// identity checks the values that select the device an interface
// configures, returning why it is refused.
func (k *checker) identity(i *Interface) string {
	q := func(s string) string { return fmt.Sprintf("%q", s) }
	switch {
	case !ValidName(i.Name):
		return "interface name " + q(i.Name) + " is not a valid device name"
	case i.ConfigID != "" && !ValidName(i.ConfigID):
		return i.Name + ": config id " + q(i.ConfigID) + " is not a valid device name"
	case i.Kind == KindPhysical && i.MAC != "" && !validMAC(i.MAC):
		return i.Name + ": mac_address " + q(i.MAC) + " is not a MAC address"
	case i.Match.MACAddress != "" && !validMAC(i.Match.MACAddress):
		return i.Name + ": match.macaddress " + q(i.Match.MACAddress) + " is not a MAC address"
	case i.Match.Name != "" && !validMatchName(i.Match.Name):
		return i.Name + ": match.name " + q(i.Match.Name) + " is not a device name or glob"
	case i.Match.Driver != "" && !validDriver(i.Match.Driver, true):
		return i.Name + ": match.driver " + q(i.Match.Driver) + " is not a driver name"
	case i.Driver != "" && !validDriver(i.Driver, true):
		return i.Name + ": driver " + q(i.Driver) + " is not a driver name"
	case i.DeviceID != "" && !validDriver(i.DeviceID, false):
		return i.Name + ": device_id " + q(i.DeviceID) + " is not a device id"
	}
	return ""
}

func (k *checker) iface(i *Interface) {
	if i.MAC != "" && !validMAC(i.MAC) {
		k.bad("%s: mac_address %q is not a MAC address; dropped", i.Name, i.MAC)
		if k.fix {
			i.MAC = ""
		}
	}
	for _, ref := range []*string{&i.BondMaster, &i.VLANLink} {
		if *ref != "" && !ValidName(*ref) {
			k.bad("%s: link %q is not a valid device name; dropped", i.Name, *ref)
			if k.fix {
				*ref = ""
			}
		}
	}
	i.BridgePorts = k.list(i.BridgePorts, ValidName, i.Name+": bridge port %q is not a valid device name; dropped")
	for _, pm := range []map[string]any{i.BondParams, i.BridgeParams, i.Params} {
		for _, key := range sortedKeys(pm) {
			if !validParamKey(key) || !validParamValue(pm[key]) {
				k.bad("%s: parameter %q = %q is not safe to write; dropped", i.Name, key, scalarString(pm[key]))
				if k.fix {
					delete(pm, key)
				}
			}
		}
	}
	for _, o := range []*DHCPOverrides{i.DHCP4, i.DHCP6} {
		if o == nil {
			continue
		}
		if o.Hostname != "" && !ValidDomain(o.Hostname, false) {
			k.bad("%s: dhcp overrides hostname %q is not a host name; dropped", i.Name, o.Hostname)
			if k.fix {
				o.Hostname = ""
			}
		}
		if o.UseDomains != "" && !slices.Contains([]string{"true", "false", "route"}, o.UseDomains) {
			k.bad("%s: dhcp overrides use-domains %q is not true, false or route; dropped", i.Name, o.UseDomains)
			if k.fix {
				o.UseDomains = ""
			}
		}
	}
	i.DNS = k.dns(i.Name+": nameserver", i.DNS)
	for n := range i.Subnets {
		s := &i.Subnets[n]
		s.DNS = k.dns(fmt.Sprintf("%s: subnet %d: dns", i.Name, n), s.DNS)
		if s.Broadcast != "" && !validNameserver(s.Broadcast) {
			k.bad("%s: subnet %d: broadcast %q is not an IP address; dropped", i.Name, n, s.Broadcast)
			if k.fix {
				s.Broadcast = ""
			}
		}
		if s.Control != "" && !validDriver(s.Control, false) {
			k.bad("%s: subnet %d: control %q is not a start mode; dropped", i.Name, n, s.Control)
			if k.fix {
				s.Control = ""
			}
		}
	}
}

func (k *checker) dns(where string, d DNS) DNS {
	d.Nameservers = k.list(d.Nameservers, validNameserver, where+" %q is not an IP address; dropped")
	d.Search = k.list(d.Search, func(s string) bool { return ValidDomain(s, false) }, where+" search domain %q is not a domain name; dropped")
	return d
}

// list returns the elements of l that pass ok, reporting the others.
func (k *checker) list(l []string, ok func(string) bool, msg string) []string {
	if !slices.ContainsFunc(l, func(s string) bool { return !ok(s) }) {
		return l
	}
	var out []string
	for _, s := range l {
		if ok(s) {
			out = append(out, s)
			continue
		}
		k.bad(msg, s)
	}
	if !k.fix {
		return l
	}
	return out
}

// del removes key k.
func (o *omap) del(k string) {
	if _, ok := o.m[k]; !ok {
		return
	}
	delete(o.m, k)
	o.keys = slices.DeleteFunc(o.keys, func(s string) bool { return s == k })
}

// netplanMAC is a v2 macaddress: a MAC address or one of netplan's
// keywords.
func netplanMAC(s string) bool {
	return validMAC(s) || s == "permanent" || s == "random" || s == "stable" || s == "stable-ssid"
}

// scrubV2 removes from a v2 document (the mapping under network:) what
// sanitize would drop from the model, so the netplan renderer, which
// passes the document through, never writes it: devices whose name, set-name
// or match is not valid; macaddress, link, member names, nameservers and
// search domains that are not; and anywhere in the document, any key or
// string holding a control character.
func scrubV2(m *omap) []string {
	var warns []string
	bad := func(format string, args ...any) { warns = append(warns, fmt.Sprintf(format, args...)) }
	for _, section := range m.keys {
		devs := asMap(m.m[section])
		if devs == nil {
			continue
		}
		for _, key := range slices.Clone(devs.keys) {
			dev := asMap(devs.m[key])
			if why := v2Identity(key, dev); why != "" {
				bad("%s.%s: %s; device skipped", section, key, why)
				devs.del(key)
				continue
			}
			if dev == nil {
				continue
			}
			if v, ok := dev.get("macaddress"); ok && !netplanMAC(asString(v)) {
				bad("%s.%s: macaddress %q is not a MAC address; dropped", section, key, asString(v))
				dev.del("macaddress")
			}
			if v, ok := dev.get("link"); ok && !ValidName(asString(v)) {
				bad("%s.%s: link %q is not a valid device name; dropped", section, key, asString(v))
				dev.del("link")
			}
			scrubList(dev, "interfaces", ValidName, section+"."+key+": interface %q is not a valid device name; dropped", bad)
			if ns := asMap(mustGet(dev, "nameservers")); ns != nil {
				scrubList(ns, "addresses", validNameserver, section+"."+key+": nameserver %q is not an IP address; dropped", bad)
				scrubList(ns, "search", func(s string) bool { return ValidDomain(s, false) }, section+"."+key+": search domain %q is not a domain name; dropped", bad)
			}
		}
	}
	// Last, so that what selects a device was judged above as a whole (a
	// match left empty by dropping one key would match every device).
	scrubControl(m, "network", bad)
	return warns
}

// v2Identity checks what selects the device of a v2 entry.
func v2Identity(key string, dev *omap) string {
	if !ValidName(key) {
		return "not a valid device name"
	}
	if v, ok := dev.get("set-name"); ok && !ValidName(asString(v)) {
		return fmt.Sprintf("set-name %q is not a valid device name", asString(v))
	}
	match := asMap(mustGet(dev, "match"))
	if match == nil {
		return ""
	}
	if v, ok := match.get("macaddress"); ok && !validMAC(asString(v)) {
		return fmt.Sprintf("match.macaddress %q is not a MAC address", asString(v))
	}
	if v, ok := match.get("name"); ok && !validMatchName(asString(v)) {
		return fmt.Sprintf("match.name %q is not a device name or glob", asString(v))
	}
	if v, ok := match.get("driver"); ok {
		drivers := []any{v}
		if l, isList := v.([]any); isList {
			drivers = l
		}
		for _, d := range drivers {
			if !validDriver(asString(d), true) {
				return fmt.Sprintf("match.driver %q is not a driver name", asString(d))
			}
		}
	}
	return ""
}

// scrubList drops the elements of the list under key that fail ok.
func scrubList(m *omap, key string, ok func(string) bool, msg string, bad func(string, ...any)) {
	v, found := m.get(key)
	if !found {
		return
	}
	l, isList := v.([]any)
	if !isList {
		if s := asString(v); s != "" && !ok(s) {
			bad(msg, s)
			m.del(key)
		}
		return
	}
	var keep []any
	for _, e := range l {
		if s := asString(e); !ok(s) {
			bad(msg, s)
			continue
		}
		keep = append(keep, e)
	}
	if len(keep) != len(l) {
		m.set(key, keep)
	}
}

// hasControl reports a control character (a newline among them).
func hasControl(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f || (r > 0x7f && unicode.IsControl(r)) })
}

// scrubControl removes, anywhere under v, every mapping entry whose key or
// string value holds a control character, and every such list element.
func scrubControl(v any, path string, bad func(string, ...any)) {
	switch x := v.(type) {
	case *omap:
		for _, k := range slices.Clone(x.keys) {
			e := x.m[k]
			if s, isStr := e.(string); hasControl(k) || (isStr && hasControl(s)) {
				bad("%s.%q: holds a control character; dropped", path, k)
				x.del(k)
				continue
			}
			if l, isList := e.([]any); isList {
				keep := slices.DeleteFunc(slices.Clone(l), func(el any) bool {
					s, isStr := el.(string)
					return isStr && hasControl(s)
				})
				if len(keep) != len(l) {
					bad("%s.%q: an element holds a control character; dropped", path, k)
					x.set(k, keep)
					e = keep
				}
			}
			scrubControl(e, path+"."+k, bad)
		}
	case []any:
		for i, e := range x {
			scrubControl(e, fmt.Sprintf("%s[%d]", path, i), bad)
		}
	}
}
