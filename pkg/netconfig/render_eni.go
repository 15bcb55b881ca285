package netconfig

// The ENI renderer writes ifupdown's /etc/network/interfaces.d/50-cloud-init
// as cloud-init's eni.py does: lo first (carrying the global DNS), then
// physical, infiniband, bond, bridge and VLAN devices by name, one stanza
// per subnet (later ones "# control-alias"), routes as post-up/pre-down
// `ip route` commands (iproute2; cloud-init falls back to net-tools `route`
// only when `ip` is missing where it runs). Devices found by MAC are renamed
// by /etc/udev/rules.d/70-persistent-net.rules. /etc/network/interfaces
// itself is the image's: cloud-init's eni renderer is only chosen when it
// exists (and sources interfaces.d).
//
// Not expressible: routing policy, route tables and on-link (warned).

import (
	"fmt"
	"net/netip"
	"sort"
	"strings"
	"sync"
)

// Paths of the ENI renderer.
const (
	ENIPath       = "/etc/network/interfaces.d/50-cloud-init"
	UdevRulesPath = "/etc/udev/rules.d/70-persistent-net.rules"
)

var eniKindOrder = sync.OnceValue(func() map[Kind]int {
	return map[Kind]int{
		KindLoopback: 0, KindPhysical: 1, KindInfiniband: 2, KindBond: 3, KindBridge: 4, KindVLAN: 5,
	}
})

// RenderENI renders cfg as ifupdown configuration.
func RenderENI(cfg *Config) (*Output, error) {
	if err := checkSafe(cfg); err != nil {
		return nil, fmt.Errorf("rendering ENI: %w", err)
	}
	o := newOutput()
	unsupported(o, cfg, RendererENI, true, true)
	cfg = mainTableOnly(cfg)
	for _, r := range cfg.Routes {
		if r.Table != 0 || r.OnLink {
			o.warnf("route to %s: tables and on-link cannot be expressed by the eni renderer; written without them", r.To)
		}
	}

	var sections [][]string
	lo := &Interface{Name: "lo", Kind: KindPhysical, Subnets: []Subnet{{Type: SubnetLoopback, Control: "auto"}}}
	if l := cfg.Interface("lo"); l != nil {
		c := *l
		c.Subnets = append([]Subnet(nil), l.Subnets...)
		if len(c.Subnets) == 0 {
			c.Subnets = []Subnet{{Type: SubnetLoopback, Control: "auto"}}
		}
		lo = &c
	}
	if !cfg.DNS.empty() {
		s := lo.Subnets[0]
		s.DNS = DNS{Nameservers: cfg.DNS.Nameservers, Search: cfg.DNS.Search}
		lo.Subnets[0] = s
	}
	sections = append(sections, eniIface(o, cfg, lo)...)

	ifaces := make([]*Interface, 0, len(cfg.Interfaces))
	for _, i := range cfg.Interfaces {
		if i.Name != "lo" {
			ifaces = append(ifaces, i)
		}
	}
	sort.SliceStable(ifaces, func(a, b int) bool {
		ka, kb := eniKindOrder()[ifaces[a].Kind], eniKindOrder()[ifaces[b].Kind]
		if ka != kb {
			return ka < kb
		}
		return ifaces[a].Name < ifaces[b].Name
	})
	for _, i := range ifaces {
		sections = append(sections, eniIface(o, cfg, i)...)
	}
	for _, r := range cfg.Routes {
		sections = append(sections, eniRoute(r, ""))
	}
	parts := make([]string, len(sections))
	for i, s := range sections {
		parts[i] = strings.Join(s, "\n")
	}
	o.add(ENIPath, Header+strings.Join(parts, "\n\n")+"\n", 0o644)
	o.add(UdevRulesPath, udevRules(cfg), 0o644)
	return o, nil
}

// udevRules is cloud-init's _render_persistent_net.
func udevRules(cfg *Config) string {
	var b strings.Builder
	for _, i := range cfg.Interfaces {
		if i.Kind != KindPhysical || i.Name == "" || i.MAC == "" {
			continue
		}
		driver := i.Driver
		if driver == "" {
			driver = "?*"
		}
		fmt.Fprintf(&b, `SUBSYSTEM=="net", ACTION=="add", DRIVERS=="%s", ATTR{address}=="%s", NAME="%s"`+"\n", driver, i.MAC, i.Name)
	}
	return b.String()
}

