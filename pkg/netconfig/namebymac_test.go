package netconfig

import (
	"strings"
	"testing"
)

// TestV1NameByMAC: a v1 physical entry with a mac_address and a null or
// missing name (Hetzner's private networks, as cloud-init 26.2 builds
// them) is named after the NIC with that MAC; one no NIC has is skipped
// with a warning.
func TestV1NameByMAC(t *testing.T) {
	doc := `{"version": 1, "config": [
		{"type": "physical", "name": "eth0", "mac_address": "96:00:01:02:03:0a", "subnets": [{"type": "dhcp"}]},
		{"type": "physical", "name": null, "mac_address": "86:00:00:0A:0B:0C", "subnets": [{"type": "dhcp"}]},
		{"type": "physical", "mac_address": "86:00:00:0a:0b:0d", "subnets": [{"type": "dhcp"}]}]}`
	cfg, err := Parse([]byte(doc), MACs{"86:00:00:0a:0b:0c": "ens10"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Interface("ens10") == nil || cfg.Interface("eth0") == nil || len(cfg.Interfaces) != 2 {
		t.Fatalf("interfaces %+v, want eth0 and ens10", cfg.Interfaces)
	}
	if len(cfg.Warnings) != 1 || !strings.Contains(cfg.Warnings[0], "missing required keys name") {
		t.Errorf("warnings %q, want one for the MAC no NIC has", cfg.Warnings)
	}
}
