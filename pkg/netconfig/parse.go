package netconfig

import (
	"fmt"
)

// Parse reads network config YAML as cloud-init accepts it: version 1 or
// 2, bare or wrapped in a top-level `network:` key, or `config: disabled`.
// links resolves MAC addresses to names (nil: no live links, names come
// from the config alone).
func Parse(data []byte, links Links) (*Config, error) {
	doc, err := decodeYAML(data)
	if err != nil {
		return nil, fmt.Errorf("parsing network config yaml: %w", err)
	}
	return parseDoc(doc, links)
}

// parseDoc dispatches a decoded document on its version.
func parseDoc(doc any, links Links) (*Config, error) {
	m := asMap(doc)
	if m == nil {
		if doc == nil {
			return nil, ErrNoConfig
		}
		return nil, fmt.Errorf("network config is a %T, not a mapping: %w", doc, ErrNoConfig)
	}
	if inner, ok := m.get("network"); ok {
		if im := asMap(inner); im != nil {
			m = im
		} else if inner == nil {
			return nil, ErrNoConfig
		}
	}
	if c, ok := m.get("config"); ok {
		if s, ok := c.(string); ok && s == "disabled" {
			return &Config{Version: versionOf(m), Disabled: true}, nil
		}
	}
	v, ok := m.get("version")
	if !ok {
		return nil, fmt.Errorf("network config has no version: %w", ErrUnsupportedVersion)
	}
	switch n, _ := asInt(v); n {
	case 1:
		return parseV1(m, links)
	case 2:
		return parseV2(m, links)
	}
	return nil, fmt.Errorf("network config version %q: %w", asString(v), ErrUnsupportedVersion)
}

func versionOf(m *omap) int {
	v, _ := m.get("version")
	n, _ := asInt(v)
	return n
}
