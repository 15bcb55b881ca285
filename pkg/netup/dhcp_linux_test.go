package netup

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/dhcpv4/nclient4"
	"github.com/insomniacslk/dhcp/rfc1035label"
)

var testMAC = net.HardwareAddr{0x52, 0x54, 0x00, 0x12, 0x34, 0x56}

func newTestClient(t *testing.T, conn net.PacketConn, o Options) *nclient4.Client {
	t.Helper()
	c, err := nclient4.NewWithConn(conn, testMAC, o.clientOptions("eth0")...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestAcquire(t *testing.T) {
	srv := newFakeServer("10.0.0.50", "10.0.0.1",
		dhcpv4.OptRouter(net.IPv4(10, 0, 0, 1)),
		dhcpv4.OptDNS(net.IPv4(10, 0, 0, 53), net.IPv4(10, 0, 0, 54)),
		dhcpv4.OptDomainName("example.internal"),
		dhcpv4.OptDomainSearch(&rfc1035label.Labels{Labels: []string{"a.example", "b.example"}}),
		dhcpv4.OptHostName("vm1"),
		dhcpv4.OptNTPServers(net.IPv4(10, 0, 0, 123)),
		dhcpv4.OptClasslessStaticRoute(
			&dhcpv4.Route{Dest: &net.IPNet{IP: net.IPv4(169, 254, 169, 254), Mask: net.CIDRMask(32, 32)}, Router: net.IPv4(10, 0, 0, 2)},
			&dhcpv4.Route{Dest: &net.IPNet{IP: net.IPv4zero, Mask: net.CIDRMask(0, 32)}, Router: net.IPv4(10, 0, 0, 1)},
		),
		dhcpv4.OptGeneric(dhcpv4.OptionInterfaceMTU, []byte{0x23, 0x28}),
		dhcpv4.OptGeneric(OptionAzureWireserver, []byte{168, 63, 129, 16}),
		dhcpv4.OptGeneric(dhcpv4.OptionVendorSpecificInformation, []byte{1, 2, 0xab, 0xcd}),
	)
	conn, stop := serve(srv)
	defer stop()
	o := Options{Hostname: "asking", DHCPTimeout: time.Second, DHCPRetries: 2}
	l, raw, err := acquire(t.Context(), newTestClient(t, conn, o), "eth0", o)
	if err != nil {
		t.Fatalf("acquire: %v", err)
	}
	want := &Lease{
		Iface:  "eth0",
		HWAddr: HardwareAddr(testMAC),
		Proto:  ProtoDHCP,
		Addr:   netip.MustParsePrefix("10.0.0.50/24"),
		Router: a("10.0.0.1"),
		Routes: []Route{
			{Dst: netip.MustParsePrefix("169.254.169.254/32"), Gateway: a("10.0.0.2")},
			{Dst: netip.MustParsePrefix("0.0.0.0/0"), Gateway: a("10.0.0.1")},
		},
		DNS:        []netip.Addr{a("10.0.0.53"), a("10.0.0.54")},
		Domain:     "example.internal",
		Search:     []string{"a.example", "b.example"},
		Hostname:   "vm1",
		NTP:        []netip.Addr{a("10.0.0.123")},
		MTU:        9000,
		NextServer: a("10.0.0.1"),
		ServerID:   a("10.0.0.1"),
		LeaseTime:  10 * time.Minute,
		Options:    map[uint8][]byte{245: {168, 63, 129, 16}, 43: {1, 2, 0xab, 0xcd}},
	}
	if diff := cmp.Diff(want, l, cmpopts.IgnoreUnexported(Lease{}), cmpopts.IgnoreFields(Lease{}, "Acquired"),
		cmp.Comparer(func(x, y netip.Addr) bool { return x == y }),
		cmp.Comparer(func(x, y netip.Prefix) bool { return x == y })); diff != "" {
		t.Errorf("lease (-want +got):\n%s", diff)
	}
	if got, want := srv.messages(), []dhcpv4.MessageType{dhcpv4.MessageTypeDiscover, dhcpv4.MessageTypeRequest}; !slices.Equal(got, want) {
		t.Errorf("server saw %v, want %v", got, want)
	}

	// DHCPRELEASE goes to the server identifier, carrying the address.
	if err := releaseVia(newTestClient(t, conn, o), raw); err != nil {
		t.Fatalf("release: %v", err)
	}
	select {
	case <-srv.released:
	case <-time.After(10 * time.Second):
		t.Fatal("server saw no RELEASE")
	}
	rel := srv.releases[0]
	if !rel.ClientIPAddr.Equal(net.IPv4(10, 0, 0, 50)) || !net.IP(rel.GetOneOption(dhcpv4.OptionServerIdentifier)).Equal(net.IPv4(10, 0, 0, 1)) {
		t.Errorf("RELEASE ciaddr=%s server-id=%v", rel.ClientIPAddr, rel.GetOneOption(dhcpv4.OptionServerIdentifier))
	}
	if d := conn.lastDst(); d != "10.0.0.1:67" {
		t.Errorf("RELEASE sent to %s, want 10.0.0.1:67", d)
	}
}

func TestAcquireNak(t *testing.T) {
	srv := newFakeServer("10.0.0.50", "10.0.0.1")
	srv.nak = true
	conn, stop := serve(srv)
	defer stop()
	_, _, err := acquire(t.Context(), newTestClient(t, conn, Options{}), "eth0", Options{})
	var nak *nclient4.ErrNak
	if !errors.As(err, &nak) {
		t.Fatalf("acquire error = %v, want *nclient4.ErrNak", err)
	}
}

// No server: the client retransmits with doubling timeouts and gives up;
// synctest makes the 1+2+4 s of waiting instant.
func TestAcquireNoServer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		conn, _ := newPipe()
		o := Options{DHCPTimeout: time.Second, DHCPRetries: 3}
		c := newTestClient(t, conn, o)
		start := time.Now()
		_, _, err := acquire(t.Context(), c, "eth0", o)
		if !errors.Is(err, nclient4.ErrNoResponse) {
			t.Fatalf("acquire error = %v, want ErrNoResponse", err)
		}
		if got := time.Since(start); got != 7*time.Second {
			t.Errorf("gave up after %v (fake clock), want 7s", got)
		}
		if n := conn.writes(); n != 3 {
			t.Errorf("sent %d DISCOVERs, want 3", n)
		}
		c.Close()
	})
}

