package netconfig

// Network config version 1 (`version: 1`, `config: [...]`), interpreted as
// cloud-init's NetworkStateInterpreter does: commands apply in order, a
// command missing required keys is skipped with a warning, bond members and
// bridge ports that were never declared get a placeholder device.

import (
	"fmt"
	"strings"
	"sync"
	"unicode"
)

// bondV1ToV2 maps v1 bond params (bond-x or bond_x) to v2 names.
var bondV1ToV2 = sync.OnceValue(func() map[string]string {
	return map[string]string{
		"bond-ad-select":             "ad-select",
		"bond-arp-interval":          "arp-interval",
		"bond-arp-ip-target":         "arp-ip-target",
		"bond-arp-validate":          "arp-validate",
		"bond-downdelay":             "down-delay",
		"bond-fail-over-mac":         "fail-over-mac-policy",
		"bond-lacp-rate":             "lacp-rate",
		"bond-miimon":                "mii-monitor-interval",
		"bond-min-links":             "min-links",
		"bond-mode":                  "mode",
		"bond-num-grat-arp":          "gratuitous-arp",
		"bond-primary":               "primary",
		"bond-primary-reselect":      "primary-reselect-policy",
		"bond-updelay":               "up-delay",
		"bond-xmit-hash-policy":      "transmit-hash-policy",
		"bond-all-slaves-active":     "all-slaves-active",
		"bond-packets-per-slave":     "packets-per-slave",
		"bond-resend-igmp":           "resend-igmp",
		"bond-learn-packet-interval": "learn-packet-interval",
	}
})

// bridgeV1ToV2 maps v1 bridge params to v2 names; "" has no v2 name.
var bridgeV1ToV2 = sync.OnceValue(func() map[string]string {
	return map[string]string{
		"bridge_ageing":     "ageing-time",
		"bridge_bridgeprio": "priority",
		"bridge_fd":         "forward-delay",
		"bridge_gcint":      "",
		"bridge_hello":      "hello-time",
		"bridge_maxage":     "max-age",
		"bridge_maxwait":    "",
		"bridge_pathcost":   "path-cost",
		"bridge_portprio":   "port-priority",
		"bridge_stp":        "stp",
		"bridge_waitport":   "",
	}
})

func invert(m map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		if v != "" {
			if old, ok := out[v]; !ok || k < old {
				out[v] = k
			}
		}
	}
	return out
}

var (
	bondV2ToV1   = sync.OnceValue(func() map[string]string { return invert(bondV1ToV2()) })
	bridgeV2ToV1 = sync.OnceValue(func() map[string]string { return invert(bridgeV1ToV2()) })
)

// v1Parser holds the state of one v1 interpretation.
type v1Parser struct {
	cfg   *Config
	links Links
	ifDNS []ifaceDNS
}

type ifaceDNS struct {
	name string
	dns  DNS
}

// parseV1 interprets a v1 document (the mapping holding version and config).
func parseV1(m *omap, links Links) (*Config, error) {
	p := &v1Parser{cfg: &Config{Version: 1}, links: links}
	raw, _ := m.get("config")
	list, ok := raw.([]any)
	if !ok {
		if raw == nil {
			return nil, fmt.Errorf("v1 network config without config list: %w", ErrNoConfig)
		}
		return nil, fmt.Errorf("v1 network config: config is a %T, not a list", raw)
	}
	for i, item := range list {
		cmd := asMap(item)
		if cmd == nil {
			p.cfg.warnf("v1 config[%d]: not a mapping; skipped", i)
			continue
		}
		p.command(i, cmd)
	}
	for _, d := range p.ifDNS {
		iface := p.cfg.Interface(d.name)
		if iface == nil {
			p.cfg.warnf("nameserver specified for interface %s, but interface %s does not exist; skipped", d.name, d.name)
			continue
		}
		iface.DNS = d.dns
	}
	p.cfg.sanitize()
	return p.cfg, nil
}

