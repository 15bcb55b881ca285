package netconfig

// OpenStack network_data.json (config drive and metadata service), converted
// to network config v1 as cloud-init's convert_net_json does:
//   - links of ethernet-like types (phy, ovs, bridge, tap, vif, hw_veb,
//     hyperv, vhostuser, dvs, bgpovs, cascading, ethernet, or none) become
//     physical devices, named by `name` or by the live link with their MAC;
//     unknown types are treated as physical with a warning;
//   - bond links become bond0, bond1... with their bond_* keys as params;
//   - vlan links are named <link>.<vlan_id>;
//   - networks attach to their link: ipv4_dhcp → dhcp4, ipv6_dhcp → dhcp6,
//     ipv6_slaac and ipv6_dhcpv6-* kept, ipv4/ipv6 (and static/static6) →
//     static subnets with routes; ipv6 static turns accept-ra off, DHCPv6
//     turns it on;
//   - services of type dns become global nameservers.
// Infiniband detection (cloud-init reads /sys) is left to callers.

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
)

var openstackPhysical = sync.OnceValue(func() map[string]bool {
	return map[string]bool{
		"": true, "bgpovs": true, "bridge": true, "cascading": true, "dvs": true, "ethernet": true,
		"hw_veb": true, "hyperv": true, "ovs": true, "phy": true, "tap": true, "vhostuser": true, "vif": true,
	}
})

var openstackSubnetKeys = []string{
	"type", "address", "netmask", "broadcast", "metric", "gateway", "pointopoint", "scope",
	"dns_nameservers", "dns_search", "routes",
}

// ParseNetworkData converts OpenStack network_data.json. links resolves the
// MAC addresses of links that carry no name.
func ParseNetworkData(data []byte, links Links) (*Config, error) {
	var raw any
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("parsing network_data.json: %w", err)
	}
	doc := jsonToOmap(raw, 0)
	m := asMap(doc)
	if m == nil {
		return nil, fmt.Errorf("network_data.json is not an object: %w", ErrNoConfig)
	}
	v1, warnings, err := convertNetworkData(m, links)
	if err != nil {
		return nil, err
	}
	cfg, err := parseV1(v1, links)
	if err != nil {
		return nil, err
	}
	cfg.Warnings = append(warnings, cfg.Warnings...)
	return cfg, nil
}

func jsonToOmap(v any, depth int) any {
	if depth > 100 {
		return nil
	}
	switch x := v.(type) {
	case map[string]any:
		o := newOmap()
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			o.set(k, jsonToOmap(x[k], depth+1))
		}
		return o
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = jsonToOmap(e, depth+1)
		}
		return out
	case float64:
		// JSON numbers: whole ones are ints, as Python's json gives them.
		if x == float64(int64(x)) && x < 1<<53 && x > -(1<<53) {
			return int(x)
		}
	}
	return v
}

type osLink struct {
	id, name, mac, typ string
}

