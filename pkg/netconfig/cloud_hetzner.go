package netconfig

// Hetzner Cloud metadata (http://169.254.169.254/hetzner/v1/metadata)
// carries its network configuration ready-made: the `network-config` key
// is a network config v1 document, which cloud-init's DataSourceHetzner
// uses as is. Private networks (metadata/private-networks) are not added
// here: not ported yet.

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