// eniIface is cloud-init's _render_iface: the stanzas of one interface.
// DNS given on one subnet is repeated on the later ones without any (v1
// puts it on the first), and IPv6 routes of IPv4 subnets move to the next
// IPv6 stanza, or to an extra `inet6 static` one at the end.
func eniIface(o *Output, cfg *Config, iface *Interface) [][]string {
	st := &eniAttrState{}
	if iface.WakeOnLAN {
		st.wol = true
	}
	if len(iface.Subnets) == 0 {
		var lines []string
		if iface.BondMaster != "" || iface.Kind == KindBond {
			lines = append(lines, "auto "+iface.Name)
		}
		lines = append(lines, fmt.Sprintf("iface %s inet manual", iface.Name))
		lines = append(lines, eniAttrs(o, cfg, iface, st, 0)...)
		return [][]string{lines}
	}
	var sections [][]string
	var dns *DNS
	var routes6 []Route
	control := ""
	for index, s := range iface.Subnets {
		mode := string(s.Type)
		control = s.Control
		if control == "" {
			control = "auto"
		}
		inet := "inet"
		st.ipv4MTU = 0
		if s.IsIPv6() {
			inet = "inet6"
		} else {
			st.ipv4MTU = s.MTU
		}
		switch {
		case s.Type == SubnetDHCP4 || s.Type == SubnetDHCP6 || s.Type == SubnetDHCP6Stateful:
			mode = "dhcp"
			if iface.AcceptRA != nil {
				st.acceptRA = boolTo10(*iface.AcceptRA)
			}
		case s.Type == SubnetDHCP6Stateless:
			mode = "auto"
			st.dhcp = "1"
		case s.Type == SubnetSLAAC:
			mode = "auto"
			st.dhcp = "0"
		case s.IsIPv6():
			mode = "static"
			if iface.AcceptRA != nil {
				st.acceptRA = boolTo10(*iface.AcceptRA)
			}
		}
		for _, prev := range sections {
			for _, l := range prev {
				if strings.Contains(l, "auto "+iface.Name) {
					control = "alias"
				}
			}
		}
		if dns == nil && !s.DNS.empty() {
			d := s.DNS
			dns = &d
		} else if dns != nil && s.DNS.empty() {
			s.DNS = *dns
		}
		lines := eniStart(control, iface.Name, inet, mode)
		lines = append(lines, eniSubnetLines(s, s.IsIPv6())...)
		lines = append(lines, eniAttrs(o, cfg, iface, st, index)...)
		for _, r := range s.Routes {
			if r.To.Addr().Is6() && !s.IsIPv6() {
				routes6 = append(routes6, r)
				continue
			}
			lines = append(lines, eniRoute(r, "    ")...)
		}
		if s.IsIPv6() {
			for _, r := range routes6 {
				lines = append(lines, eniRoute(r, "    ")...)
			}
			routes6 = nil
		}
		sections = append(sections, lines)
	}
	if len(routes6) > 0 {
		lines := eniStart(control, iface.Name, "inet6", "static")
		s := Subnet{Type: SubnetStatic}
		if dns != nil {
			s.DNS = *dns
		}
		lines = append(lines, eniSubnetLines(s, true)...)
		for _, r := range routes6 {
			lines = append(lines, eniRoute(r, "    ")...)
		}
		sections = append(sections, lines)
	}
	return sections
}

// eniStart is cloud-init's _iface_start_entry.
func eniStart(control, name, inet, mode string) []string {
	verb := "# control-" + control
	switch control {
	case "auto":
		verb = "auto"
	case "hotplug":
		verb = "allow-hotplug"
	}
	return []string{verb + " " + name, fmt.Sprintf("iface %s %s %s", name, inet, mode)}
}

