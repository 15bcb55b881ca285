package netconfig

// The netplan renderer writes /etc/netplan/50-cloud-init.yaml (0600: it may
// hold secrets). v2 input is passed through verbatim, as cloud-init does;
// v1 (and everything converted to v1: network_data.json, ENI) is rendered
// from the model the way cloud-init's netplan.py does. Running
// `netplan generate` is the caller's business.

import (
	"fmt"
	"strings"
)

// NetplanPath is where cloud-init writes netplan config.
const NetplanPath = "/etc/netplan/50-cloud-init.yaml"

// RenderNetplan renders cfg as netplan YAML.
func RenderNetplan(cfg *Config) (*Output, error) {
	if err := checkSafe(cfg); err != nil {
		return nil, fmt.Errorf("rendering netplan: %w", err)
	}
	o := newOutput()
	if cfg.Version == 2 && cfg.V2 != nil {
		o.add(NetplanPath, Header+dumpYAML(map[string]any{"network": cfg.V2}), 0o600)
		return o, nil
	}
	sections := map[string]map[string]any{
		"ethernets": {}, "bonds": {}, "bridges": {}, "vlans": {},
	}
	for _, iface := range cfg.Interfaces {
		entry := map[string]any{}
		var section string
		switch iface.Kind {
		case KindPhysical:
			section = "ethernets"
			if iface.MAC != "" {
				entry["set-name"] = iface.Name
				entry["match"] = map[string]any{"macaddress": strings.ToLower(iface.MAC)}
			}
			if iface.WakeOnLAN {
				entry["wakeonlan"] = true
			}
		case KindBond:
			section = "bonds"
			if len(iface.BondParams) > 0 {
				entry["parameters"] = copyParams(iface.BondParams)
			}
			if iface.MAC != "" {
				entry["macaddress"] = strings.ToLower(iface.MAC)
			}
			if members := cfg.bondMembers(iface.Name); len(members) > 0 {
				entry["interfaces"] = members
			}
		case KindBridge:
			section = "bridges"
			ports := append([]string{}, iface.BridgePorts...)
			sortStrings(ports)
			entry["interfaces"] = ports
			if len(iface.BridgeParams) > 0 {
				entry["parameters"] = copyParams(iface.BridgeParams)
			}
			if iface.MAC != "" {
				entry["macaddress"] = strings.ToLower(iface.MAC)
			}
		case KindVLAN:
			section = "vlans"
			entry["id"] = iface.VLANID
			entry["link"] = iface.VLANLink
			if iface.MAC != "" {
				entry["macaddress"] = strings.ToLower(iface.MAC)
			}
		default:
			// loopback and infiniband have no netplan form (as in cloud-init).
			if iface.Kind == KindInfiniband {
				o.warnf("%s: infiniband devices cannot be expressed by the netplan renderer; dropped", iface.Name)
			}
			continue
		}
		netplanAddresses(o, iface, entry)
		sections[section][iface.Name] = entry
	}
	if len(cfg.Routes) > 0 {
		o.warnf("global routes (v1 type: route) cannot be expressed by the netplan renderer; dropped (as cloud-init does)")
	}
	if !cfg.DNS.empty() {
		ns := map[string]any{"addresses": stringsAny(cfg.DNS.Nameservers), "search": stringsAny(cfg.DNS.Search)}
		for _, name := range []string{"ethernets", "bonds", "bridges", "vlans"} {
			for _, e := range sections[name] {
				entry := e.(map[string]any)
				_, hasNS := entry["nameservers"]
				_, hasAddr := entry["addresses"]
				if hasNS || !hasAddr {
					continue
				}
				entry["nameservers"] = ns
			}
		}
	}
	var b strings.Builder
	b.WriteString(Header)
	b.WriteString("network:\n    version: 2\n")
	for _, name := range []string{"ethernets", "wifis", "bonds", "bridges", "vlans"} {
		sec := sections[name]
		if len(sec) == 0 {
			continue
		}
		dump := dumpYAML(map[string]any{name: sec})
		for _, line := range strings.SplitAfter(dump, "\n") {
			if strings.TrimSpace(line) != "" {
				b.WriteString("    ")
			}
			b.WriteString(line)
		}
	}
	o.add(NetplanPath, b.String(), 0o600)
	return o, nil
}

