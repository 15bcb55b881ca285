package modules

import (
	"slices"
	"testing"
)

// TestMetadata: the meta-data keys modules read, in the shapes datasources
// give them (normalize_pubkey_data for public-keys; a scalar host name and
// seed; a block-device-mapping mapping), and wrong shapes read as absent.
func TestMetadata(t *testing.T) {
	tests := []struct {
		name   string
		meta   map[string]any
		keys   []string
		host   string
		seed   string
		device string // block-device-mapping's "ephemeral0"
	}{
		{name: "absent"},
		{name: "key lines", meta: map[string]any{"public-keys": "ssh-ed25519 A a\n\n  ssh-rsa B b  \n"},
			keys: []string{"ssh-ed25519 A a", "ssh-rsa B b"}},
		{name: "list", meta: map[string]any{"public-keys": []any{"k1", []any{"k2\nk3"}, 7, nil}},
			keys: []string{"k1", "k2", "k3"}},
		{name: "openssh-key wins", meta: map[string]any{"public-keys": map[string]any{"openssh-key": "k1", "other": "k2"}},
			keys: []string{"k1"}},
		{name: "openssh-key null", meta: map[string]any{"public-keys": map[string]any{"openssh-key": nil, "other": "k2"}}},
		{name: "mapping in key order", meta: map[string]any{"public-keys": map[string]any{"b": "k2", "a": []any{"k1"}, "c": map[string]any{"openssh-key": "k3"}}},
			keys: []string{"k1", "k2", "k3"}},
		{name: "scalars", meta: map[string]any{"local-hostname": "h1", "random_seed": "c2VlZA==", "block-device-mapping": map[string]any{"ephemeral0": "sdb", "ami": "sda"}},
			host: "h1", seed: "c2VlZA==", device: "sdb"},
		{name: "numbers are str()", meta: map[string]any{"local-hostname": 12, "random_seed": true},
			host: "12", seed: "true"},
		{name: "wrong shapes", meta: map[string]any{"local-hostname": []any{"h"}, "random_seed": map[string]any{"a": 1}, "block-device-mapping": "sdb", "public-keys": 5}},
		{name: "nulls", meta: map[string]any{"local-hostname": nil, "random_seed": nil, "block-device-mapping": nil, "public-keys": nil}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := (&Context{Meta: tt.meta}).Metadata()
			if !slices.Equal([]string(m.PublicKeys), tt.keys) {
				t.Errorf("PublicKeys = %q, want %q", m.PublicKeys, tt.keys)
			}
			if m.LocalHostname != tt.host || m.RandomSeed != tt.seed || m.Device("ephemeral0") != tt.device {
				t.Errorf("host %q seed %q device %q, want %q %q %q", m.LocalHostname, m.RandomSeed, m.Device("ephemeral0"), tt.host, tt.seed, tt.device)
			}
		})
	}
}
