package opennebula

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestNetworkConfig covers what the golden context leaves out: the address
// a MAC encodes, IP6_GATEWAY over GATEWAY6, IP6_ULA, routes, a bad MTU and
// global SEARCH_DOMAIN.
func TestNetworkConfig(t *testing.T) {
	got := NetworkConfig(map[string]string{
		"ETH1_MAC": "02:00:C0:A8:01:0A", "ETH1_MASK": "255.255.0.0", "ETH1_IP6": "2001:db8::a", "ETH1_IP6_ULA": "fd00::a",
		"ETH1_IP6_PREFIX_LENGTH": "48", "ETH1_IP6_GATEWAY": "2001:db8::1", "ETH1_GATEWAY6": "2001:db8::ffff",
		"ETH1_ROUTES": "10.0.0.0/8 via 192.168.0.1, bogus, 172.16.0.0/12 via 192.168.0.2", "ETH1_MTU": "jumbo",
		"SEARCH_DOMAIN": "a.example b.example", "ETH0_MAC": "",
	})
	want := map[string]any{"version": 2, "ethernets": map[string]any{"eth1": map[string]any{
		"match":       map[string]any{"macaddress": "02:00:c0:a8:01:0a"},
		"addresses":   []any{"192.168.1.10/16", "2001:db8::a/48", "fd00::a/48"},
		"gateway6":    "2001:db8::1",
		"nameservers": map[string]any{"search": []any{"a.example", "b.example"}},
		"routes": []any{map[string]any{"to": "10.0.0.0/8", "via": "192.168.0.1"},
			map[string]any{"to": "172.16.0.0/12", "via": "192.168.0.2"}},
	}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if NetworkConfig(map[string]string{"ETH0_IP": "10.0.0.1"}) != nil {
		t.Error("a context without ETH<n>_MAC has a network config")
	}
}

func FuzzNetworkConfig(f *testing.F) {
	f.Add("02:00:0a:00:28:11", "255.255.255.0", "10.0.0.0/8 via 10.0.0.1", "1500")
	f.Add("zz", "1.2.3", ",,via", "")
	f.Fuzz(func(t *testing.T, mac, mask, routes, mtu string) {
		NetworkConfig(map[string]string{"ETH0_MAC": mac, "ETH0_MASK": mask, "ETH0_ROUTES": routes, "ETH0_MTU": mtu})
	})
}
