package netconfig

// The systemd-networkd renderer writes one
// /etc/systemd/network/10-cloud-init-<if>.network per interface, laid out
// as cloud-init's networkd.py does (sections sorted by name, keys sorted
// and deduplicated, one [Address] per address, one [Route] per route), with
// the blank line inside [Route] of 22.4 fixed. Beyond cloud-init it writes
// what networkd needs for the rest of the model:
//   - 10-cloud-init-<if>.netdev for bonds, bridges and VLANs, and Bond=,
//     Bridge=, VLAN= in the members' .network files;
//   - 10-cloud-init-<if>.link renaming a physical device found by MAC
//     (set-name) and carrying Wake-on-LAN;
//   - [RoutingPolicyRule] sections, route Table= and GatewayOnLink=;
//   - IPv6AcceptRA=yes for SLAAC and stateless DHCPv6, DHCP=ipv6 for
//     stateful DHCPv6 (cloud-init writes nothing for them).

import (
	"fmt"
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
	case bool:
		if x {
			return "true"
		}
		return "false"
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
	return pyStr(v)
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

// RenderNetworkd renders cfg as systemd-networkd files.
func RenderNetworkd(cfg *Config) (*Output, error) {
	o := newOutput()
	for _, iface := range cfg.Interfaces {
		c := newINI()
		c.set("Match", "Name", iface.Name)
		if iface.Driver != "" {
			c.set("Match", "Driver", iface.Driver)
		}
		// A bond member's address changes when it is enslaved: match it by
		// name (its .link renames it by MAC first).
		if iface.MAC != "" && iface.BondMaster == "" {
			c.set("Match", "MACAddress", iface.MAC)
		}
		if iface.MTU != 0 {
			c.set("Link", "MTUBytes", iface.MTU)
		}
		if iface.Optional {
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
				sec = append(sec, "From="+rule.From.String())
			}
			if rule.To.IsValid() {
				sec = append(sec, "To="+rule.To.String())
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
		o.Files[base+".network"] = File{Data: []byte(Header + c.String()), Mode: 0o644, Owner: "systemd-network"}
		if nd := networkdNetdev(o, iface); nd != "" {
			o.Files[base+".netdev"] = File{Data: []byte(Header + nd), Mode: 0o644, Owner: "systemd-network"}
		}
		if l := networkdLink(iface); l != "" {
			o.Files[base+".link"] = File{Data: []byte(Header + l), Mode: 0o644}
		}
	}
	return o, nil
}

// networkdSubnets is cloud-init's parse_subnets; it returns the DHCP= value.
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
	acceptRA := false
	rid := 0
	for _, s := range iface.Subnets {
		switch {
		case s.IsDHCP4():
			want("ipv4")
		case s.Type == SubnetDHCP6, s.Type == SubnetDHCP6Stateful:
			want("ipv6")
		case s.Type == SubnetSLAAC, s.Type == SubnetDHCP6Stateless:
			acceptRA = true
		}
		for _, r := range s.Routes {
			networkdRoute(c, fmt.Sprintf("r%d", rid), r)
			rid++
		}
		if s.IsStatic() {
			c.set("Address", "Address", addrCIDR(s.Address))
			if s.Gateway.IsValid() {
				c.route(fmt.Sprintf("a%d", rid), "Gateway", s.Gateway.String())
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
	switch {
	case (dhcp == "ipv6" || dhcp == "yes") && iface.AcceptRA != nil:
		c.set("Network", "IPv6AcceptRA", *iface.AcceptRA)
	case acceptRA:
		if iface.AcceptRA != nil {
			c.set("Network", "IPv6AcceptRA", *iface.AcceptRA)
		} else {
			c.set("Network", "IPv6AcceptRA", true)
		}
	}
	return dhcp
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

// networkdOverrides is cloud-init's parse_dhcp_overrides.
func networkdOverrides(c *ini, iface *Interface, dhcp string) {
	put := func(sec string, o *DHCPOverrides, v4 bool) {
		if o == nil {
			return
		}
		if o.UseDNS != nil {
			c.set(sec, "UseDNS", *o.UseDNS)
		}
		if o.UseDomains != "" {
			c.set(sec, "UseDomains", o.UseDomains)
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
			if p, ok := bond.BondParams["primary"]; ok && pyStr(p) == iface.Name {
				c.set("Network", "PrimarySlave", true)
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
			return pyStr(x)
		}
	}
	return ""
}

// networkd bond parameter names, and the unit of time-valued ones.
var networkdBondKeys = []struct{ v2, nd, unit string }{
	{"mode", "Mode", ""},
	{"transmit-hash-policy", "TransmitHashPolicy", ""},
	{"lacp-rate", "LACPTransmitRate", ""},
	{"mii-monitor-interval", "MIIMonitorSec", "ms"},
	{"up-delay", "UpDelaySec", "ms"},
	{"down-delay", "DownDelaySec", "ms"},
	{"arp-interval", "ARPIntervalSec", "ms"},
	{"arp-ip-target", "ARPIPTargets", ""},
	{"arp-validate", "ARPValidate", ""},
	{"arp-all-targets", "ARPAllTargets", ""},
	{"ad-select", "AdSelect", ""},
	{"fail-over-mac-policy", "FailOverMACPolicy", ""},
	{"gratuitous-arp", "GratuitousARP", ""},
	{"primary-reselect-policy", "PrimaryReselectPolicy", ""},
	{"min-links", "MinLinks", ""},
	{"all-slaves-active", "AllSlavesActive", ""},
	{"packets-per-slave", "PacketsPerSlave", ""},
	{"resend-igmp", "ResendIGMP", ""},
	{"learn-packet-interval", "LearnPacketIntervalSec", ""},
}

var networkdBridgeKeys = []struct{ v2, nd, unit string }{
	{"stp", "STP", ""},
	{"forward-delay", "ForwardDelaySec", ""},
	{"hello-time", "HelloTimeSec", ""},
	{"max-age", "MaxAgeSec", ""},
	{"ageing-time", "AgeingTimeSec", ""},
	{"priority", "Priority", ""},
}

func withUnit(v any, unit string) string {
	s := ndValue(v)
	if unit == "" || s == "" {
		return s
	}
	if _, ok := asInt(v); ok {
		return s + unit
	}
	return s
}

// networkdNetdev writes the .netdev of a bond, bridge or VLAN.
func networkdNetdev(o *Output, iface *Interface) string {
	c := newINI()
	var kindSec string
	switch iface.Kind {
	case KindBond:
		c.set("NetDev", "Kind", "bond")
		kindSec = "Bond"
		for _, k := range networkdBondKeys {
			if v, ok := iface.BondParams[k.v2]; ok && v != nil {
				c.set(kindSec, k.nd, withUnit(v, k.unit))
			}
		}
		for k := range iface.BondParams {
			if k == "primary" {
				continue
			}
			if !hasKey(networkdBondKeys, k) {
				o.warnf("%s: bond parameter %s cannot be expressed by the networkd renderer; dropped", iface.Name, k)
			}
		}
	case KindBridge:
		c.set("NetDev", "Kind", "bridge")
		kindSec = "Bridge"
		for _, k := range networkdBridgeKeys {
			if v, ok := iface.BridgeParams[k.v2]; ok && v != nil {
				c.set(kindSec, k.nd, withUnit(v, k.unit))
			}
		}
	case KindVLAN:
		c.set("NetDev", "Kind", "vlan")
		c.set("VLAN", "Id", iface.VLANID)
	default:
		return ""
	}
	c.set("NetDev", "Name", iface.Name)
	if iface.MAC != "" {
		c.set("NetDev", "MACAddress", iface.MAC)
	}
	if iface.MTU != 0 {
		c.set("NetDev", "MTUBytes", iface.MTU)
	}
	return c.String()
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
