package netconfig

// Hetzner Cloud metadata (http://169.254.169.254/hetzner/v1/metadata)
// carries its network configuration ready-made: the `network-config` key
// is a network config v1 document, which cloud-init's DataSourceHetzner
// uses with a physical DHCPv4 interface appended for each private network
// (metadata/private-networks), named after the NIC with its MAC
// (HetznerNetworkConfig).

import (
	"encoding/json"
	"fmt"
)

// ConvertHetzner returns the network config in Hetzner's metadata document
// (decoded YAML or JSON).
func ConvertHetzner(metadata map[string]any, links Links) (*Config, error) {
	nc, ok := metadata["network-config"]
	if !ok || !pyTruthy(nc) {
		return nil, fmt.Errorf("hetzner: metadata has no network-config: %w", ErrNoConfig)
	}
	if m, ok := nc.(map[string]any); ok {
		nc = HetznerNetworkConfig(m, metadata["private-networks"])
	}
	b, err := json.Marshal(nc)
	if err != nil {
		return nil, fmt.Errorf("hetzner: network-config: %w", err)
	}
	var raw any
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("hetzner: network-config: %w", err)
	}
	cfg, err := parseDoc(jsonToOmap(raw, 0), links)
	if err != nil {
		return nil, fmt.Errorf("hetzner: network-config: %w", err)
	}
	return cfg, nil
}

// HetznerNetworkConfig is the metadata's network-config nc with a physical
// DHCPv4 interface appended for each private network's mac_address, as
// 26.x's DataSourceHetzner.network_config does. The name is null: the
// v1 parser names it after the NIC with that MAC (cloud-init's
// get_interface_name_from_mac). nc itself is left as the service gave it.
func HetznerNetworkConfig(nc map[string]any, privateNetworks any) map[string]any {
	nets, _ := privateNetworks.([]any)
	list, ok := nc["config"].([]any)
	if len(nets) == 0 || !ok {
		return nc
	}
	out := make(map[string]any, len(nc))
	for k, v := range nc {
		out[k] = v
	}
	config := append([]any(nil), list...)
	for _, n := range nets {
		m, _ := n.(map[string]any)
		config = append(config, map[string]any{
			"type":        "physical",
			"mac_address": m["mac_address"],
			"name":        nil,
			"subnets":     []any{map[string]any{"ipv4": true, "type": "dhcp"}},
		})
	}
	out["config"] = config
	return out
}
