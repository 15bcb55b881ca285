package netconfig

// The sysconfig renderer writes RHEL network-scripts as cloud-init 26.x's
// sysconfig.py does (rhel flavor): ifcfg-<if> per non-loopback device,
// route-<if>/route6-<if> when a subnet has routes, /etc/sysconfig/network,
// and, when there is any DNS (global, per interface or per subnet),
// /etc/resolv.conf and a NetworkManager drop-in telling NM to leave
// resolv.conf alone, plus the udev rules naming devices by MAC. Keys are
// sorted; values with spaces are quoted.
//
// Not expressible: routing policy, route tables, on-link, global routes (v1
// `type: route`, which cloud-init also drops here).

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Paths of the sysconfig renderer.
const (
	SysconfigNetworkPath = "/etc/sysconfig/network"
	SysconfigScriptsDir  = "/etc/sysconfig/network-scripts/"
	ResolvConfPath       = "/etc/resolv.conf"
	NMDNSConfPath        = "/etc/NetworkManager/conf.d/99-cloud-init.conf"
)

const sysconfigHeader = "# Created by cloud-init automatically, do not edit.\n#"

// sysconfigMap is an ifcfg file: KEY=value, written sorted.
type sysconfigMap map[string]any

func (m sysconfigMap) String() string {
	var b strings.Builder
	b.WriteString(sysconfigHeader)
	if len(m) > 0 {
		b.WriteString("\n")
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := m[k]
		if k == "TYPE" && v == "Vlan" {
			continue
		}
		fmt.Fprintf(&b, "%s=%s\n", k, sysconfigQuote(sysconfigValue(v)))
	}
	return b.String()
}

func sysconfigValue(v any) string {
	switch x := v.(type) {
	case bool:
		if x {
			return "yes"
		}
		return "no"
	}
	return renderValue(v)
}

func sysconfigQuote(s string) string {
	if strings.ContainsAny(s, " \t\n\r\f\v") {
		if strings.HasPrefix(s, `"`) && strings.HasSuffix(s, `"`) && len(s) > 1 {
			return s
		}
		return `"` + s + `"`
	}
	return s
}

// sysconfigRoutes is a route-<if> file under construction.
type sysconfigRoutes struct {
	conf                map[string]any
	lastIdx             int
	defaultV4, default6 bool
}

func (r *sysconfigRoutes) ipv4(name string) string {
	var b strings.Builder
	b.WriteString(sysconfigHeader)
	if len(r.conf) > 0 {
		b.WriteString("\n")
	}
	reindex := -1
	for _, key := range sortedAddressKeys(r.conf) {
		idx := strings.TrimPrefix(key, "ADDRESS")
		addr := renderValue(r.conf[key])
		if strings.Contains(addr, ":") {
			continue
		}
		reindex++
		fmt.Fprintf(&b, "ADDRESS%d=%s\n", reindex, sysconfigQuote(addr))
		if g, ok := r.conf["GATEWAY"+idx]; ok {
			fmt.Fprintf(&b, "GATEWAY%d=%s\n", reindex, sysconfigQuote(renderValue(g)))
		}
		if m, ok := r.conf["NETMASK"+idx]; ok {
			fmt.Fprintf(&b, "NETMASK%d=%s\n", reindex, sysconfigQuote(renderValue(m)))
		}
		if m, ok := r.conf["METRIC"+idx]; ok {
			fmt.Fprintf(&b, "METRIC%d=%s\n", reindex, sysconfigQuote(renderValue(m)))
		}
	}
	return b.String()
}

func (r *sysconfigRoutes) ipv6(name string) string {
	var b strings.Builder
	b.WriteString(sysconfigHeader)
	if len(r.conf) > 0 {
		b.WriteString("\n")
	}
	for _, key := range sortedAddressKeys(r.conf) {
		idx := strings.TrimPrefix(key, "ADDRESS")
		addr := renderValue(r.conf[key])
		if !strings.Contains(addr, ":") {
			continue
		}
		metric := ""
		if m, ok := r.conf["METRIC"+idx]; ok {
			metric = "metric " + renderValue(m)
		}
		via := ""
		if g, ok := r.conf["GATEWAY"+idx]; ok {
			via = " via " + renderValue(g)
		}
		fmt.Fprintf(&b, "%s/%s%s %s dev %s\n", addr, renderValue(r.conf["PREFIX"+idx]), via, metric, name)
	}
	return b.String()
}

func sortedAddressKeys(m map[string]any) []string {
	var ks []string
	for k := range m {
		if strings.Contains(k, "ADDRESS") {
			ks = append(ks, k)
		}
	}
	sort.Strings(ks)
	return ks
}

