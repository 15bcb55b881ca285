package netconfig

// The systemd-networkd renderer writes, as cloud-init 26.x's networkd.py
// does, /etc/systemd/network/10-cloud-init-<if>.network per interface
// (sections sorted by name, keys sorted and deduplicated, one [Address] per
// address, one [Route] per route, a gateway outside its subnet on-link) and
// 10-cloud-init-<if>.netdev for bonds with members, bridges with ports and
// VLANs, with Bond=, Bridge=, VLAN= in the members' .network files. Values
// are written as Python would print them (True/False), as cloud-init does.
// Beyond cloud-init:
//   - 10-cloud-init-<if>.link renaming a physical device found by MAC
//     (set-name) and carrying Wake-on-LAN: cloud-init renames devices
//     itself at boot; cloudroot renders before the real root runs, and
//     udev applies the .link;
//   - bond members are matched by name only (enslaving changes their MAC),
//     and PrimarySlave= marks the bond's primary;
//   - ARPIPTargets=, ResendIGMP=, route GatewayOnLink=, and the networkd
//     spelling of routing-policy keys (FirewallMark=, TypeOfService=);
//   - bridge port Cost=/Priority= from v1 bridge_pathcost/bridge_portprio
//     (cloud-init fails on them);
//   - global routes only on the interfaces whose subnet holds the gateway.

import (
	"fmt"
	"net/netip"
	"sort"
	"strings"
)

// NetworkdDir is where the networkd renderer writes.
const NetworkdDir = "/etc/systemd/network/"

// ini accumulates one systemd unit-style file.
type ini struct {
	sections map[string][]string
	routes   map[string][]string
	repeated map[string][][]string // sections that repeat (RoutingPolicyRule)
}

func newINI() *ini {
	return &ini{sections: map[string][]string{}, routes: map[string][]string{}, repeated: map[string][][]string{}}
}

// set adds key=value to a section, deduplicated and sorted.
func (c *ini) set(sec, key string, val any) {
	e := key + "=" + ndValue(val)
	for _, x := range c.sections[sec] {
		if x == e {
			return
		}
	}
	c.sections[sec] = append(c.sections[sec], e)
	sort.Strings(c.sections[sec])
}

func (c *ini) route(rid, key string, val any) {
	e := key + "=" + ndValue(val)
	for _, x := range c.routes[rid] {
		if x == e {
			return
		}
	}
	c.routes[rid] = append(c.routes[rid], e)
	sort.Strings(c.routes[rid])
}

func ndValue(v any) string {
	switch x := v.(type) {
	case *bool:
		if x == nil {
			return ""
		}
		return ndValue(*x)
	case *int:
		if x == nil {
			return ""
		}
		return fmt.Sprint(*x)
	}
	return renderValue(v)
}

