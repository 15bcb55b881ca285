package netconfig

// DigitalOcean metadata (http://169.254.169.254/metadata/v1.json) converted
// to network config v1 as cloud-init's helpers/digitalocean.py
// convert_network_configuration does:
//   - for each interface type under `interfaces` (public, private, then any
//     other, sorted), only its first entry is used; its MAC must be on the
//     machine (else the conversion fails, as in cloud-init);
//   - public is named eth0 and private eth1 (renamed by MAC), any other
//     type keeps the machine's name;
//   - ipv4, ipv6, anchor_ipv4, anchor_ipv6 each become a static subnet
//     (control auto): IPv4 with ip_address and netmask, IPv6 as
//     ip_address/cidr; the gateway is kept only on the public interface's
//     non-anchor subnets;
//   - dns.nameservers become a global nameserver entry.

import (
	"fmt"
	"strings"
	"sync"
)

// digitalOceanNames are the names cloud-init gives interface types.
var digitalOceanNames = sync.OnceValue(func() map[string]string {
	return map[string]string{"public": "eth0", "private": "eth1"}
})

// ConvertDigitalOcean converts DigitalOcean's metadata document (decoded
// JSON) to a network config v1.
func ConvertDigitalOcean(metadata map[string]any, links Links) (*Config, error) {
	ifaces := mapOf(metadata["interfaces"])
	var types []string
	for _, t := range []string{"public", "private"} {
		if _, ok := ifaces[t]; ok {
			types = append(types, t)
		}
	}
	for _, t := range sortedKeys(ifaces) {
		if t != "public" && t != "private" {
			types = append(types, t)
		}
	}
	var config []any
	for _, t := range types {
		list := listOf(ifaces[t])
		if len(list) == 0 {
			continue
		}
		nic := mapOf(list[0])
		mac := leafString(nic["mac"])
		sysName, ok := nameByMAC(links, mac)
		if !ok {
			return nil, fmt.Errorf("digitalocean: no interface with MAC %q on this machine for the %s interface", mac, t)
		}
		nicType := leafString(nic["type"])
		if nicType == "" {
			nicType = "unknown"
		}
		name, ok := digitalOceanNames()[nicType]
		if !ok {
			name = sysName
		}
		var subnets []any
		for _, def := range []string{"ipv4", "ipv6", "anchor_ipv4", "anchor_ipv6"} {
			raw := mapOf(nic[def])
			if len(raw) == 0 {
				continue
			}
			ip := leafString(raw["ip_address"])
			s := omapOf("type", "static", "control", "auto", "address", ip)
			if strings.Contains(ip, ":") {
				s.set("address", ip+"/"+leafString(raw["cidr"]))
			} else if nm := leafString(raw["netmask"]); nm != "" {
				s.set("netmask", nm)
			}
			if gw := leafString(raw["gateway"]); gw != "" && nicType == "public" && !strings.Contains(def, "anchor") {
				s.set("gateway", gw)
			}
			subnets = append(subnets, s)
		}
		if subnets == nil {
			subnets = []any{}
		}
		config = append(config, omapOf("type", "physical", "mac_address", mac, "name", name, "subnets", subnets))
	}
	dns := mapOf(metadata["dns"])
	if ns := strList(dns["nameservers"]); len(ns) > 0 {
		addrs := make([]any, len(ns))
		for i, a := range ns {
			addrs[i] = a
		}
		config = append(config, omapOf("type", "nameserver", "address", addrs))
	}
	if len(config) == 0 {
		return nil, fmt.Errorf("digitalocean: no interfaces: %w", ErrNoConfig)
	}
	return finishConverted(omapOf("version", 1, "config", config), links, nil)
}