func boolTo10(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

type eniAttrState struct {
	ipv4MTU  int
	acceptRA string
	dhcp     string
	wol      bool
}

// sameIPVersion is cloud-init's has_same_ip_version: an address or network
// of the stanza's family (anything else, e.g. a host name, is neither).
func sameIPVersion(s string, v6 bool) bool {
	a, err := netip.ParseAddr(s)
	if err != nil {
		p, perr := netip.ParsePrefix(s)
		if perr != nil {
			return false
		}
		a = p.Addr()
	}
	if v6 {
		return a.Is6() && !a.Is4In6()
	}
	return a.Is4()
}

// eniSubnetLines is cloud-init's _iface_add_subnet: nameservers of the
// stanza's family only, and the search list only with one of them (or
// with no nameservers at all).
func eniSubnetLines(s Subnet, v6 bool) []string {
	var lines []string
	add := func(k, v string) {
		if v != "" {
			lines = append(lines, "    "+k+" "+v)
		}
	}
	if s.Address.IsValid() {
		add("address", addrCIDR(s.Address))
	}
	add("broadcast", s.Broadcast)
	if s.Metric != nil && *s.Metric != 0 {
		add("metric", fmt.Sprint(*s.Metric))
	}
	if s.Gateway.IsValid() {
		add("gateway", s.Gateway.String())
	}
	if s.MTU != 0 {
		add("mtu", fmt.Sprint(s.MTU))
	}
	var ns []string
	for _, n := range s.DNS.Nameservers {
		if sameIPVersion(n, v6) {
			ns = append(ns, n)
		}
	}
	if len(ns) > 0 || len(s.DNS.Nameservers) == 0 {
		add("dns-search", strings.Join(s.DNS.Search, " "))
	}
	add("dns-nameservers", strings.Join(ns, " "))
	sort.Strings(lines)
	return lines
}

// eniAttrs is cloud-init's _iface_add_attrs: device-level options, written
// on the first stanza only.
func eniAttrs(o *Output, cfg *Config, iface *Interface, st *eniAttrState, index int) []string {
	if index != 0 {
		return nil
	}
	var lines []string
	add := func(k string, v any) {
		s := eniValue(v)
		if s == "" {
			return
		}
		lines = append(lines, "    "+strings.ReplaceAll(k, "_", "-")+" "+s)
	}
	if iface.MTU != 0 {
		if st.ipv4MTU != 0 {
			if iface.MTU != st.ipv4MTU {
				o.warnf("%s: ignoring device-level mtu %d because ipv4 subnet-level mtu %d is provided", iface.Name, iface.MTU, st.ipv4MTU)
			}
		} else {
			add("mtu", iface.MTU)
		}
	}
	if st.wol {
		add("ethernet-wol", "g")
	}
	if iface.Optional != nil {
		add("optional", *iface.Optional)
	}
	add("accept_ra", st.acceptRA)
	add("dhcp", st.dhcp)
	switch iface.Kind {
	case KindBond, KindBridge, KindInfiniband, KindVLAN:
		add("hwaddress", iface.MAC)
	}
	bondParams := func(params map[string]any) {
		for k, v := range params {
			name, ok := bondV2ToV1()[k]
			if !ok {
				name = "bond-" + k
			}
			add(name, v)
		}
	}
	if iface.Kind == KindBond {
		add("bond-slaves", "none")
		bondParams(iface.BondParams)
	}
	if iface.BondMaster != "" {
		add("bond-master", iface.BondMaster)
		if m := cfg.Interface(iface.BondMaster); m != nil {
			bondParams(m.BondParams)
		}
	}
	if iface.Kind == KindVLAN {
		add("vlan-raw-device", iface.VLANLink)
		add("vlan_id", iface.VLANID)
	}
	if iface.Kind == KindBridge {
		add("bridge_ports", iface.BridgePorts)
		for k, v := range iface.BridgeParams {
			name := bridgeV2ToV1()[k]
			if name == "" {
				continue
			}
			if pm := asMap(v); pm != nil {
				for _, port := range pm.keys {
					add(name, port+" "+eniValue(pm.m[port]))
				}
				continue
			}
			add(name, v)
		}
	}
	for k, v := range iface.Params {
		if list, ok := v.([]any); ok && (k == "bridge_pathcost" || k == "bridge_portprio" || k == "bridge_waitport") {
			for _, e := range list {
				add(k, e)
			}
			continue
		}
		add(k, v)
	}
	sort.Strings(lines)
	return lines
}

// eniValue renders an option value: booleans on/off, lists space-joined,
// zero values omitted (cloud-init skips falsy values).
func eniValue(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case bool:
		if x {
			return "on"
		}
		return "off"
	case int:
		if x == 0 {
			return ""
		}
	case string:
		return x
	case []string:
		return strings.Join(x, " ")
	case *omap:
		return ""
	}
	return renderValue(v)
}

// eniRoute is cloud-init's _render_route with iproute2 commands.
func eniRoute(r Route, indent string) []string {
	up, down := indent+"post-up ip", indent+"pre-down ip"
	if r.To.Addr().Is6() {
		up += " -family inet6"
		down += " -family inet6"
	}
	up += " route add"
	down += " route del"
	line := " " + addrCIDR(r.To)
	if r.IsDefault() && r.To.Addr().IsUnspecified() {
		line = " default"
	}
	if r.Via.IsValid() {
		line += " via " + r.Via.String()
	}
	if r.Metric != nil {
		line += fmt.Sprintf(" metric %d", *r.Metric)
	}
	return []string{up + line + " || true", down + line + " || true"}
}