func (c *ini) String() string {
	names := map[string]bool{}
	for k, v := range c.sections {
		if len(v) > 0 {
			names[k] = true
		}
	}
	if len(c.routes) > 0 {
		names["Route"] = true
	}
	for k := range c.repeated {
		names[k] = true
	}
	sorted := make([]string, 0, len(names))
	for k := range names {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	var b strings.Builder
	for _, k := range sorted {
		switch {
		case k == "Address":
			for _, e := range c.sections[k] {
				fmt.Fprintf(&b, "[%s]\n%s\n\n", k, e)
			}
		case k == "Route":
			rids := make([]string, 0, len(c.routes))
			for r := range c.routes {
				rids = append(rids, r)
			}
			sort.Strings(rids)
			for _, r := range rids {
				fmt.Fprintf(&b, "[%s]\n", k)
				for _, e := range c.routes[r] {
					b.WriteString(e + "\n")
				}
				b.WriteString("\n")
			}
		case c.repeated[k] != nil:
			for _, sec := range c.repeated[k] {
				fmt.Fprintf(&b, "[%s]\n", k)
				for _, e := range sec {
					b.WriteString(e + "\n")
				}
				b.WriteString("\n")
			}
		default:
			fmt.Fprintf(&b, "[%s]\n", k)
			for _, e := range c.sections[k] {
				b.WriteString(e + "\n")
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

// file is the content cloud-init writes: without the final blank line.
func (c *ini) file() string {
	s := c.String()
	if strings.HasSuffix(s, "\n\n") {
		s = s[:len(s)-1]
	}
	return s
}

// RenderNetworkd renders cfg as systemd-networkd files.
func RenderNetworkd(cfg *Config) (*Output, error) {
	if err := checkSafe(cfg); err != nil {
		return nil, fmt.Errorf("rendering networkd: %w", err)
	}
	o := newOutput()
	for _, iface := range cfg.Interfaces {
		c := newINI()
		c.set("Match", "Name", iface.Name)
		if iface.Driver != "" {
			c.set("Match", "Driver", iface.Driver)
		}
		// A bond member's address changes when it is enslaved: match it by
		// name (its .link renames it by MAC first).
		if iface.MAC != "" && iface.Kind == KindPhysical && iface.BondMaster == "" {
			c.set("Match", "MACAddress", iface.MAC)
		}
		if iface.MTU != 0 {
			c.set("Link", "MTUBytes", iface.MTU)
		}
		if iface.MAC != "" && iface.Kind != KindPhysical {
			c.set("Link", "MACAddress", iface.MAC)
		}
		if iface.Optional != nil && *iface.Optional {
			c.set("Link", "RequiredForOnline", "no")
		}
		dhcp := networkdSubnets(c, iface)
		networkdDNS(c, cfg, iface)
		rid := 0
		for _, r := range globalRoutesFor(cfg, iface) {
			networkdRoute(c, fmt.Sprintf("c%d", rid), r)
			rid++
		}
		networkdOverrides(c, iface, dhcp)
		networkdMembership(c, cfg, iface)
		for _, rule := range iface.RoutingPolicy {
			var sec []string
			if rule.From.IsValid() {
				sec = append(sec, "From="+ruleAddr(rule.From))
			}
			if rule.To.IsValid() {
				sec = append(sec, "To="+ruleAddr(rule.To))
			}
			if rule.Table != 0 {
				sec = append(sec, fmt.Sprintf("Table=%d", rule.Table))
			}
			if rule.Priority != nil {
				sec = append(sec, fmt.Sprintf("Priority=%d", *rule.Priority))
			}
			if rule.Mark != nil {
				sec = append(sec, fmt.Sprintf("FirewallMark=%d", *rule.Mark))
			}
			if rule.TypeOfService != nil {
				sec = append(sec, fmt.Sprintf("TypeOfService=%d", *rule.TypeOfService))
			}
			sort.Strings(sec)
			c.repeated["RoutingPolicyRule"] = append(c.repeated["RoutingPolicyRule"], sec)
		}
		base := NetworkdDir + "10-cloud-init-" + iface.Name
		o.Files[base+".network"] = File{Data: []byte(c.file()), Mode: 0o644, Owner: "systemd-network"}
		if nd := networkdNetdev(o, cfg, iface); nd != "" {
			o.Files[base+".netdev"] = File{Data: []byte(nd), Mode: 0o644, Owner: "systemd-network"}
		}
		if l := networkdLink(iface); l != "" {
			o.Files[base+".link"] = File{Data: []byte(Header + l), Mode: 0o644}
		}
	}
	return o, nil
}

// networkdSubnets is cloud-init's parse_subnets; it returns the DHCP= value.
// SLAAC and DHCPv6 other than plain dhcp6 leave DHCP= alone: networkd
// follows the router advertisements' flags.
func networkdSubnets(c *ini, iface *Interface) string {
	dhcp := "no"
	want := func(v string) {
		switch {
		case dhcp == "no":
			dhcp = v
		case dhcp != v:
			dhcp = "yes"
		}
	}
	rid := 0
	for _, s := range iface.Subnets {
		switch {
		case s.IsDHCP4():
			want("ipv4")
		case s.Type == SubnetDHCP6:
			want("ipv6")
		}
		for _, r := range s.Routes {
			networkdRoute(c, fmt.Sprintf("r%d", rid), r)
			rid++
		}
		if s.IsStatic() {
			c.set("Address", "Address", addrCIDR(s.Address))
			if s.Gateway.IsValid() {
				c.route(fmt.Sprintf("a%d", rid), "Gateway", s.Gateway.String())
				if !s.Address.Masked().Contains(s.Gateway) {
					c.route(fmt.Sprintf("a%d", rid), "GatewayOnLink", "yes")
				}
				rid++
			}
			if len(s.DNS.Nameservers) > 0 {
				c.set("Network", "DNS", strings.Join(s.DNS.Nameservers, " "))
			}
			if len(s.DNS.Search) > 0 {
				c.set("Network", "Domains", strings.Join(s.DNS.Search, " "))
			}
		}
	}
	c.set("Network", "DHCP", dhcp)
	if iface.AcceptRA != nil {
		c.set("Network", "IPv6AcceptRA", yesNo(*iface.AcceptRA))
	}
	return dhcp
}

// ruleAddr writes a routing-policy address as given: a single host without
// its prefix length.
func ruleAddr(p netip.Prefix) string {
	if p.IsSingleIP() {
		return p.Addr().String()
	}
	return p.String()
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func networkdRoute(c *ini, rid string, r Route) {
	if r.Via.IsValid() {
		c.route(rid, "Gateway", r.Via.String())
	}
	c.route(rid, "Destination", r.To.String())
	if r.Metric != nil {
		c.route(rid, "Metric", *r.Metric)
	}
	if r.Table != 0 {
		c.route(rid, "Table", r.Table)
	}
	if r.OnLink {
		c.route(rid, "GatewayOnLink", "yes")
	}
}

// networkdDNS is cloud-init's parse_dns: the interface's own DNS, else for
// v1 the global DNS.
func networkdDNS(c *ini, cfg *Config, iface *Interface) {
	d := iface.DNS
	if d.empty() {
		if cfg.Version == 2 {
			return
		}
		d = cfg.DNS
	}
	if len(d.Search) > 0 {
		c.set("Network", "Domains", strings.Join(d.Search, " "))
	}
	if len(d.Nameservers) > 0 {
		c.set("Network", "DNS", strings.Join(d.Nameservers, " "))
	}
}

// globalRoutesFor picks the global routes whose gateway is on one of the
// interface's static subnets; when no interface has such a subnet for a
// route, the route goes to every interface, as cloud-init does.
func globalRoutesFor(cfg *Config, iface *Interface) []Route {
	var out []Route
	for _, r := range cfg.Routes {
		owner := false
		anyOwner := false
		for _, i := range cfg.Interfaces {
			for _, s := range i.Subnets {
				if s.IsStatic() && r.Via.IsValid() && s.Address.Masked().Contains(r.Via) {
					anyOwner = true
					if i == iface {
						owner = true
					}
				}
			}
		}
		if owner || !anyOwner {
			out = append(out, r)
		}
	}
	return out
}

// networkdOverrides is cloud-init's parse_dhcp_overrides: v2 ethernets
// only.
func networkdOverrides(c *ini, iface *Interface, dhcp string) {
	if iface.ConfigID == "" {
		return
	}
	put := func(sec string, o *DHCPOverrides, v4 bool) {
		if o == nil {
			return
		}
		if o.UseDNS != nil {
			c.set(sec, "UseDNS", *o.UseDNS)
		}
		if o.UseDomains != "" {
			// Python's str of the YAML value: True/False, or "route".
			switch o.UseDomains {
			case "true":
				c.set(sec, "UseDomains", "True")
			case "false":
				c.set(sec, "UseDomains", "False")
			default:
				c.set(sec, "UseDomains", o.UseDomains)
			}
		}
		if o.UseHostname != nil {
			c.set(sec, "UseHostname", *o.UseHostname)
		}
		if o.UseNTP != nil {
			c.set(sec, "UseNTP", *o.UseNTP)
		}
		if !v4 {
			return
		}
		if o.SendHostname != nil {
			c.set(sec, "SendHostname", *o.SendHostname)
		}
		if o.Hostname != "" {
			c.set(sec, "Hostname", o.Hostname)
		}
		if o.RouteMetric != nil {
			c.set(sec, "RouteMetric", *o.RouteMetric)
		}
		if o.UseMTU != nil {
			c.set(sec, "UseMTU", *o.UseMTU)
		}
		if o.UseRoutes != nil {
			c.set(sec, "UseRoutes", *o.UseRoutes)
		}
	}
	if dhcp == "yes" || dhcp == "ipv4" {
		put("DHCPv4", iface.DHCP4, true)
	}
	if dhcp == "yes" || dhcp == "ipv6" {
		put("DHCPv6", iface.DHCP6, false)
	}
}

// networkdMembership links members to their bond, bridge and VLANs.
func networkdMembership(c *ini, cfg *Config, iface *Interface) {
	if iface.BondMaster != "" {
		c.set("Network", "Bond", iface.BondMaster)
		if bond := cfg.Interface(iface.BondMaster); bond != nil {
			if p, ok := bond.BondParams["primary"]; ok && renderValue(p) == iface.Name {
				c.set("Network", "PrimarySlave", "yes")
			}
		}
	}
	for _, other := range cfg.Interfaces {
		switch other.Kind {
		case KindBridge:
			for _, port := range other.BridgePorts {
				if port != iface.Name {
					continue
				}
				c.set("Network", "Bridge", other.Name)
				if cost := portParam(other.BridgeParams["path-cost"], port); cost != "" {
					c.set("Bridge", "Cost", cost)
				}
				if prio := portParam(other.BridgeParams["port-priority"], port); prio != "" {
					c.set("Bridge", "Priority", prio)
				}
			}
		case KindVLAN:
			if other.VLANLink == iface.Name {
				c.set("Network", "VLAN", other.Name)
			}
		}
	}
}

func portParam(v any, port string) string {
	if m := asMap(v); m != nil {
		if x, ok := m.get(port); ok {
			return renderValue(x)
		}
	}
	return ""
}

// networkd bond parameters in cloud-init's param_map, with the suffix of
// time-valued ones; ARPIPTargets and ResendIGMP are cloudroot's (cloud-init
// looks for a key that never exists, or has none).
var networkdBondKeys = []struct{ v2, nd, unit string }{
	{"ad-select", "AdSelect", ""},
	{"arp-interval", "ARPIntervalSec", "ms"},
	{"arp-validate", "ARPValidate", ""},
	{"down-delay", "DownDelaySec", "ms"},
	{"fail-over-mac-policy", "FailOverMACPolicy", ""},
	{"lacp-rate", "LACPTransmitRate", ""},
	{"mii-monitor-interval", "MIIMonitorSec", "ms"},
	{"min-links", "MinLinks", ""},
	{"mode", "Mode", ""},
	{"gratuitous-arp", "GratuitousARP", ""},
	{"primary-reselect-policy", "PrimaryReselectPolicy", ""},
	{"up-delay", "UpDelaySec", "ms"},
	{"transmit-hash-policy", "TransmitHashPolicy", ""},
	{"all-slaves-active", "AllSlavesActive", "lower"},
	{"arp-all-targets", "ARPAllTargets", ""},
	{"learn-packet-interval", "LearnPacketIntervalSec", ""},
	{"packets-per-slave", "PacketsPerSlave", ""},
	{"arp-ip-target", "ARPIPTargets", ""},
	{"resend-igmp", "ResendIGMP", ""},
}

// networkd bridge parameters; like cloud-init, false and zero are not
// written and booleans are yes/no.
var networkdBridgeKeys = []struct{ v2, nd string }{
	{"ageing-time", "AgeingTimeSec"},
	{"priority", "Priority"},
	{"forward-delay", "ForwardDelaySec"},
	{"hello-time", "HelloTimeSec"},
	{"max-age", "MaxAgeSec"},
	{"stp", "STP"},
}

func bondValue(v any, unit string) string {
	s := renderValue(v)
	switch unit {
	case "ms":
		return s + "ms"
	case "lower":
		return strings.ToLower(s)
	}
	return s
}

// networkdNetdev writes the .netdev of a bond with members, a bridge with
// ports or a VLAN with id and link, as cloud-init's render_bonds,
// render_bridges and render_vlans do.
func networkdNetdev(o *Output, cfg *Config, iface *Interface) string {
	c := newINI()
	switch iface.Kind {
	case KindBond:
		if len(cfg.bondMembers(iface.Name)) == 0 {
			o.warnf("%s: bond without members; no .netdev written (as cloud-init)", iface.Name)
			return ""
		}
		c.set("NetDev", "Kind", "bond")
		for _, k := range networkdBondKeys {
			if v, ok := iface.BondParams[k.v2]; ok && v != nil {
				c.set("Bond", k.nd, bondValue(v, k.unit))
			}
		}
		for k := range iface.BondParams {
			if k != "primary" && !hasKey(networkdBondKeys, k) {
				o.warnf("%s: bond parameter %s cannot be expressed by the networkd renderer; dropped", iface.Name, k)
			}
		}
	case KindBridge:
		if len(iface.BridgePorts) == 0 {
			o.warnf("%s: bridge without ports; no .netdev written (as cloud-init)", iface.Name)
			return ""
		}
		c.set("NetDev", "Kind", "bridge")
		for _, k := range networkdBridgeKeys {
			v, ok := iface.BridgeParams[k.v2]
			if !ok || v == nil || v == false || v == 0 || v == "" {
				continue
			}
			if b, ok := v.(bool); ok {
				v = yesNo(b)
			}
			c.set("Bridge", k.nd, v)
		}
	case KindVLAN:
		if iface.VLANLink == "" {
			o.warnf("%s: vlan without link; no .netdev written (as cloud-init)", iface.Name)
			return ""
		}
		c.set("NetDev", "Kind", "vlan")
		c.set("VLAN", "Id", iface.VLANID)
	default:
		return ""
	}
	c.set("NetDev", "Name", iface.Name)
	if iface.MAC != "" {
		c.set("NetDev", "MACAddress", strings.ToLower(iface.MAC))
	}
	if iface.MTU != 0 {
		c.set("NetDev", "MTUBytes", iface.MTU)
	}
	return c.file()
}

func hasKey(keys []struct{ v2, nd, unit string }, k string) bool {
	for _, x := range keys {
		if x.v2 == k {
			return true
		}
	}
	return false
}

// networkdLink writes the .link that renames a device found by MAC and
// sets Wake-on-LAN.
func networkdLink(iface *Interface) string {
	if iface.Kind != KindPhysical || iface.MAC == "" || (!iface.Rename && !iface.WakeOnLAN) {
		return ""
	}
	c := newINI()
	c.set("Match", "MACAddress", iface.MAC)
	if iface.Driver != "" {
		c.set("Match", "Driver", iface.Driver)
	}
	if iface.Rename {
		c.set("Link", "Name", iface.Name)
	}
	if iface.WakeOnLAN {
		c.set("Link", "WakeOnLan", "magic")
	}
	if iface.MTU != 0 {
		c.set("Link", "MTUBytes", iface.MTU)
	}
	return c.String()
}
