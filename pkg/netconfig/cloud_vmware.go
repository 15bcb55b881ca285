package netconfig

// VMware guest customization (IMC) cust.cfg converted to network config v1
// as cloud-init's helpers/vmware/imc (config_file.py, config.py, nic.py,
// config_nic.py NicConfigurator and guestcust_util
// get_network_data_from_vmware_cust_cfg) does.
//
// cust.cfg is a Python configparser INI file; ParseVMwareCustCfg reads it
// into the "SECTION|key" → value table of cloud-init's ConfigFile.
// ConvertVMware then:
//   - configures the NICs listed in [NIC-CONFIG] NICS= (comma separated
//     section names), each from its section: MACADDR, ONBOOT (yes/true →
//     control auto), PRIMARY, BOOTPROTO, IPv4_MODE, IPADDR, NETMASK,
//     GATEWAY (comma separated), IPv6ADDR|n and IPv6NETMASK|n;
//   - BOOTPROTO other than static (or IPv4_MODE=disabled, which cloud-init
//     turns into "manual" and therefore, like any non-static value, DHCP)
//     is a dhcp subnet; static is a static subnet with IPADDR/NETMASK; the
//     primary NIC (PRIMARY=yes, at most one) gets its first gateway as the
//     subnet gateway; when no NIC is primary every gateway becomes a route
//     to the gateway's subnet with metric 10000;
//   - every IPv6ADDR|n is a static6 subnet with IPv6NETMASK|n as prefix;
//   - [DNS] NAMESERVER|n and SUFFIX|n (n = 1..count) become a global
//     nameserver entry.
// With nil Links the interfaces are named after their NIC sections (NIC1,
// ...), as cloud-init's net-convert (use_system_devices=False) does;
// otherwise a NIC's MAC must be on the machine and gives its name.

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// VMwareCustCfg is a parsed cust.cfg: "SECTION|key" → value, as in
// cloud-init's ConfigFile (keys and values stripped, DEFAULT entries copied
// into every section).
type VMwareCustCfg map[string]string

// pyIsSpace is Python's str.isspace for one rune.
func pyIsSpace(r rune) bool {
	switch r {
	case ' ', '\t', '\n', '\v', '\f', '\r', 0x1c, 0x1d, 0x1e, 0x1f, 0x85, 0xa0, 0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000:
		return true
	}
	return r >= 0x2000 && r <= 0x200a
}

func pyStrip(s string) string { return strings.TrimFunc(s, pyIsSpace) }

// pyLines splits like Python's universal newlines (\n, \r, \r\n).
func pyLines(data string) []string {
	var lines []string
	for len(data) > 0 {
		i := strings.IndexAny(data, "\r\n")
		if i < 0 {
			lines = append(lines, data)
			break
		}
		lines = append(lines, data[:i])
		if data[i] == '\r' && i+1 < len(data) && data[i+1] == '\n' {
			i++
		}
		data = data[i+1:]
	}
	return lines
}

// iniSection is one section of a parsed INI file, in order.
type iniSection struct {
	name   string
	keys   []string
	values map[string][]string
}

// ParseVMwareCustCfg parses cust.cfg as Python's configparser.ConfigParser
// (optionxform=str, strict, default interpolation) reads it and flattens it
// as cloud-init's ConfigFile does.
func ParseVMwareCustCfg(data []byte) (VMwareCustCfg, error) {
	defaults := &iniSection{name: "DEFAULT", values: map[string][]string{}}
	var sections []*iniSection
	seen := map[string]bool{}
	var cur *iniSection
	optname := ""
	indentLevel := 0
	var errs []string
	for lineno, line := range pyLines(string(data)) {
		stripped := pyStrip(line)
		isComment := strings.HasPrefix(stripped, "#") || strings.HasPrefix(stripped, ";")
		value := stripped
		if isComment {
			value = ""
		}
		if value == "" {
			// empty_lines_in_values: a blank (not comment) line is part of
			// the current value.
			if !isComment && cur != nil && optname != "" {
				cur.values[optname] = append(cur.values[optname], "")
			}
			continue
		}
		indent := len(line) - len(strings.TrimLeftFunc(line, pyIsSpace))
		if cur != nil && optname != "" && indent > indentLevel {
			cur.values[optname] = append(cur.values[optname], value)
			continue
		}
		indentLevel = indent
		if strings.HasPrefix(value, "[") && strings.Contains(value[1:], "]") && strings.LastIndex(value, "]") > 1 {
			name := value[1:strings.LastIndex(value, "]")]
			if name == "DEFAULT" {
				cur = defaults
			} else {
				if seen[name] {
					return nil, fmt.Errorf("vmware: line %d: section %q already exists", lineno+1, name)
				}
				seen[name] = true
				cur = &iniSection{name: name, values: map[string][]string{}}
				sections = append(sections, cur)
			}
			optname = ""
			continue
		}
		if cur == nil {
			return nil, fmt.Errorf("vmware: line %d: file contains no section headers: %q", lineno+1, line)
		}
		i := strings.IndexAny(value, "=:")
		name := ""
		if i >= 0 {
			name = strings.TrimRightFunc(value[:i], pyIsSpace)
		}
		if i < 0 || name == "" {
			errs = append(errs, fmt.Sprintf("line %d: %q", lineno+1, line))
			optname = ""
			continue
		}
		if _, dup := cur.values[name]; dup {
			return nil, fmt.Errorf("vmware: line %d: option %q in section %q already exists", lineno+1, name, cur.name)
		}
		cur.keys = append(cur.keys, name)
		cur.values[name] = []string{pyStrip(value[i+1:])}
		optname = name
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("vmware: cust.cfg contains parsing errors: %s", strings.Join(errs, ", "))
	}
	joined := func(s *iniSection) map[string]string {
		out := map[string]string{}
		for _, src := range []*iniSection{defaults, s} {
			for k, v := range src.values {
				out[k] = strings.TrimRightFunc(strings.Join(v, "\n"), pyIsSpace)
			}
		}
		return out
	}
	cfg := VMwareCustCfg{}
	for _, s := range sections {
		raw := joined(s)
		for k, v := range raw {
			iv, err := iniInterpolate(raw, s.name, k, v, 1)
			if err != nil {
				return nil, err
			}
			cfg[s.name+"|"+pyStrip(k)] = pyStrip(iv)
		}
	}
	return cfg, nil
}

