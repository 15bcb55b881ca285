package netconfig

// The ENI renderer writes ifupdown's /etc/network/interfaces.d/50-cloud-init
// as cloud-init's eni.py does: lo first (carrying the global DNS), then
// physical, infiniband, bond, bridge and VLAN devices by name, one stanza
// per subnet (later ones "# control-alias"), routes as post-up/pre-down
// `route` commands. Devices found by MAC are renamed by
// /etc/udev/rules.d/70-persistent-net.rules. When the target has no
// /etc/network/interfaces at all, a minimal one sourcing interfaces.d is
// written too (IfMissing).
//
// Not expressible: routing policy, route tables and on-link (warned).

import (
	"fmt"
	"sort"
	"strings"
)

// Paths of the ENI renderer.
const (
	ENIPath       = "/etc/network/interfaces.d/50-cloud-init"
	ENIBasePath   = "/etc/network/interfaces"
	UdevRulesPath = "/etc/udev/rules.d/70-persistent-net.rules"
)

const eniBase = `# Written by cloudroot because this system had no /etc/network/interfaces.
# cloud-init's network configuration is in /etc/network/interfaces.d/50-cloud-init.
source /etc/network/interfaces.d/*
`

var eniKindOrder = map[Kind]int{
	KindLoopback: 0, KindPhysical: 1, KindInfiniband: 2, KindBond: 3, KindBridge: 4, KindVLAN: 5,
}

// RenderENI renders cfg as ifupdown configuration.
func RenderENI(cfg *Config) (*Output, error) {
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
	sections = append(sections, eniIface(o, cfg, lo, nil)...)

	ifaces := make([]*Interface, 0, len(cfg.Interfaces))
	for _, i := range cfg.Interfaces {
		if i.Name != "lo" {
			ifaces = append(ifaces, i)
		}
	}
	sort.SliceStable(ifaces, func(a, b int) bool {
		ka, kb := eniKindOrder[ifaces[a].Kind], eniKindOrder[ifaces[b].Kind]
		if ka != kb {
			return ka < kb
		}
		return ifaces[a].Name < ifaces[b].Name
	})
	for _, i := range ifaces {
		sections = eniIface(o, cfg, i, sections)
	}
	for _, r := range cfg.Routes {
		sections = append(sections, eniRoute(r, ""))
	}
	parts := make([]string, len(sections))
	for i, s := range sections {
		parts[i] = strings.Join(s, "\n")
	}
	o.add(ENIPath, Header+strings.Join(parts, "\n\n")+"\n", 0o644)
	o.Files[ENIBasePath] = File{Data: []byte(eniBase), Mode: 0o644, IfMissing: true}
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

// eniIface is cloud-init's _render_iface: it appends the stanzas of one
// interface to sections (the already rendered ones decide "alias").
func eniIface(o *Output, cfg *Config, iface *Interface, sections [][]string) [][]string {
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
		return append(sections, lines)
	}
	for index, s := range iface.Subnets {
		mode := string(s.Type)
		control := s.Control
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
				if l == "auto "+iface.Name {
					control = "alias"
				}
			}
		}
		var verb string
		switch control {
		case "auto":
			verb = "auto"
		case "hotplug":
			verb = "allow-hotplug"
		default:
			verb = "# control-" + control
		}
		lines := []string{
			fmt.Sprintf("%s %s", verb, iface.Name),
			fmt.Sprintf("iface %s %s %s", iface.Name, inet, mode),
		}
		lines = append(lines, eniSubnetLines(s)...)
		lines = append(lines, eniAttrs(o, cfg, iface, st, index)...)
		for _, r := range s.Routes {
			lines = append(lines, eniRoute(r, "    ")...)
		}
		sections = append(sections, lines)
	}
	return sections
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

// eniSubnetLines is cloud-init's _iface_add_subnet.
func eniSubnetLines(s Subnet) []string {
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
	add("dns-search", strings.Join(s.DNS.Search, " "))
	add("dns-nameservers", strings.Join(s.DNS.Nameservers, " "))
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
		lines = append(lines, "    "+k+" "+s)
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
	add("accept_ra", st.acceptRA)
	add("dhcp", st.dhcp)
	switch iface.Kind {
	case KindBond, KindBridge, KindInfiniband, KindVLAN:
		add("hwaddress", iface.MAC)
	}
	bondParams := func(params map[string]any) {
		for k, v := range params {
			name, ok := bondV2ToV1[k]
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
			name := bridgeV2ToV1[k]
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
	return pyStr(v)
}

// eniRoute is cloud-init's _render_route.
func eniRoute(r Route, indent string) []string {
	line := ""
	defaultGW := ""
	switch {
	case r.To.Addr().Is4() && r.To.Bits() == 0 && r.To.Addr().IsUnspecified():
		defaultGW = " default"
	case r.To.Addr().Is6() && r.To.Bits() == 0 && r.To.Addr().IsUnspecified():
		defaultGW = " -A inet6 default"
	}
	if defaultGW == "" {
		switch {
		case r.To.Addr().Is6():
			line += " -A inet6"
		case r.To.Bits() == 32:
			line += " -host"
		default:
			line += " -net"
		}
		line += " " + addrCIDR(r.To)
	}
	if r.Via.IsValid() {
		line += defaultGW + " gw " + r.Via.String()
	} else {
		line += defaultGW
	}
	if r.Metric != nil {
		line += fmt.Sprintf(" metric %d", *r.Metric)
	}
	return []string{
		indent + "post-up route add" + line + " || true",
		indent + "pre-down route del" + line + " || true",
	}
}
