package netconfig

// UpCloud metadata (http://169.254.169.254/metadata/v1.json, key
// `network`) converted to network config v1 as cloud-init's
// helpers/upcloud.py convert_to_network_config_v1 does:
//   - every interface's MAC must be on the machine (else the conversion
//     fails, as in cloud-init) and gives its name;
//   - each ip_addresses entry is a subnet: dhcp for DHCP IPv4,
//     ipv6_dhcpv6-stateless for DHCP IPv6 (UpCloud uses SLAAC), otherwise
//     static / static6 (control auto) with address, gateway when set, the
//     prefix of network as netmask, and its dns as dns_nameservers when
//     they differ from the global list;
//   - the global dns list becomes a nameserver entry.

import (
	"fmt"
	"reflect"
	"strings"
)

// ConvertUpCloud converts UpCloud's network metadata (the `network` value,
// or the whole metadata document holding it) to a network config v1.
func ConvertUpCloud(metadata map[string]any, links Links) (*Config, error) {
	network := metadata
	if n := mapOf(metadata["network"]); n != nil {
		network = n
	}
	dns := network["dns"]
	var config []any
	for i, raw := range listOf(network["interfaces"]) {
		iface := mapOf(raw)
		if iface == nil {
			return nil, fmt.Errorf("upcloud: interfaces[%d] is not an object", i)
		}
		mac := leafString(iface["mac"])
		name, ok := nameByMAC(links, mac)
		if !ok {
			return nil, fmt.Errorf("upcloud: did not find network interface on system with mac %q", mac)
		}
		subnets := []any{}
		for j, ra := range listOf(iface["ip_addresses"]) {
			ip := mapOf(ra)
			if ip == nil {
				return nil, fmt.Errorf("upcloud: interfaces[%d].ip_addresses[%d] is not an object", i, j)
			}
			v6 := leafString(ip["family"]) == "IPv6"
			if pyTruthy(ip["dhcp"]) {
				t := "dhcp"
				if v6 {
					t = "ipv6_dhcpv6-stateless"
				}
				subnets = append(subnets, omapOf("type", t))
				continue
			}
			t := "static"
			if v6 {
				t = "static6"
			}
			s := omapOf("type", t, "control", "auto", "address", ip["address"])
			if pyTruthy(ip["gateway"]) {
				s.set("gateway", ip["gateway"])
			}
			netw, ok := ip["network"].(string)
			if !ok {
				return nil, fmt.Errorf("upcloud: interfaces[%d].ip_addresses[%d] has no network", i, j)
			}
			if _, pfx, ok := strings.Cut(netw, "/"); ok {
				if k := strings.Index(pfx, "/"); k >= 0 {
					pfx = pfx[:k]
				}
				s.set("netmask", pfx)
			}
			if pyTruthy(ip["dns"]) && !reflect.DeepEqual(ip["dns"], dns) {
				s.set("dns_nameservers", jsonToOmap(ip["dns"], 0))
			}
			subnets = append(subnets, s)
		}
		config = append(config, omapOf("type", "physical", "name", name, "mac_address", mac, "subnets", subnets))
	}
	if pyTruthy(dns) {
		config = append(config, omapOf("type", "nameserver", "address", jsonToOmap(dns, 0)))
	}
	if len(config) == 0 {
		return nil, fmt.Errorf("upcloud: no interfaces: %w", ErrNoConfig)
	}
	return finishConverted(omapOf("version", 1, "config", config), links, nil)
}