// bond options in cloud-init's order, by v2 name.
var sysconfigBondOpts = []struct{ v2, tpl string }{
	{"mode", "mode=%s"},
	{"transmit-hash-policy", "xmit_hash_policy=%s"},
	{"mii-monitor-interval", "miimon=%s"},
	{"min-links", "min_links=%s"},
	{"arp-interval", "arp_interval=%s"},
	{"arp-ip-target", "arp_ip_target=%s"},
	{"arp-validate", "arp_validate=%s"},
	{"ad-select", "ad_select=%s"},
	{"gratuitous-arp", "num_grat_arp=%s"},
	{"down-delay", "downdelay=%s"},
	{"up-delay", "updelay=%s"},
	{"lacp-rate", "lacp_rate=%s"},
	{"fail-over-mac-policy", "fail_over_mac=%s"},
	{"primary", "primary=%s"},
	{"primary-reselect-policy", "primary_reselect=%s"},
}

// RenderSysconfig renders cfg as RHEL network-scripts.
func RenderSysconfig(cfg *Config) (*Output, error) {
	if err := checkSafe(cfg); err != nil {
		return nil, fmt.Errorf("rendering sysconfig: %w", err)
	}
	o := newOutput()
	unsupported(o, cfg, RendererSysconfig, true, true)
	cfg = mainTableOnly(cfg)
	if len(cfg.Routes) > 0 {
		o.warnf("global routes (v1 type: route) cannot be expressed by the sysconfig renderer; dropped (as cloud-init does)")
	}
	type entry struct {
		iface  *Interface
		m      sysconfigMap
		routes *sysconfigRoutes
	}
	var order []*entry
	byName := map[string]*entry{}
	for _, iface := range cfg.Interfaces {
		if iface.Kind == KindLoopback {
			continue
		}
		m := sysconfigMap{"DEVICE": iface.Name, "TYPE": "Ethernet",
			"ONBOOT": true, "USERCTL": false, "BOOTPROTO": "none"}
		if iface.MAC != "" && (iface.Kind == KindPhysical || iface.Kind == KindInfiniband) {
			m["HWADDR"] = iface.MAC
		}
		if iface.MTU != 0 {
			m["MTU"] = iface.MTU
		}
		if iface.AcceptRA != nil {
			m["IPV6_FORCE_ACCEPT_RA"] = *iface.AcceptRA
		}
		if iface.WakeOnLAN && iface.Kind == KindPhysical {
			m["ETHTOOL_OPTS"] = "wol g"
		}
		e := &entry{iface: iface, m: m, routes: &sysconfigRoutes{conf: map[string]any{}, lastIdx: 1}}
		order = append(order, e)
		byName[iface.Name] = e
	}
	hasDefault := cfg.HasDefaultRoute()
	subnets := func(e *entry) error {
		sysconfigSubnets(o, e.m, e.iface, hasDefault)
		return sysconfigSubnetRoutes(e.m, e.routes, e.iface)
	}
	// Same passes as cloud-init: physical, bond, vlan, bridge, infiniband.
	for _, kind := range []Kind{KindPhysical, KindBond, KindVLAN, KindBridge, KindInfiniband} {
		for _, e := range order {
			iface := e.iface
			if iface.Kind != kind {
				continue
			}
			switch kind {
			case KindBond:
				var opts []string
				for _, b := range sysconfigBondOpts {
					if v, ok := iface.BondParams[b.v2]; ok {
						opts = append(opts, fmt.Sprintf(b.tpl, renderValue(v)))
					}
				}
				if len(opts) > 0 {
					e.m["BONDING_OPTS"] = strings.Join(opts, " ")
				}
				e.m["BONDING_MASTER"] = true
				e.m["TYPE"] = "Bond"
				if iface.MAC != "" {
					e.m["MACADDR"] = iface.MAC
				}
			case KindVLAN:
				e.m["VLAN"] = true
				e.m["TYPE"] = "Vlan"
				e.m["PHYSDEV"] = iface.VLANLink
			case KindBridge:
				e.m["TYPE"] = "Bridge"
				if v, ok := iface.BridgeParams["stp"]; ok {
					e.m["STP"] = v
				}
				if v, ok := iface.BridgeParams["ageing-time"]; ok {
					e.m["AGEING"] = v
				}
				if v, ok := iface.BridgeParams["priority"]; ok {
					e.m["PRIO"] = v
				}
				if iface.MAC != "" {
					e.m["MACADDR"] = iface.MAC
				}
				for _, port := range iface.BridgePorts {
					if pe := byName[port]; pe != nil {
						pe.m["BRIDGE"] = iface.Name
					}
				}
			case KindInfiniband:
				e.m["TYPE"] = "InfiniBand"
			}
			if err := subnets(e); err != nil {
				return nil, err
			}
			if kind == KindBond {
				for i, member := range cfg.bondMembers(iface.Name) {
					e.m[fmt.Sprintf("BONDING_SLAVE%d", i)] = member
					if me := byName[member]; me != nil {
						me.m["MASTER"] = iface.Name
						me.m["SLAVE"] = true
					}
				}
			}
		}
	}
	for _, e := range order {
		name := e.iface.Name
		o.add(SysconfigScriptsDir+"ifcfg-"+name, e.m.String(), 0o644)
		if len(e.routes.conf) > 0 {
			o.add(SysconfigScriptsDir+"route-"+name, e.routes.ipv4(name), 0o644)
			o.add(SysconfigScriptsDir+"route6-"+name, e.routes.ipv6(name), 0o644)
		}
	}
	if dns, ifaceDNS := sysconfigDNS(cfg); !dns.empty() {
		o.add(ResolvConfPath, resolvConf(o, dns), 0o644)
		if !cfg.DNS.empty() || ifaceDNS {
			o.add(NMDNSConfPath, sysconfigHeader+"\n[main]\ndns = none\n", 0o644)
		}
	}
	o.add(UdevRulesPath, udevRules(cfg), 0o644)
	netcfg := sysconfigHeader + "\nNETWORKING=yes\n"
	if cfg.UseIPv6() {
		netcfg += "NETWORKING_IPV6=yes\nIPV6_AUTOCONF=no\n"
	}
	o.add(SysconfigNetworkPath, netcfg, 0o644)
	return o, nil
}