func convertNetworkData(nd *omap, links Links) (*omap, []string, error) {
	var warnings []string
	warnf := func(f string, a ...any) { warnings = append(warnings, fmt.Sprintf(f, a...)) }
	linkList, _ := mustGet(nd, "links").([]any)
	networks, _ := mustGet(nd, "networks").([]any)
	services, _ := mustGet(nd, "services").([]any)

	info := map[string]*osLink{}
	var infoOrder []string
	type update struct {
		cfg     *omap
		key     string
		fmt     string
		targets []string
		list    bool
	}
	var updates []update
	var config []*omap
	bondN := 0
	for i, l := range linkList {
		link := asMap(l)
		if link == nil {
			warnf("network_data.json links[%d] is not an object; skipped", i)
			continue
		}
		id := asString(mustGet(link, "id"))
		typ := asString(mustGet(link, "type"))
		cfg := newOmap()
		for _, k := range []string{"name", "type", "mac_address", "mtu"} {
			if v, ok := link.get(k); ok {
				cfg.set(k, v)
			}
		}
		mac := strings.ToLower(asString(mustGet(link, "ethernet_mac_address")))
		cur := &osLink{id: id, name: asString(mustGet(link, "name")), mac: mac, typ: typ}
		var subnets []any
		for _, n := range networks {
			net := asMap(n)
			if net == nil || asString(mustGet(net, "link")) != id {
				continue
			}
			sub := newOmap()
			for _, k := range openstackSubnetKeys {
				if v, ok := net.get(k); ok {
					sub.set(k, v)
				}
			}
			switch nt := asString(mustGet(net, "type")); nt {
			case "ipv4_dhcp":
				sub.set("type", "dhcp4")
			case "ipv6_dhcp":
				sub.set("type", "dhcp6")
			case "ipv6_slaac", "ipv6_dhcpv6-stateless", "ipv6_dhcpv6-stateful":
				sub.set("type", nt)
			case "ipv4", "static":
				sub.set("type", "static")
				sub.set("address", mustGet(net, "ip_address"))
			case "ipv6", "static6":
				cfg.set("accept-ra", false)
				sub.set("type", "static6")
				sub.set("address", mustGet(net, "ip_address"))
			default:
				warnf("network_data.json network %s: unknown type %q", asString(mustGet(net, "id")), nt)
			}
			switch asString(mustGet(net, "type")) {
			case "ipv6_dhcpv6-stateful", "ipv6_dhcp":
				cfg.set("accept-ra", true)
			case "ipv4":
				sub.set("ipv4", true)
			case "ipv6":
				sub.set("ipv6", true)
			}
			subnets = append(subnets, sub)
		}
		cfg.set("subnets", subnets)
		switch typ {
		case "bond":
			params := newOmap()
			if mac != "" {
				cfg.set("mac_address", mac)
			}
			for _, k := range link.keys {
				if k != "bond_links" && strings.HasPrefix(k, "bond") {
					params.set(k, link.m[k])
				}
			}
			name := fmt.Sprintf("bond%d", bondN)
			bondN++
			updates = append(updates, update{cfg: cfg, key: "bond_interfaces", fmt: "%s", targets: asList(mustGet(link, "bond_links")), list: true})
			cfg.set("params", params)
			cfg.set("name", name)
			cur.name = name
		case "vlan":
			vlink := asString(mustGet(link, "vlan_link"))
			vid := asString(mustGet(link, "vlan_id"))
			name := vlink + "." + vid
			cfg.set("name", name)
			cfg.set("vlan_id", mustGet(link, "vlan_id"))
			vmac := asString(mustGet(link, "vlan_mac_address"))
			if vmac != "" {
				cfg.set("mac_address", vmac)
			}
			updates = append(updates, update{cfg: cfg, key: "vlan_link", fmt: "%s", targets: []string{vlink}})
			updates = append(updates, update{cfg: cfg, key: "name", fmt: "%s." + vid, targets: []string{vlink}})
			cur.mac, cur.name = vmac, name
		default:
			if !openstackPhysical()[typ] {
				warnf("unknown network_data link type (%s); treating as physical", typ)
			}
			cfg.set("type", "physical")
			if mac != "" {
				cfg.set("mac_address", mac)
			} else {
				cfg.set("mac_address", nil)
			}
		}
		config = append(config, cfg)
		if _, ok := info[id]; !ok {
			infoOrder = append(infoOrder, id)
		}
		info[id] = cur
	}

	var needNames []*omap
	for _, c := range config {
		if asString(mustGet(c, "type")) == "physical" && !c.has("name") {
			needNames = append(needNames, c)
		}
	}
	if len(needNames) > 0 || len(updates) > 0 {
		for _, id := range infoOrder {
			li := info[id]
			if li.name != "" {
				continue
			}
			if n, ok := nameByMAC(links, li.mac); ok {
				li.name = n
			}
		}
		for _, d := range needNames {
			mac := asString(mustGet(d, "mac_address"))
			if mac == "" {
				return nil, warnings, fmt.Errorf("network_data.json: no mac_address or name entry for link")
			}
			n, ok := nameByMAC(links, mac)
			if !ok {
				if !validMAC(mac) { // never echo a raw value with a newline into the log
					return nil, warnings, fmt.Errorf("network_data.json: unable to find a system nic for %q: not a MAC address", mac)
				}
				return nil, warnings, fmt.Errorf("network_data.json: unable to find a system nic for %s", mac)
			}
			d.set("name", n)
		}
		for _, u := range updates {
			var vals []any
			for _, t := range u.targets {
				li, ok := info[t]
				if !ok || li.name == "" {
					return nil, warnings, fmt.Errorf("network_data.json: link %q referenced but not named", t)
				}
				vals = append(vals, fmt.Sprintf(u.fmt, li.name))
			}
			if u.list {
				u.cfg.set(u.key, vals)
			} else if len(vals) > 0 {
				u.cfg.set(u.key, vals[0])
			}
		}
	}
	var list []any
	for _, c := range config {
		list = append(list, c)
	}
	for i, s := range services {
		svc := asMap(s)
		if svc == nil {
			continue
		}
		if t := asString(mustGet(svc, "type")); t != "dns" {
			warnf("network_data.json services[%d]: type %q ignored", i, t)
			continue
		}
		ns := newOmap()
		for _, k := range svc.keys {
			ns.set(k, svc.m[k])
		}
		ns.set("type", "nameserver")
		list = append(list, ns)
	}
	out := newOmap()
	out.set("version", 1)
	out.set("config", list)
	return out, warnings, nil
}
