package stages

import (
	"context"
	"errors"
	"net/netip"
	"reflect"
	"testing"

	"github.com/cloudroot/cloudroot/pkg/netup"
)

// TestDatasourceLease: the DHCP options a server hands out (a PXE
// network's, a cloud's) reach the datasources with the lease; a static
// configuration is no lease.
func TestDatasourceLease(t *testing.T) {
	dns := []netip.Addr{netip.MustParseAddr("192.168.10.1")}
	ntp := []netip.Addr{netip.MustParseAddr("192.168.10.2")}
	lease := &netup.Lease{Iface: "eth0", Proto: netup.ProtoDHCP, Addr: netip.MustParsePrefix("192.168.10.100/24"),
		Hostname: "node1", Domain: "lab.example", DNS: dns, NTP: ntp}
	l := DatasourceLease(lease)
	if l == nil || l.Hostname != "node1" || l.Domain != "lab.example" || !reflect.DeepEqual(l.DNS, dns) || !reflect.DeepEqual(l.NTP, ntp) {
		t.Fatalf("DatasourceLease = %+v", l)
	}
	lease.Proto = netup.ProtoStatic
	if DatasourceLease(lease) != nil {
		t.Error("a static configuration is not a lease")
	}
}

// TestEphemeralNetOnce: the network is brought up once, its outcome kept
// (a failure too), and Down forgets the lease.
func TestEphemeralNetOnce(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
	}{{name: "lease"}, {name: "no lease", err: errors.New("no DHCP offer on eth0")}} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			n := &EphemeralNet{Bring: func(context.Context) (*netup.Lease, error) {
				calls++
				if tc.err != nil {
					return nil, tc.err
				}
				return &netup.Lease{Iface: "eth0", Proto: netup.ProtoDHCP, Addr: netip.MustParsePrefix("10.0.2.15/24")}, nil
			}}
			for range 2 {
				if err := n.Up(context.Background()); !errors.Is(err, tc.err) {
					t.Errorf("Up = %v, want %v", err, tc.err)
				}
			}
			if calls != 1 {
				t.Errorf("Bring called %d times", calls)
			}
			if (n.Lease() != nil) != (tc.err == nil) || (n.Client() != nil) != (tc.err == nil) {
				t.Errorf("lease %v client %v after Up = %v", n.Lease(), n.Client(), tc.err)
			}
			n.Down(context.Background())
			if n.Current() != nil {
				t.Error("Down kept the lease")
			}
		})
	}
}