// sysconfigDNS is what cloud-init's _render_dns puts in resolv.conf: every
// interface's subnet DNS, then its interface DNS, then the global DNS; and
// whether any interface or subnet had DNS (the NetworkManager drop-in).
func sysconfigDNS(cfg *Config) (DNS, bool) {
	var d DNS
	ifaceDNS := false
	addNew := func(list []string, more []string) []string {
		for _, x := range more {
			if !slices.Contains(list, x) {
				list = append(list, x)
			}
		}
		return list
	}
	for _, i := range cfg.Interfaces {
		for _, s := range i.Subnets {
			d.Nameservers = append(d.Nameservers, s.DNS.Nameservers...)
			d.Search = append(d.Search, s.DNS.Search...)
			ifaceDNS = ifaceDNS || !s.DNS.empty()
		}
		d.Nameservers = addNew(d.Nameservers, i.DNS.Nameservers)
		d.Search = addNew(d.Search, i.DNS.Search)
		ifaceDNS = ifaceDNS || !i.DNS.empty()
	}
	d.Nameservers = addNew(d.Nameservers, cfg.DNS.Nameservers)
	d.Search = addNew(d.Search, cfg.DNS.Search)
	return d, ifaceDNS
}

// resolvConf writes a fresh resolv.conf as cloud-init's ResolvConf does:
// every nameserver once (the resolver reads the first 3), at most 6 search
// domains in 256 characters (cloud-init fails beyond; cloudroot warns).
func resolvConf(o *Output, d DNS) string {
	var b strings.Builder
	b.WriteString("; Created by cloud-init automatically, do not edit.\n;\n")
	var ns []string
	for _, n := range d.Nameservers {
		if !slices.Contains(ns, n) {
			ns = append(ns, n)
		}
	}
	for _, n := range ns {
		b.WriteString("nameserver " + n + "\n")
	}
	var search []string
	seen := map[string]bool{}
	for _, s := range d.Search {
		if seen[s] {
			continue
		}
		if len(search) >= 6 || len(strings.Join(append(search, s), " ")) > 256 {
			o.warnf("ignoring search domain %s: resolv.conf holds at most 6 domains in 256 characters", s)
			continue
		}
		seen[s] = true
		search = append(search, s)
	}
	if len(search) > 0 {
		b.WriteString("search " + strings.Join(search, " ") + "\n")
	}
	return b.String()
}

