package netconfig

// Network config version 2 (netplan's format, the subset cloud-init reads).
// The document is kept verbatim in Config.V2 for the netplan renderer; the
// model is filled the way cloud-init converts v2 to its v1 state:
//   - an ethernet's name is set-name, else the name of the link with
//     match.macaddress, else its key;
//   - dhcp4/dhcp6 become subnets (route-metric from the overrides), each
//     address a static subnet; gateway4/gateway6 go on the first address of
//     their family, nameservers on the first address, routes on the first
//     subnet;
//   - a device's nameservers are its own (interface DNS), not global (as in
//     current cloud-init; 22.4 also added them to the global DNS).

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
)

func parseV2(m *omap, links Links) (*Config, error) {
	p := &v1Parser{cfg: &Config{Version: 2, V2: m}, links: links}
	p.cfg.Rejected = scrubV2(m)
	p.cfg.Warnings = slices.Clone(p.cfg.Rejected)
	if r, ok := m.get("renderer"); ok {
		p.cfg.Renderer = asString(r)
	}
	for _, section := range m.keys {
		raw := m.m[section]
		switch section {
		case "version", "renderer":
			continue
		case "ethernets", "bonds", "bridges", "vlans":
		case "wifis":
			p.cfg.warnf("wifis: wifi configuration is only available with the netplan renderer")
			continue
		default:
			p.cfg.warnf("%s: not supported outside the netplan renderer; skipped", section)
			continue
		}
		devs := asMap(raw)
		if devs == nil {
			if raw != nil {
				p.cfg.warnf("%s: not a mapping; skipped", section)
			}
			continue
		}
		for _, key := range devs.keys {
			dev := asMap(devs.m[key])
			if dev == nil {
				dev = newOmap()
			}
			var iface *Interface
			switch section {
			case "ethernets":
				iface = p.v2Ethernet(key, dev)
			case "bonds":
				iface = p.v2BondBridge(key, dev, KindBond)
			case "bridges":
				iface = p.v2BondBridge(key, dev, KindBridge)
			case "vlans":
				iface = p.v2VLAN(key, dev)
			}
			if iface != nil {
				p.v2Common(iface, dev)
			}
		}
	}
	p.cfg.sanitize()
	return p.cfg, nil
}

func (p *v1Parser) v2Ethernet(key string, dev *omap) *Interface {
	match := asMap(mustGet(dev, "match"))
	mt := Match{
		MACAddress: asString(mustGet(match, "macaddress")),
		Name:       asString(mustGet(match, "name")),
		Driver:     asString(mustGet(match, "driver")),
	}
	name := key
	setName := asString(mustGet(dev, "set-name"))
	if setName != "" {
		name = setName
	} else if n, ok := nameByMAC(p.links, mt.MACAddress); ok {
		name = n
	}
	iface := p.ensure(name, KindPhysical)
	iface.Kind = KindPhysical
	iface.Match = mt
	iface.MAC = mt.MACAddress
	iface.Rename = setName != ""
	iface.ConfigID = key
	iface.Driver = mt.Driver
	p.v2Device(iface, dev)
	return iface
}

func (p *v1Parser) v2Device(iface *Interface, dev *omap) {
	if v, ok := dev.get("mtu"); ok && v != nil {
		if n, ok := asInt(v); ok {
			iface.MTU = n
		} else {
			p.cfg.warnf("%s: mtu %q is not a number; ignored", iface.Name, asString(v))
		}
	}
	if v, ok := dev.get("accept-ra"); ok && v != nil {
		iface.AcceptRA = boolPtr(isTrue(v))
	}
	if v, ok := dev.get("wakeonlan"); ok && v != nil {
		iface.WakeOnLAN = isTrue(v)
	}
	if v, ok := dev.get("optional"); ok && v != nil {
		iface.Optional = boolPtr(isTrue(v))
	}
	if iface.Kind != KindPhysical {
		iface.MAC = asString(mustGet(dev, "macaddress"))
	}
	iface.DHCP4 = p.overrides(iface.Name, mustGet(dev, "dhcp4-overrides"))
	iface.DHCP6 = p.overrides(iface.Name, mustGet(dev, "dhcp6-overrides"))
	iface.Subnets = p.v2Subnets(iface.Name, dev)
	iface.RoutingPolicy = p.routingPolicy(iface.Name, mustGet(dev, "routing-policy"))
}

