package netconfig

// Vultr metadata (http://169.254.169.254/v1.json) converted to network
// config v1 as cloud-init's helpers/vultr.py generate_network_config does:
//   - a global nameserver entry with Vultr's resolvers comes first;
//   - interfaces[0] is the public interface: accept-ra on, DHCPv4 and
//     SLAAC;
//   - every further interface not marked `unconfigured` is private: one
//     static subnet from ipv4.address/netmask;
//   - mtu and accept-ra are copied, routes go on the first subnet, and
//     ipv4.additional / ipv6.additional become further static / static6
//     subnets (IPv6 as network/prefix) with their routes;
//   - interfaces are matched by MAC and keep the machine's names; a MAC not
//     on the machine fails the conversion, as in cloud-init.

import (
	"fmt"
)

// VultrNameservers are the resolvers cloud-init always configures on Vultr.
var VultrNameservers = []string{"108.61.10.10", "2001:19f0:300:1704::6"}

// ConvertVultr converts Vultr's metadata document (decoded JSON) to a
// network config v1.
func ConvertVultr(metadata map[string]any, links Links) (*Config, error) {
	ifaces := listOf(metadata["interfaces"])
	ns := make([]any, len(VultrNameservers))
	for i, a := range VultrNameservers {
		ns[i] = a
	}
	config := []any{omapOf("type", "nameserver", "address", ns)}
	for i, raw := range ifaces {
		iface := mapOf(raw)
		if iface == nil {
			return nil, fmt.Errorf("vultr: interfaces[%d] is not an object", i)
		}
		if i > 0 && pyTruthy(iface["unconfigured"]) {
			continue
		}
		mac := leafString(iface["mac"])
		name, ok := nameByMAC(links, mac)
		if !ok {
			return nil, fmt.Errorf("vultr: interface %q could not be found on the system", mac)
		}
		cfg := omapOf("name", name, "type", "physical", "mac_address", mac)
		var subnets []any
		if i == 0 {
			cfg.set("accept-ra", 1)
			subnets = []any{omapOf("type", "dhcp", "control", "auto"), omapOf("type", "ipv6_slaac", "control", "auto")}
		} else {
			v4 := mapOf(iface["ipv4"])
			subnets = []any{omapOf("type", "static", "control", "auto",
				"address", leafString(v4["address"]), "netmask", leafString(v4["netmask"]))}
		}
		if v, ok := iface["mtu"]; ok {
			cfg.set("mtu", v)
		}
		if v, ok := iface["accept-ra"]; ok {
			cfg.set("accept-ra", v)
		}
		if v, ok := iface["routes"]; ok {
			asMap(subnets[0]).set("routes", jsonToOmap(v, 0))
		}
		for _, a := range listOf(mapOf(iface["ipv4"])["additional"]) {
			am := mapOf(a)
			s := omapOf("type", "static", "control", "auto",
				"address", leafString(am["address"]), "netmask", leafString(am["netmask"]))
			if r, ok := am["routes"]; ok {
				s.set("routes", jsonToOmap(r, 0))
			}
			subnets = append(subnets, s)
		}
		for _, a := range listOf(mapOf(iface["ipv6"])["additional"]) {
			am := mapOf(a)
			s := omapOf("type", "static6", "control", "auto",
				"address", leafString(am["network"])+"/"+leafString(am["prefix"]))
			if r, ok := am["routes"]; ok {
				s.set("routes", jsonToOmap(r, 0))
			}
			subnets = append(subnets, s)
		}
		cfg.set("subnets", subnets)
		config = append(config, cfg)
	}
	if len(config) == 1 {
		return nil, fmt.Errorf("vultr: no interfaces: %w", ErrNoConfig)
	}
	return finishConverted(omapOf("version", 1, "config", config), links, nil)
}