func (p *v1Parser) command(i int, cmd *omap) {
	t := asString(mustGet(cmd, "type"))
	require := func(keys ...string) bool {
		var missing []string
		for _, k := range keys {
			if !cmd.has(k) {
				missing = append(missing, k)
			}
		}
		if len(missing) > 0 {
			p.cfg.warnf("v1 config[%d] (%s): missing required keys %s; skipped", i, t, strings.Join(missing, ", "))
			return false
		}
		return true
	}
	switch t {
	case "physical", "loopback", "infiniband":
		p.nameByMAC(cmd)
		if require("name") {
			p.physical(cmd, Kind(t))
		}
	case "bond":
		if require("name", "bond_interfaces", "params") {
			p.bond(cmd)
		}
	case "bridge":
		if require("name", "bridge_interfaces") {
			p.bridge(cmd)
		}
	case "vlan":
		if require("name", "vlan_id", "vlan_link") {
			p.vlan(cmd)
		}
	case "nameserver":
		if require("address") {
			p.nameserver(cmd)
		}
	case "route":
		if !cmd.has("destination") && !cmd.has("network") {
			p.cfg.warnf("v1 config[%d] (route): missing required keys destination; skipped", i)
			return
		}
		r, err := p.route(cmd)
		if err != nil {
			p.cfg.warnf("v1 config[%d] (route): %v; skipped", i, err)
			return
		}
		p.cfg.Routes = append(p.cfg.Routes, r)
	case "":
		p.cfg.warnf("v1 config[%d]: no type; skipped", i)
	default:
		p.cfg.warnf("v1 config[%d]: no handler for type %q; skipped", i, t)
	}
}

func mustGet(m *omap, k string) any { v, _ := m.get(k); return v }

// ensure returns the interface called name, creating it (appended, in
// creation order) when missing. An invalid name gets a detached interface
// that is never rendered, and a warning.
func (p *v1Parser) ensure(name string, kind Kind) *Interface {
	if i := p.cfg.Interface(name); i != nil {
		return i
	}
	i := &Interface{Name: name, Kind: kind}
	if !ValidName(name) {
		p.cfg.warnf("interface name %q is not valid; skipped", name)
		return i
	}
	p.cfg.Interfaces = append(p.cfg.Interfaces, i)
	return i
}

// ValidName reports whether name can be a network device name and a file
// name component: not empty, not . or .., no slash, NUL or white space, at
// most 255 bytes (the kernel's 15-byte limit is left to the kernel: v2
// device ids may be longer than the name they end up with), and no quote
// or shell metacharacter (names reach sysconfig files, which are sourced by
// a shell, and ENI's post-up commands).
func ValidName(name string) bool {
	if name == "" || name == "." || name == ".." || len(name) > 255 {
		return false
	}
	for _, r := range name {
		if r == '/' || r == 0 || unicode.IsSpace(r) || !unicode.IsPrint(r) || strings.ContainsRune(shellMeta, r) {
			return false
		}
	}
	return true
}

// nameByMAC names an entry that has a mac_address but no name (or a null
// one) after the machine's NIC with that MAC: Hetzner's private networks
// come so, cloud-init naming them with get_interface_name_from_mac. A MAC
// no NIC has leaves the entry unnamed, and skipped.
func (p *v1Parser) nameByMAC(cmd *omap) {
	if v, ok := cmd.get("name"); ok && v != nil {
		return
	}
	cmd.del("name")
	mac := asString(mustGet(cmd, "mac_address"))
	if mac == "" || p.links == nil {
		return
	}
	if name, ok := p.links.NameByMAC(mac); ok {
		cmd.set("name", name)
	}
}

// physical is cloud-init's handle_physical: it (re)sets the device-level
// keys of the interface and keeps what other commands attached to it.
func (p *v1Parser) physical(cmd *omap, kind Kind) *Interface {
	name := asString(mustGet(cmd, "name"))
	iface := p.ensure(name, kind)
	iface.Kind = kind
	iface.MAC = asString(mustGet(cmd, "mac_address"))
	iface.Rename = kind == KindPhysical && iface.MAC != ""
	iface.MTU = 0
	if v, ok := cmd.get("mtu"); ok && v != nil {
		if n, ok := asInt(v); ok {
			iface.MTU = n
		} else {
			p.cfg.warnf("%s: mtu %q is not a number; ignored", name, asString(v))
		}
	}
	iface.AcceptRA = nil
	if v, ok := cmd.get("accept-ra"); ok && v != nil {
		iface.AcceptRA = boolPtr(isTrue(v))
	}
	iface.WakeOnLAN = false
	if v, ok := cmd.get("wakeonlan"); ok && v != nil {
		iface.WakeOnLAN = isTrue(v)
	}
	iface.Optional = nil
	if v, ok := cmd.get("optional"); ok && v != nil {
		iface.Optional = boolPtr(isTrue(v))
	}
	if params := asMap(mustGet(cmd, "params")); params != nil && kind != KindBond {
		for _, k := range params.keys {
			v := params.m[k]
			switch k {
			case "driver":
				iface.Driver = asString(v)
			case "device_id":
				iface.DeviceID = asString(v)
			default:
				if iface.Params == nil {
					iface.Params = map[string]any{}
				}
				iface.Params[k] = v
			}
		}
	}
	iface.Subnets = p.subnets(name, mustGet(cmd, "subnets"))
	return iface
}

