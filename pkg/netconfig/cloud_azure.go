package netconfig

// Azure IMDS network metadata
// (http://169.254.169.254/metadata/instance?api-version=..., key
// `network`) converted to network config v2 as cloud-init's DataSourceAzure
// generate_network_config_from_instance_network_metadata does:
//   - interface[idx] becomes eth<idx>, matched by its macAddress (IMDS gives
//     it as 12 hex digits without colons, e.g. 000D3A047598; it is
//     normalised to 00:0d:3a:04:75:98) and set-name'd eth<idx>;
//   - every interface gets dhcp4: true with dhcp4-overrides.route-metric
//     100×(idx+1) and dhcp6: false; when it has IPv6 addresses, dhcp6: true
//     with the same overrides;
//   - the first address of each family comes from DHCP, every further one
//     (ipAddress[1:].privateIpAddress) is a static address with the prefix
//     of the family's first subnet (default /24 for IPv4, /128 for IPv6);
//   - an interface without any IPv4 or IPv6 address is skipped (its index
//     is still used up, so names and metrics keep their positions).
// cloud-init adds match.driver with the driver the machine reports for the
// MAC (hv_netvsc); a pure converter cannot look, so it is added only when
// the Links also implement LinkDrivers.

import (
	"fmt"
	"strings"
)

// AzureRouteMetricStep is the route-metric of eth0; eth<i> gets (i+1) times
// it.
const AzureRouteMetricStep = 100

// LinkDrivers is optionally implemented by Links that know the kernel
// driver of an interface (by MAC); the Azure converter uses it for
// match.driver.
type LinkDrivers interface {
	DriverByMAC(mac string) (string, bool)
}

// normalizeAzureMAC is cloud-init's normalize_mac_address: 12 characters
// get colons every two, and the result is lower case.
func normalizeAzureMAC(mac string) string {
	if len(mac) == 12 {
		parts := make([]string, 6)
		for i := range parts {
			parts[i] = mac[2*i : 2*i+2]
		}
		mac = strings.Join(parts, ":")
	}
	return strings.ToLower(mac)
}

// ConvertAzure converts Azure's IMDS network metadata to a network config
// v2. imds is either the whole instance metadata document (with a `network`
// key, which is what cloud-init's net-convert -k azure-imds reads) or its
// `network` value (with an `interface` list).
func ConvertAzure(imds map[string]any, links Links) (*Config, error) {
	network := imds
	if n, ok := imds["network"]; ok {
		network = mapOf(n)
		if network == nil {
			return nil, fmt.Errorf("azure: network is not an object")
		}
	}
	rawIfaces, ok := network["interface"]
	if !ok {
		return nil, fmt.Errorf("azure: metadata has no network.interface: %w", ErrNoConfig)
	}
	ifaces, isList := rawIfaces.([]any)
	if !isList && rawIfaces != nil {
		return nil, fmt.Errorf("azure: network.interface is not a list")
	}
	var warnings []string
	ethernets := newOmap()
	for idx, raw := range ifaces {
		intf := mapOf(raw)
		if intf == nil {
			return nil, fmt.Errorf("azure: interface[%d] is not an object", idx)
		}
		name := fmt.Sprintf("eth%d", idx)
		override := omapOf("route-metric", (idx+1)*AzureRouteMetricStep)
		dev := omapOf("dhcp4", true, "dhcp4-overrides", override, "dhcp6", false)
		hasIP := false
		var addrs []any
		for _, fam := range []struct{ key, def string }{{"ipv4", "24"}, {"ipv6", "128"}} {
			famMap := mapOf(intf[fam.key])
			if intf[fam.key] != nil && famMap == nil {
				return nil, fmt.Errorf("azure: interface[%d].%s is not an object", idx, fam.key)
			}
			ips := listOf(famMap["ipAddress"])
			if len(ips) == 0 {
				continue
			}
			hasIP = true
			if fam.key == "ipv6" {
				dev.set("dhcp6", true)
				dev.set("dhcp6-overrides", override)
			}
			for j, a := range ips[1:] {
				subnets := listOf(famMap["subnet"])
				if len(subnets) == 0 || mapOf(subnets[0]) == nil {
					return nil, fmt.Errorf("azure: interface[%d].%s has secondary addresses but no subnet", idx, fam.key)
				}
				prefix := fam.def
				if p, ok := mapOf(subnets[0])["prefix"]; ok {
					prefix = renderValue(p)
				}
				am := mapOf(a)
				ip, ok := am["privateIpAddress"]
				if !ok {
					return nil, fmt.Errorf("azure: interface[%d].%s.ipAddress[%d] has no privateIpAddress", idx, fam.key, j+1)
				}
				addrs = append(addrs, renderValue(ip)+"/"+prefix)
			}
		}
		if !hasIP {
			warnings = append(warnings, fmt.Sprintf("azure: interface[%d] (%s) has no IP address; not configured", idx, name))
			continue
		}
		if addrs != nil {
			dev.set("addresses", addrs)
		}
		macRaw, ok := intf["macAddress"]
		if !ok {
			return nil, fmt.Errorf("azure: interface[%d] has no macAddress", idx)
		}
		mac := normalizeAzureMAC(leafString(macRaw))
		match := omapOf("macaddress", mac)
		if d, ok := links.(LinkDrivers); ok {
			if drv, ok := d.DriverByMAC(mac); ok && drv != "" {
				match.set("driver", drv)
			}
		}
		dev.set("match", match)
		dev.set("set-name", name)
		ethernets.set(name, dev)
	}
	if len(ethernets.keys) == 0 {
		return nil, fmt.Errorf("azure: no interface has an IP address: %w", ErrNoConfig)
	}
	return finishConverted(omapOf("version", 2, "ethernets", ethernets), links, warnings)
}
