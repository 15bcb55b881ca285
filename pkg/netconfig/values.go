package netconfig

// Loose value conversions for decoded YAML/JSON, with cloud-init's
// tolerance: "yes"/"on"/"1" are true, numbers may arrive as strings.

import (
	"fmt"
	"math"
	"net/netip"
	"sort"
	"strconv"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/internal/pyval"
)

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }

func sortStrings(s []string) { sort.Strings(s) }

// isTrue is cloud-init's util.is_true (pyval.IsTrue).
func isTrue(v any) bool { return pyval.IsTrue(v) }

// asBool converts v when it is a recognisable boolean.
func asBool(v any) (bool, bool) {
	switch x := v.(type) {
	case bool:
		return x, true
	case int:
		return x != 0, true
	case float64:
		return x != 0, true
	case string:
		switch strings.ToLower(strings.TrimSpace(x)) {
		case "true", "1", "on", "yes", "y":
			return true, true
		case "false", "0", "off", "no", "n":
			return false, true
		}
	}
	return false, false
}

// asInt converts v when it is an integer or a string holding one.
func asInt(v any) (int, bool) {
	switch x := v.(type) {
	case int:
		return x, true
	case int64:
		return int(x), true
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return int(x), true
		}
	case string:
		n, err := strconv.Atoi(strings.TrimSpace(x))
		if err == nil {
			return n, true
		}
	}
	return 0, false
}

// asString renders a scalar; collections give "".
func asString(v any) string {
	switch v.(type) {
	case *omap, []any, map[string]any:
		return ""
	}
	if f, ok := v.(float64); ok && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
		return strconv.Itoa(int(f))
	}
	return scalarString(v)
}

// asList returns v as a list of strings: a list as is, a string split on
// whitespace (cloud-init's listify).
func asList(v any) []string {
	switch x := v.(type) {
	case nil:
		return nil
	case []any:
		out := make([]string, 0, len(x))
		for _, e := range x {
			if s := asString(e); s != "" {
				out = append(out, s)
			}
		}
		return out
	case []string:
		return append([]string(nil), x...)
	case string:
		return strings.Fields(x)
	}
	if s := asString(v); s != "" {
		return []string{s}
	}
	return nil
}

// asMap returns v as an ordered mapping, or nil.
func asMap(v any) *omap {
	if m, ok := v.(*omap); ok {
		return m
	}
	return nil
}

// renderValue is a value as renderers write it: a scalar as asString
// gives it (an integral float without its ".0"), a list space-joined. It is
// not Python's str() (that is pyval.Str).
func renderValue(v any) string {
	switch x := v.(type) {
	case []any, []string:
		return strings.Join(asList(x), " ")
	}
	return asString(v)
}

// --- addresses ---

// parseAddrPrefix is cloud-init's _normalize_net_keys for one address: it
// accepts "a.b.c.d/nn", "a.b.c.d/255.255.255.0", "v6/nn", "v6/ffff:ffff::"
// and a bare address with an optional netmask or prefix.
func parseAddrPrefix(addr, netmask string, prefix any) (netip.Prefix, error) {
	addr = strings.TrimSpace(addr)
	if addr == "" {
		return netip.Prefix{}, fmt.Errorf("no address")
	}
	host, maybe, hasSlash := strings.Cut(addr, "/")
	a, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("address %q is not a valid ip network", addr)
	}
	a = a.WithZone("")
	if a.Is4In6() {
		a = a.Unmap()
	}
	var bits int
	switch {
	case hasSlash:
		bits, err = maskBits(a, maybe)
		if err != nil {
			return netip.Prefix{}, fmt.Errorf("address %q: %w", addr, err)
		}
	case prefix != nil && asString(prefix) != "":
		n, ok := asInt(prefix)
		if !ok {
			return netip.Prefix{}, fmt.Errorf("address %q: prefix %q is not a number", addr, asString(prefix))
		}
		bits = n
	case netmask != "":
		bits, err = maskBits(a, netmask)
		if err != nil {
			return netip.Prefix{}, fmt.Errorf("address %q: %w", addr, err)
		}
	case a.Is6():
		bits = defaultIPv6PrefixBits
	default:
		bits = defaultIPv4PrefixBits
	}
	if bits < 0 || bits > a.BitLen() {
		return netip.Prefix{}, fmt.Errorf("address %q: prefix length %d out of range", addr, bits)
	}
	return netip.PrefixFrom(a, bits), nil
}