// sysconfigSubnets is cloud-init's _render_subnets (rhel flavor).
func sysconfigSubnets(o *Output, m sysconfigMap, iface *Interface, hasDefault bool) {
	m["BOOTPROTO"] = "none"
	for _, s := range iface.Subnets {
		mtuKey := "MTU"
		switch {
		case s.Type == SubnetDHCP6Stateful:
			m["DHCPV6C"] = true
			m["IPV6INIT"] = true
			m["IPV6_AUTOCONF"] = false
			m["IPV6_FAILURE_FATAL"] = true
		case s.Type == SubnetDHCP6:
			m["IPV6INIT"] = true
			m["DHCPV6C"] = true
		case s.Type == SubnetDHCP6Stateless:
			m["IPV6INIT"] = true
			m["IPV6_AUTOCONF"] = true
			m["DHCPV6C"] = true
			m["DHCPV6C_OPTIONS"] = "-S"
		case s.Type == SubnetSLAAC:
			m["IPV6INIT"] = true
			m["IPV6_AUTOCONF"] = true
		case s.IsDHCP4():
			m["BOOTPROTO"] = "dhcp"
		case s.IsStatic():
			if s.IsIPv6() {
				mtuKey = "IPV6_MTU"
				m["IPV6INIT"] = true
			}
			if s.MTU != 0 {
				if old, ok := m[mtuKey]; ok && old != s.MTU {
					o.warnf("%s: ignoring device-level mtu %v because subnet-level mtu %d is provided", iface.Name, old, s.MTU)
				}
				m[mtuKey] = s.MTU
			}
			if s.IsIPv6() {
				m["IPV6_FORCE_ACCEPT_RA"] = false
				m["IPV6_AUTOCONF"] = false
			}
		case s.Type == SubnetManual:
			_, has := m[mtuKey]
			m["ONBOOT"] = has
		}
		if s.Control == "manual" {
			m["ONBOOT"] = false
		}
	}
	v4, v6 := -1, -1
	for _, s := range iface.Subnets {
		if s.Metric != nil {
			m[routeMetricKey(s)] = *s.Metric
		}
		switch {
		case s.IsDHCP4():
			if hasDefault && m["BOOTPROTO"] != "none" {
				m["DHCLIENT_SET_DEFAULT_ROUTE"] = false
			}
			continue
		case s.isIPv6Dynamic():
			continue
		case s.IsStatic():
			if s.IsIPv6() {
				v6++
				cidr := addrCIDR(s.Address)
				switch v6 {
				case 0:
					m["IPV6ADDR"] = cidr
				case 1:
					m["IPV6ADDR_SECONDARIES"] = cidr
				default:
					m["IPV6ADDR_SECONDARIES"] = renderValue(m["IPV6ADDR_SECONDARIES"]) + " " + cidr
				}
			} else {
				v4++
				suffix := ""
				if v4 > 0 {
					suffix = fmt.Sprint(v4)
				}
				m["IPADDR"+suffix] = s.Address.Addr().String()
				m["NETMASK"+suffix] = ipv4Mask(s.Address.Bits())
			}
			if s.Gateway.IsValid() {
				m["DEFROUTE"] = true
				if s.Gateway.Is6() {
					m["IPV6_DEFAULTGW"] = s.Gateway.String()
				} else {
					m["GATEWAY"] = s.Gateway.String()
				}
			}
			if len(s.DNS.Search) > 0 {
				m["DOMAIN"] = strings.Join(s.DNS.Search, " ")
			}
			for i, n := range s.DNS.Nameservers {
				if i >= 3 {
					break
				}
				m[fmt.Sprintf("DNS%d", i+1)] = n
			}
		}
	}
}

// routeMetricKey is where the rhel flavour puts a subnet's or default
// route's metric.
func routeMetricKey(s Subnet) string {
	if s.IsIPv6() {
		return "IPV6_ROUTE_METRIC"
	}
	return "IPV4_ROUTE_METRIC"
}

// sysconfigSubnetRoutes is cloud-init's _render_subnet_routes.
func sysconfigSubnetRoutes(m sysconfigMap, rc *sysconfigRoutes, iface *Interface) error {
	for _, s := range iface.Subnets {
		for _, r := range s.Routes {
			isV6 := s.IPv6 || (r.Via.IsValid() && r.Via.Is6()) || (!r.Via.IsValid() && r.To.Addr().Is6())
			if r.IsDefault() && !s.isIPv6Dynamic() {
				if (s.IPv4 && rc.defaultV4) || (s.IPv6 && rc.default6) {
					return fmt.Errorf("duplicate declaration of default route found for interface %q", iface.Name)
				}
				m["DEFROUTE"] = true
				if bp := m["BOOTPROTO"]; bp == "dhcp" || bp == "dhcp4" {
					m["DHCLIENT_SET_DEFAULT_ROUTE"] = true
				}
				if r.Via.IsValid() {
					if isV6 {
						m["IPV6_DEFAULTGW"] = r.Via.String()
						rc.default6 = true
					} else {
						m["GATEWAY"] = r.Via.String()
						rc.defaultV4 = true
					}
				}
				if r.Metric != nil {
					m[routeMetricKey(s)] = *r.Metric
				}
				continue
			}
			idx := rc.lastIdx
			if r.Via.IsValid() {
				rc.conf[fmt.Sprintf("GATEWAY%d", idx)] = r.Via.String()
			}
			if r.Metric != nil {
				rc.conf[fmt.Sprintf("METRIC%d", idx)] = *r.Metric
			}
			rc.conf[fmt.Sprintf("PREFIX%d", idx)] = r.To.Bits()
			if r.To.Addr().Is4() {
				rc.conf[fmt.Sprintf("NETMASK%d", idx)] = ipv4Mask(r.To.Bits())
			}
			rc.conf[fmt.Sprintf("ADDRESS%d", idx)] = netString(r.To)
			rc.lastIdx++
		}
	}
	return nil
}