func (p *v1Parser) v2BondBridge(key string, dev *omap, kind Kind) *Interface {
	members := asList(mustGet(dev, "interfaces"))
	if kind == KindBridge {
		for _, port := range members {
			p.ensure(port, KindPhysical)
		}
	}
	iface := p.ensure(key, kind)
	iface.Kind = kind
	p.v2Device(iface, dev)
	params := asMap(mustGet(dev, "parameters"))
	known := bondV2ToV1()
	if kind == KindBridge {
		known = bridgeV2ToV1()
	}
	pm := map[string]any{}
	if params != nil {
		for _, k := range params.keys {
			v := params.m[k]
			if k == "gratuitious-arp" { // both spellings, as netplan
				k = "gratuitous-arp"
			}
			if _, ok := known[k]; !ok {
				p.cfg.warnf("%s: unknown %s parameter %q kept only for netplan", key, kind, k)
				continue
			}
			pm[k] = v
		}
	}
	if kind == KindBond {
		iface.BondParams = pm
		for _, m := range members {
			member := p.ensure(m, KindPhysical)
			member.BondMaster = key
		}
	} else {
		iface.BridgeParams = pm
		iface.BridgePorts = members
	}
	return iface
}

func (p *v1Parser) v2VLAN(key string, dev *omap) *Interface {
	iface := p.ensure(key, KindVLAN)
	iface.Kind = KindVLAN
	id, ok := asInt(mustGet(dev, "id"))
	if !ok {
		p.cfg.warnf("%s: vlan id %q is not a number", key, asString(mustGet(dev, "id")))
	}
	iface.VLANID = id
	iface.VLANLink = asString(mustGet(dev, "link"))
	p.v2Device(iface, dev)
	return iface
}

// v2Common is cloud-init's _v2_common: nameservers go to the device.
// cloud-init skips a nameservers block without addresses.
func (p *v1Parser) v2Common(iface *Interface, dev *omap) {
	ns := asMap(mustGet(dev, "nameservers"))
	if ns == nil {
		return
	}
	d := DNS{Nameservers: asList(mustGet(ns, "addresses")), Search: asList(mustGet(ns, "search"))}
	if len(d.Nameservers) == 0 {
		p.cfg.warnf("%s: nameservers without addresses ignored (as cloud-init does)", iface.Name)
		return
	}
	iface.DNS = d
}

// v2Subnets is cloud-init's _v2_to_v1_ipcfg.
func (p *v1Parser) v2Subnets(name string, dev *omap) []Subnet {
	var out []Subnet
	if isTrue(mustGet(dev, "dhcp4")) {
		s := Subnet{Type: SubnetDHCP4}
		if o := p.overrides(name, mustGet(dev, "dhcp4-overrides")); o != nil {
			s.Metric = o.RouteMetric
		}
		out = append(out, s)
	}
	if isTrue(mustGet(dev, "dhcp6")) {
		s := Subnet{Type: SubnetDHCP6}
		if o := p.overrides(name, mustGet(dev, "dhcp6-overrides")); o != nil {
			s.Metric = o.RouteMetric
		}
		out = append(out, s)
	}
	var gw4, gw6 netip.Addr
	if g := asString(mustGet(dev, "gateway4")); g != "" {
		a, err := parseAddr(g)
		if err != nil || !a.Is4() {
			p.cfg.warnf("%s: gateway4 %q is not an IPv4 address; ignored", name, g)
		} else {
			gw4 = a
		}
	}
	if g := asString(mustGet(dev, "gateway6")); g != "" {
		a, err := parseAddr(g)
		if err != nil || !a.Is6() {
			p.cfg.warnf("%s: gateway6 %q is not an IPv6 address; ignored", name, g)
		} else {
			gw6 = a
		}
	}
	ns := asMap(mustGet(dev, "nameservers"))
	nsDone := false
	set4, set6 := false, false
	addrs, _ := mustGet(dev, "addresses").([]any)
	for _, a := range addrs {
		text := asString(a)
		if am := asMap(a); am != nil && len(am.keys) > 0 {
			text = am.keys[0] // netplan's "- 10.0.0.2/24: {lifetime: 0}"
		}
		pfx, err := parseAddrPrefix(text, "", nil)
		if err != nil {
			p.cfg.warnf("%s: %v; skipped", name, err)
			continue
		}
		s := Subnet{Type: SubnetStatic, Address: pfx}
		if pfx.Addr().Is6() {
			if gw6.IsValid() && !set6 {
				s.Gateway, set6 = gw6, true
			}
		} else if gw4.IsValid() && !set4 {
			s.Gateway, set4 = gw4, true
		}
		if ns != nil && !nsDone {
			s.DNS = DNS{Nameservers: asList(mustGet(ns, "addresses")), Search: asList(mustGet(ns, "search"))}
			nsDone = !s.DNS.empty()
		}
		out = append(out, s)
	}
	routes, _ := mustGet(dev, "routes").([]any)
	var rs []Route
	for i, r := range routes {
		rm := asMap(r)
		if rm == nil {
			p.cfg.warnf("%s: route %d is not a mapping; skipped", name, i)
			continue
		}
		rt, err := p.route(rm)
		if err != nil {
			p.cfg.warnf("%s: route %d: %v; skipped", name, i, err)
			continue
		}
		rs = append(rs, rt)
	}
	if len(rs) > 0 {
		if len(out) == 0 {
			p.cfg.warnf("%s: routes without addresses or dhcp are dropped outside netplan (as cloud-init does)", name)
		} else {
			out[0].Routes = rs
		}
	}
	return out
}