// iniInterpolate is configparser's BasicInterpolation: %% is %, %(name)s is
// the value of option name in the same section (or DEFAULT).
func iniInterpolate(sect map[string]string, sectName, opt, v string, depth int) (string, error) {
	if depth > 10 {
		return "", fmt.Errorf("vmware: [%s] %s: interpolation too deeply recursive", sectName, opt)
	}
	if !strings.Contains(v, "%") {
		return v, nil
	}
	var b strings.Builder
	for {
		i := strings.IndexByte(v, '%')
		if i < 0 {
			b.WriteString(v)
			return b.String(), nil
		}
		b.WriteString(v[:i])
		v = v[i:]
		switch {
		case strings.HasPrefix(v, "%%"):
			b.WriteByte('%')
			v = v[2:]
		case strings.HasPrefix(v, "%("):
			end := strings.Index(v, ")s")
			if end < 0 {
				return "", fmt.Errorf("vmware: [%s] %s: bad interpolation variable reference %q", sectName, opt, v)
			}
			ref := v[2:end]
			rv, ok := sect[ref]
			if !ok {
				return "", fmt.Errorf("vmware: [%s] %s: bad interpolation reference %q", sectName, opt, ref)
			}
			if strings.Contains(rv, "%") {
				var err error
				if rv, err = iniInterpolate(sect, sectName, ref, rv, depth+1); err != nil {
					return "", err
				}
			}
			b.WriteString(rv)
			v = v[end+2:]
		default:
			return "", fmt.Errorf("vmware: [%s] %s: '%%' must be followed by '%%' or '(', found: %q", sectName, opt, v)
		}
	}
}

// countPrefix is ConfigFile.get_count_with_prefix.
func (c VMwareCustCfg) countPrefix(prefix string) int {
	n := 0
	for k := range c {
		if strings.HasPrefix(k, prefix) {
			n++
		}
	}
	return n
}

// indexed returns prefix1..prefixN for the N keys starting with prefix.
func (c VMwareCustCfg) indexed(prefix string) ([]any, error) {
	n := c.countPrefix(prefix)
	out := make([]any, 0, n)
	for i := 1; i <= n; i++ {
		v, ok := c[prefix+strconv.Itoa(i)]
		if !ok {
			return nil, fmt.Errorf("vmware: %s%d is missing (%d keys start with %s)", prefix, i, n, prefix)
		}
		out = append(out, v)
	}
	return out, nil
}

func vmwareYes(v string) bool {
	v = strings.ToLower(v)
	return v == "yes" || v == "true"
}

type vmwareNIC struct {
	sect, mac string
	primary   bool
}