// Several links in parallel: the first lease wins, a later one is released,
// failures are joined only when nobody wins.
func TestFirstLease(t *testing.T) {
	slow := newFakeServer("10.1.0.9", "10.1.0.1")
	fast := newFakeServer("10.2.0.9", "10.2.0.1")
	slowConn, stopSlow := serve(slow)
	defer stopSlow()
	fastConn, stopFast := serve(fast)
	defer stopFast()
	o := Options{DHCPTimeout: 5 * time.Second, DHCPRetries: 1}
	clients := []*nclient4.Client{newTestClient(t, slowConn, o), newTestClient(t, fastConn, o)}
	fastDone := make(chan struct{})
	names := []string{"eth0", "eth1"}
	type won struct {
		l   *Lease
		raw *nclient4.Lease
	}
	var released []int
	idx, w, err := firstLease(t.Context(), names, func(ctx context.Context, i int) (won, error) {
		if i == 0 {
			<-fastDone // eth0 answers only after eth1 has won
			ctx = context.WithoutCancel(ctx)
		}
		l, raw, err := acquire(ctx, clients[i], names[i], o)
		if i == 1 {
			close(fastDone)
		}
		return won{l, raw}, err
	}, func(i int, v won) {
		released = append(released, i)
		if err := releaseVia(clients[i], v.raw); err != nil {
			t.Errorf("release: %v", err)
		}
	})
	if err != nil {
		t.Fatalf("firstLease: %v", err)
	}
	if idx != 1 || w.l.Iface != "eth1" || w.l.Addr.String() != "10.2.0.9/24" {
		t.Errorf("winner %d %s %s, want eth1 10.2.0.9/24", idx, w.l.Iface, w.l.Addr)
	}
	if !slices.Equal(released, []int{0}) {
		t.Errorf("released %v, want [0]", released)
	}
	<-slow.released

	_, _, err = firstLease(t.Context(), names, func(ctx context.Context, i int) (int, error) {
		return 0, errors.New("boom " + names[i])
	}, func(int, int) {})
	if !errors.Is(err, ErrNoLease) || !containsAll(err.Error(), "boom eth0", "boom eth1") {
		t.Errorf("all failed: error = %v, want ErrNoLease with both causes", err)
	}
}

func containsAll(s string, subs ...string) bool {
	for _, x := range subs {
		if !strings.Contains(s, x) {
			return false
		}
	}
	return true
}