// maskBits reads a prefix length or a netmask written as an address.
func maskBits(a netip.Addr, s string) (int, error) {
	s = strings.TrimSpace(s)
	if n, err := strconv.Atoi(s); err == nil {
		return n, nil
	}
	m, err := netip.ParseAddr(s)
	if err != nil {
		return 0, fmt.Errorf("netmask %q is not valid", s)
	}
	if m.Is4() != a.Is4() && !(m.Is4() && a.Is4In6()) {
		return 0, fmt.Errorf("netmask %q does not match the address family", s)
	}
	b := m.AsSlice()
	bits, seenZero := 0, false
	for _, x := range b {
		for i := 7; i >= 0; i-- {
			if x&(1<<i) != 0 {
				if seenZero {
					return 0, fmt.Errorf("netmask %q is not contiguous", s)
				}
				bits++
			} else {
				seenZero = true
			}
		}
	}
	return bits, nil
}

// ipv4Mask renders a prefix length as a dotted netmask.
func ipv4Mask(bits int) string {
	if bits < 0 || bits > 32 {
		return ""
	}
	var m uint32
	if bits > 0 {
		m = ^uint32(0) << (32 - bits)
	}
	return fmt.Sprintf("%d.%d.%d.%d", m>>24, m>>16&0xff, m>>8&0xff, m&0xff)
}

func parseAddr(s string) (netip.Addr, error) {
	a, err := netip.ParseAddr(strings.TrimSpace(s))
	if err != nil {
		return netip.Addr{}, fmt.Errorf("%q is not an IP address", s)
	}
	return a.WithZone(""), nil
}

// addrCIDR renders an address with its prefix length ("10.0.0.2/24").
func addrCIDR(p netip.Prefix) string { return p.String() }

// netString renders a route destination's network part (the address as
// written, not masked, as cloud-init does).
func netString(p netip.Prefix) string { return p.Addr().String() }

// --- natural sort ---

// naturalLess orders names as cloud-init's natural_sort_key: digit runs
// compare as numbers, the rest case-insensitively.
func naturalLess(a, b string) bool {
	ca, cb := natChunks(a), natChunks(b)
	for i := 0; i < len(ca) && i < len(cb); i++ {
		x, y := ca[i], cb[i]
		xd, yd := isDigits(x), isDigits(y)
		switch {
		case xd && yd:
			nx, _ := strconv.ParseUint(trimZeros(x), 10, 64)
			ny, _ := strconv.ParseUint(trimZeros(y), 10, 64)
			if len(trimZeros(x)) > 19 || len(trimZeros(y)) > 19 {
				if len(trimZeros(x)) != len(trimZeros(y)) {
					return len(trimZeros(x)) < len(trimZeros(y))
				}
				if trimZeros(x) != trimZeros(y) {
					return trimZeros(x) < trimZeros(y)
				}
				continue
			}
			if nx != ny {
				return nx < ny
			}
		case xd != yd:
			// Python would refuse to compare int with str; keep a total
			// order: numbers first.
			return xd
		default:
			lx, ly := strings.ToLower(x), strings.ToLower(y)
			if lx != ly {
				return lx < ly
			}
		}
	}
	if len(ca) != len(cb) {
		return len(ca) < len(cb)
	}
	return a < b
}

func trimZeros(s string) string {
	t := strings.TrimLeft(s, "0")
	if t == "" {
		return "0"
	}
	return t
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// natChunks splits like re.split("([0-9]+)", s): text and digit runs
// alternate, starting (possibly empty) with text.
func natChunks(s string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || (i > start && isDigitByte(s[i]) != isDigitByte(s[i-1])) {
			out = append(out, s[start:i])
			start = i
		}
	}
	if len(out) > 0 && isDigits(out[0]) {
		out = append([]string{""}, out...)
	}
	return out
}

func isDigitByte(c byte) bool { return c >= '0' && c <= '9' }