// ConvertVMware converts a parsed cust.cfg to a network config v1.
func ConvertVMware(cust VMwareCustCfg, links Links) (*Config, error) {
	list, ok := cust["NIC-CONFIG|NICS"]
	if !ok {
		return nil, fmt.Errorf("vmware: cust.cfg has no [NIC-CONFIG] NICS: %w", ErrNoConfig)
	}
	var nics []vmwareNIC
	var warnings []string
	mac2name := map[string]string{}
	primaries := 0
	for _, sect := range strings.Split(list, ",") {
		if t := pyStrip(sect); t != sect {
			warnings = append(warnings, fmt.Sprintf("vmware: NICS entry %q has surrounding spaces; using %q", sect, t))
			sect = t
		}
		mac, ok := cust[sect+"|MACADDR"]
		if !ok {
			return nil, fmt.Errorf("vmware: NIC %s has no MACADDR", sect)
		}
		n := vmwareNIC{sect: sect, mac: strings.ToLower(mac), primary: vmwareYes(cust[sect+"|PRIMARY"])}
		if n.primary {
			primaries++
		}
		mac2name[n.mac] = sect
		nics = append(nics, n)
	}
	if primaries > 1 {
		return nil, fmt.Errorf("vmware: there can only be one primary nic")
	}
	var config []any
	for _, n := range nics {
		get := func(k string) string { return cust[n.sect+"|"+k] }
		name := mac2name[n.mac]
		if links != nil {
			var ok bool
			if name, ok = nameByMAC(links, n.mac); !ok {
				return nil, fmt.Errorf("vmware: no known device has MACADDR: %s", get("MACADDR"))
			}
		}
		subnet := newOmap()
		if vmwareYes(get("ONBOOT")) {
			subnet.set("control", "auto")
		}
		bootproto := strings.ToLower(get("BOOTPROTO"))
		if strings.ToLower(get("IPv4_MODE")) == "disabled" {
			bootproto = "manual"
		}
		if bootproto != "static" {
			subnet.set("type", "dhcp")
		} else {
			subnet.set("type", "static")
			ip, mask := get("IPADDR"), get("NETMASK")
			if ip != "" {
				subnet.set("address", ip)
			}
			if mask != "" {
				subnet.set("netmask", mask)
			}
			var gws []string
			if g := get("GATEWAY"); g != "" {
				for _, x := range strings.Split(g, ",") {
					gws = append(gws, pyStrip(x))
				}
			}
			if n.primary && len(gws) > 0 {
				subnet.set("gateway", gws[0])
			} else if primaries == 0 && len(gws) > 0 {
				routes, err := vmwareGatewayRoutes(gws, mask)
				if err != nil {
					return nil, fmt.Errorf("vmware: NIC %s: %w", n.sect, err)
				}
				subnet.set("routes", routes)
			}
		}
		subnets := []any{subnet}
		cnt := cust.countPrefix(n.sect + "|IPv6ADDR|")
		for i := 1; i <= cnt; i++ {
			ip, ok1 := cust[fmt.Sprintf("%s|IPv6ADDR|%d", n.sect, i)]
			mask, ok2 := cust[fmt.Sprintf("%s|IPv6NETMASK|%d", n.sect, i)]
			if !ok1 || !ok2 {
				return nil, fmt.Errorf("vmware: NIC %s: IPv6ADDR|%d or IPv6NETMASK|%d is missing", n.sect, i, i)
			}
			subnets = append(subnets, omapOf("type", "static6", "address", ip, "netmask", mask))
		}
		config = append(config, omapOf("type", "physical", "name", name, "mac_address", n.mac, "subnets", subnets))
	}
	ns, err := cust.indexed("DNS|NAMESERVER|")
	if err != nil {
		return nil, err
	}
	search, err := cust.indexed("DNS|SUFFIX|")
	if err != nil {
		return nil, err
	}
	if len(ns) > 0 || len(search) > 0 {
		config = append(config, omapOf("type", "nameserver", "address", ns, "search", search))
	}
	return finishConverted(omapOf("version", 1, "config", config), links, warnings)
}

// vmwareGatewayRoutes is NicConfigurator.gen_ipv4_route: a route to each
// gateway's subnet (under netmask) via the gateway, metric 10000.
func vmwareGatewayRoutes(gws []string, netmask string) ([]any, error) {
	m, err := netip.ParseAddr(netmask)
	if err != nil || !m.Is4() {
		return nil, fmt.Errorf("netmask %q is not an IPv4 netmask", netmask)
	}
	mb := m.As4()
	bits := 0
	for _, b := range mb {
		for i := 7; i >= 0; i-- {
			if b&(1<<i) == 0 {
				goto done
			}
			bits++
		}
	}
done:
	if m != maskOf(bits) {
		return nil, fmt.Errorf("netmask %q is not contiguous", netmask)
	}
	var routes []any
	for _, gw := range gws {
		g, err := netip.ParseAddr(gw)
		if err != nil || !g.Is4() {
			return nil, fmt.Errorf("gateway %q is not an IPv4 address", gw)
		}
		gb := g.As4()
		for i := range gb {
			gb[i] &= mb[i]
		}
		routes = append(routes, omapOf("destination", fmt.Sprintf("%s/%d", netip.AddrFrom4(gb), bits),
			"type", "route", "gateway", gw, "metric", 10000))
	}
	return routes, nil
}

// maskOf is the IPv4 netmask of a prefix length.
func maskOf(bits int) netip.Addr {
	var b [4]byte
	for i := 0; i < bits; i++ {
		b[i/8] |= 1 << (7 - i%8)
	}
	return netip.AddrFrom4(b)
}

// ConvertVMwareMap is ConvertVMware for the customization's network
// sections as a datasource hands them on (datasource.NetworkKeyVMware:
// "SECTION|key" → string value).
func ConvertVMwareMap(v map[string]any, links Links) (*Config, error) {
	cust := VMwareCustCfg{}
	for k, e := range v {
		s, ok := e.(string)
		if !ok {
			return nil, fmt.Errorf("vmware customization: %s is a %T, not a string", k, e)
		}
		cust[k] = s
	}
	return ConvertVMware(cust, links)
}