func (p *v1Parser) subnets(ifname string, raw any) []Subnet {
	list, _ := raw.([]any)
	var out []Subnet
	for i, item := range list {
		sm := asMap(item)
		if sm == nil {
			p.cfg.warnf("%s: subnet %d is not a mapping; skipped", ifname, i)
			continue
		}
		s, err := p.subnet(sm)
		if err != nil {
			p.cfg.warnf("%s: subnet %d: %v; skipped", ifname, i, err)
			continue
		}
		out = append(out, s)
	}
	return out
}

func (p *v1Parser) subnet(sm *omap) (Subnet, error) {
	var s Subnet
	t := asString(mustGet(sm, "type"))
	switch SubnetType(t) {
	case SubnetDHCP4, SubnetDHCP, SubnetDHCP6, SubnetStatic, SubnetStatic6, SubnetSLAAC,
		SubnetDHCP6Stateful, SubnetDHCP6Stateless, SubnetManual, SubnetLoopback:
	case "":
		return s, fmt.Errorf("no type")
	default:
		return s, fmt.Errorf("unknown subnet type %q", t)
	}
	s.Type = SubnetType(t)
	s.Control = asString(mustGet(sm, "control"))
	if s.IsStatic() {
		addr := asString(mustGet(sm, "address"))
		if addr == "" {
			addr = asString(mustGet(sm, "ip_address"))
		}
		pfx, err := parseAddrPrefix(addr, asString(mustGet(sm, "netmask")), mustGet(sm, "prefix"))
		if err != nil {
			return s, err
		}
		s.Address = pfx
	}
	if g := asString(mustGet(sm, "gateway")); g != "" {
		a, err := parseAddr(g)
		if err != nil {
			return s, fmt.Errorf("gateway: %w", err)
		}
		s.Gateway = a
	}
	s.Broadcast = asString(mustGet(sm, "broadcast"))
	s.DNS.Nameservers = asList(mustGet(sm, "dns_nameservers"))
	s.DNS.Search = asList(mustGet(sm, "dns_search"))
	if v, ok := sm.get("metric"); ok && v != nil && asString(v) != "" {
		n, ok := asInt(v)
		if !ok {
			return s, fmt.Errorf("metric %q is not an integer", asString(v))
		}
		s.Metric = intPtr(n)
	}
	if v, ok := sm.get("mtu"); ok && v != nil {
		if n, ok := asInt(v); ok && n != 0 {
			s.MTU = n
		}
	}
	s.IPv4 = isTrue(mustGet(sm, "ipv4"))
	s.IPv6 = isTrue(mustGet(sm, "ipv6"))
	routes, _ := mustGet(sm, "routes").([]any)
	for i, r := range routes {
		rm := asMap(r)
		if rm == nil {
			p.cfg.warnf("route %d is not a mapping; skipped", i)
			continue
		}
		rt, err := p.route(rm)
		if err != nil {
			p.cfg.warnf("route %d: %v; skipped", i, err)
			continue
		}
		s.Routes = append(s.Routes, rt)
	}
	return s, nil
}

// route is cloud-init's _normalize_route: network or destination with a
// prefix, netmask or /len (default /24 or /64), gateway, metric. Also v2
// spellings (to, via, on-link, table) for v2 routes.
func (p *v1Parser) route(rm *omap) (Route, error) {
	var r Route
	dest := ""
	for _, k := range []string{"network", "destination", "to"} {
		if s := asString(mustGet(rm, k)); s != "" {
			dest = s
			break
		}
	}
	gw := asString(mustGet(rm, "gateway"))
	if gw == "" {
		gw = asString(mustGet(rm, "via"))
	}
	if gw != "" {
		a, err := parseAddr(gw)
		if err != nil {
			return r, fmt.Errorf("gateway: %w", err)
		}
		r.Via = a
	}
	switch dest {
	case "":
		return r, fmt.Errorf("no destination")
	case "default":
		if r.Via.IsValid() && r.Via.Is6() {
			dest = "::/0"
		} else {
			dest = "0.0.0.0/0"
		}
	}
	pfx, err := parseAddrPrefix(dest, asString(mustGet(rm, "netmask")), mustGet(rm, "prefix"))
	if err != nil {
		return r, err
	}
	r.To = pfx
	if v, ok := rm.get("metric"); ok && v != nil && asString(v) != "" {
		n, ok := asInt(v)
		if !ok {
			return r, fmt.Errorf("metric %q is not an integer", asString(v))
		}
		r.Metric = intPtr(n)
	}
	if v, ok := rm.get("table"); ok && v != nil {
		if n, ok := asInt(v); ok {
			r.Table = n
		}
	}
	r.OnLink = isTrue(mustGet(rm, "on-link"))
	return r, nil
}