func stringsAny(s []string) []any {
	out := make([]any, len(s))
	for i, x := range s {
		out[i] = x
	}
	return out
}

func copyParams(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if om, ok := v.(*omap); ok {
			v = om
		}
		out[k] = v
	}
	return out
}

// netplanAddresses is cloud-init's _extract_addresses.
func netplanAddresses(o *Output, iface *Interface, entry map[string]any) {
	var addresses, nameservers, search []any
	var routes []any
	for _, s := range iface.Subnets {
		switch {
		case s.IsDHCP4():
			entry["dhcp4"] = true
			if s.Metric != nil {
				entry["dhcp4-overrides"] = map[string]any{"route-metric": *s.Metric}
			}
		case s.Type == SubnetDHCP6:
			entry["dhcp6"] = true
			if s.Metric != nil {
				entry["dhcp6-overrides"] = map[string]any{"route-metric": *s.Metric}
			}
		case s.isIPv6Dynamic():
			// netplan has no SLAAC-only or stateless switch; cloud-init
			// writes dhcp6: true for all of them.
			entry["dhcp6"] = true
		case s.IsStatic():
			if s.Gateway.IsValid() {
				// A default route (gateway4/gateway6 are deprecated),
				// on-link when the gateway is outside the subnet.
				nr := map[string]any{"to": "default", "via": s.Gateway.String()}
				if !s.Address.Masked().Contains(s.Gateway) {
					nr["on-link"] = true
				}
				if s.Metric != nil {
					nr["metric"] = *s.Metric
				}
				routes = append(routes, nr)
			}
			nameservers = append(nameservers, stringsAny(s.DNS.Nameservers)...)
			search = append(search, stringsAny(s.DNS.Search)...)
			if s.MTU != 0 {
				if s.IsIPv6() {
					entry["ipv6-mtu"] = s.MTU
				} else {
					entry["mtu"] = s.MTU
				}
			}
			addresses = append(addresses, addrCIDR(s.Address))
		}
		for _, r := range s.Routes {
			nr := map[string]any{"to": r.To.String()}
			if r.Via.IsValid() {
				nr["via"] = r.Via.String()
			}
			if r.Metric != nil {
				nr["metric"] = *r.Metric
			} else if s.Metric != nil && s.IsStatic() {
				nr["metric"] = *s.Metric
			}
			if r.Table != 0 {
				nr["table"] = r.Table
			}
			if r.OnLink {
				nr["on-link"] = true
			}
			routes = append(routes, nr)
		}
	}
	if iface.MTU != 0 {
		if m, ok := entry["mtu"]; ok && m != iface.MTU {
			o.warnf("%s: ignoring device-level mtu %d because ipv4 subnet-level mtu %v is provided", iface.Name, iface.MTU, m)
		} else {
			entry["mtu"] = iface.MTU
		}
	}
	if len(addresses) > 0 {
		entry["addresses"] = addresses
	}
	if len(routes) > 0 {
		entry["routes"] = routes
	}
	if len(nameservers) == 0 && len(search) == 0 && !iface.DNS.empty() {
		// v1 `nameserver` with interface: (cloud-init drops it here).
		nameservers, search = stringsAny(iface.DNS.Nameservers), stringsAny(iface.DNS.Search)
	}
	if len(nameservers) > 0 || len(search) > 0 {
		ns := map[string]any{}
		if len(nameservers) > 0 {
			ns["addresses"] = nameservers
		}
		if len(search) > 0 {
			ns["search"] = search
		}
		entry["nameservers"] = ns
	}
	if iface.AcceptRA != nil {
		entry["accept-ra"] = *iface.AcceptRA
	}
}