func (p *v1Parser) overrides(name string, raw any) *DHCPOverrides {
	m := asMap(raw)
	if m == nil {
		return nil
	}
	o := &DHCPOverrides{}
	for _, k := range m.keys {
		v := m.m[k]
		b, isBool := asBool(v)
		bp := func() *bool {
			if !isBool {
				p.cfg.warnf("%s: dhcp override %s %q is not a boolean; ignored", name, k, asString(v))
				return nil
			}
			return boolPtr(b)
		}
		switch k {
		case "route-metric":
			if n, ok := asInt(v); ok {
				o.RouteMetric = intPtr(n)
			} else {
				p.cfg.warnf("%s: route-metric %q is not a number; ignored", name, asString(v))
			}
		case "use-dns":
			o.UseDNS = bp()
		case "use-routes":
			o.UseRoutes = bp()
		case "use-mtu":
			o.UseMTU = bp()
		case "use-ntp":
			o.UseNTP = bp()
		case "use-hostname":
			o.UseHostname = bp()
		case "send-hostname":
			o.SendHostname = bp()
		case "hostname":
			o.Hostname = asString(v)
		case "use-domains":
			if s := strings.ToLower(asString(v)); s == "route" {
				o.UseDomains = "route"
			} else if isBool {
				o.UseDomains = fmt.Sprint(b)
			} else {
				p.cfg.warnf("%s: use-domains %q is not a boolean or \"route\"; ignored", name, asString(v))
			}
		default:
			p.cfg.warnf("%s: dhcp override %q not supported outside netplan; ignored", name, k)
		}
	}
	return o
}

func (p *v1Parser) routingPolicy(name string, raw any) []RoutingRule {
	list, _ := raw.([]any)
	var out []RoutingRule
	for i, e := range list {
		m := asMap(e)
		if m == nil {
			p.cfg.warnf("%s: routing-policy %d is not a mapping; skipped", name, i)
			continue
		}
		var r RoutingRule
		bad := false
		for _, k := range []string{"from", "to"} {
			s := asString(mustGet(m, k))
			if s == "" {
				continue
			}
			pfx, err := parseAddrPrefix(s, "", nil)
			if err != nil {
				p.cfg.warnf("%s: routing-policy %d %s: %v; skipped", name, i, k, err)
				bad = true
				break
			}
			if !strings.Contains(s, "/") {
				pfx = netip.PrefixFrom(pfx.Addr(), pfx.Addr().BitLen())
			}
			if k == "from" {
				r.From = pfx
			} else {
				r.To = pfx
			}
		}
		if bad {
			continue
		}
		if n, ok := asInt(mustGet(m, "table")); ok {
			r.Table = n
		}
		for k, dst := range map[string]**int{"priority": &r.Priority, "mark": &r.Mark, "type-of-service": &r.TypeOfService} {
			if v, ok := m.get(k); ok && v != nil {
				if n, ok := asInt(v); ok {
					*dst = intPtr(n)
				}
			}
		}
		out = append(out, r)
	}
	return out
}