func (p *v1Parser) bond(cmd *omap) {
	iface := p.physical(cmd, KindBond)
	params := asMap(mustGet(cmd, "params"))
	iface.BondParams = map[string]any{}
	if params != nil {
		for _, k := range params.keys {
			v := params.m[k]
			norm := strings.ReplaceAll(k, "_", "-")
			if v2, ok := bondV1ToV2()[norm]; ok {
				iface.BondParams[v2] = v
				continue
			}
			switch k {
			case "driver":
				iface.Driver = asString(v)
				continue
			case "device_id":
				iface.DeviceID = asString(v)
				continue
			}
			if iface.Params == nil {
				iface.Params = map[string]any{}
			}
			iface.Params[k] = v
		}
	}
	for _, m := range asList(mustGet(cmd, "bond_interfaces")) {
		member := p.ensure(m, KindPhysical)
		member.BondMaster = iface.Name
	}
}

func (p *v1Parser) bridge(cmd *omap) {
	ports := asList(mustGet(cmd, "bridge_interfaces"))
	for _, port := range ports {
		p.ensure(port, KindPhysical)
	}
	iface := p.physical(cmd, KindBridge)
	iface.BridgePorts = ports
	iface.BridgeParams = map[string]any{}
	params := asMap(mustGet(cmd, "params"))
	if params == nil {
		return
	}
	delete(iface.Params, "bridge_ports")
	for _, k := range params.keys {
		v := params.m[k]
		v2, known := bridgeV1ToV2()[k]
		if !known || v2 == "" {
			continue // kept in Params by physical()
		}
		delete(iface.Params, k)
		switch v2 {
		case "stp":
			if b, ok := asBool(v); ok {
				v = b
			} else {
				p.cfg.warnf("%s: cannot convert bridge_stp value (%s) to boolean; ignored", iface.Name, asString(v))
				continue
			}
		case "path-cost", "port-priority":
			// v1: a list of "port value" strings.
			pm := newOmap()
			for _, e := range asListRaw(v) {
				f := strings.Fields(asString(e))
				if len(f) != 2 {
					p.cfg.warnf("%s: %s entry %q is not \"port value\"; ignored", iface.Name, k, asString(e))
					continue
				}
				if n, ok := asInt(f[1]); ok {
					pm.set(f[0], n)
				} else {
					pm.set(f[0], f[1])
				}
			}
			if m := asMap(v); m != nil {
				pm = m
			}
			v = pm
		}
		iface.BridgeParams[v2] = v
	}
}

func asListRaw(v any) []any {
	switch x := v.(type) {
	case []any:
		return x
	case nil:
		return nil
	case *omap:
		return nil
	}
	return []any{v}
}

func (p *v1Parser) vlan(cmd *omap) {
	iface := p.physical(cmd, KindVLAN)
	iface.VLANLink = asString(mustGet(cmd, "vlan_link"))
	id, ok := asInt(mustGet(cmd, "vlan_id"))
	if !ok {
		p.cfg.warnf("%s: vlan_id %q is not a number", iface.Name, asString(mustGet(cmd, "vlan_id")))
	}
	iface.VLANID = id
}

func (p *v1Parser) nameserver(cmd *omap) {
	d := DNS{Nameservers: asList(mustGet(cmd, "address")), Search: asList(mustGet(cmd, "search"))}
	if ifn := asString(mustGet(cmd, "interface")); ifn != "" {
		p.ifDNS = append(p.ifDNS, ifaceDNS{name: ifn, dns: d})
		return
	}
	p.cfg.DNS.Nameservers = append(p.cfg.DNS.Nameservers, d.Nameservers...)
	p.cfg.DNS.Search = append(p.cfg.DNS.Search, d.Search...)
}
