package netup

import (
	"encoding/json"
	"errors"
	"net"
	"net/netip"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/insomniacslk/dhcp/dhcpv6"
	"github.com/insomniacslk/dhcp/dhcpv6/nclient6"
	"github.com/insomniacslk/dhcp/iana"
)

func newTestClient6(t *testing.T, conn net.PacketConn, o Options) *nclient6.Client {
	t.Helper()
	c, err := nclient6.NewWithConn(conn, testMAC, o.client6Options("eth0", 0)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestAcquire6(t *testing.T) {
	srv := newFakeServer6("2001:db8::50", []string{"2001:db8::53", "2001:db8::54"}, "a.example", "b.example")
	conn, stop := serve6(srv)
	defer stop()
	o := Options{Family: FamilyV6, DHCPTimeout: time.Second, DHCPRetries: 2}
	c := newTestClient6(t, conn, o)
	l, raw, err := acquire6(t.Context(), c, "eth0")
	if err != nil {
		t.Fatalf("acquire6: %v", err)
	}
	want := &Lease{
		Iface:          "eth0",
		HWAddr:         HardwareAddr(testMAC),
		Proto:          ProtoDHCP6,
		Addr6:          netip.MustParsePrefix("2001:db8::50/128"),
		DNS6:           []netip.Addr{a("2001:db8::53"), a("2001:db8::54")},
		Search6:        []string{"a.example", "b.example"},
		ServerID6:      DUID{0x00, 0x03, 0x00, 0x01, 0x52, 0x54, 0x00, 0x99, 0x00, 0x01},
		IAID6:          0x00123456, // last 4 bytes of the MAC, as nclient6 derives it
		LeaseTime6:     20 * time.Minute,
		PreferredTime6: 10 * time.Minute,
	}
	// The client DUID is a DUID-LLT: type 1, hardware type 1, time, MAC.
	if len(l.ClientID6) != 14 || l.ClientID6[1] != 1 || !slices.Equal([]byte(l.ClientID6[8:]), []byte(testMAC)) {
		t.Errorf("client DUID %s, want a DUID-LLT of %s", l.ClientID6, testMAC)
	}
	if diff := cmp.Diff(want, l, cmpopts.IgnoreUnexported(Lease{}), cmpopts.IgnoreFields(Lease{}, "Acquired6", "ClientID6"),
		cmp.Comparer(func(x, y netip.Addr) bool { return x == y }),
		cmp.Comparer(func(x, y netip.Prefix) bool { return x == y })); diff != "" {
		t.Errorf("lease (-want +got):\n%s", diff)
	}
	if l.Acquired6.IsZero() {
		t.Error("Acquired6 not set")
	}
	if got, want := srv.messages(), []dhcpv6.MessageType{dhcpv6.MessageTypeSolicit, dhcpv6.MessageTypeRequest}; !slices.Equal(got, want) {
		t.Errorf("server saw %v, want %v", got, want)
	}

	// The lease survives JSON (handed-over state).
	b, err := json.Marshal(l)
	if err != nil {
		t.Fatal(err)
	}
	var back Lease
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	if diff := cmp.Diff(l, &back, cmpopts.IgnoreUnexported(Lease{}),
		cmp.Comparer(func(x, y netip.Addr) bool { return x == y }),
		cmp.Comparer(func(x, y netip.Prefix) bool { return x == y }),
		cmp.Comparer(func(x, y time.Time) bool { return x.Equal(y) })); diff != "" {
		t.Errorf("JSON round trip (-want +got):\n%s\n%s", diff, b)
	}

	// RELEASE: to ff02::1:2, client and server DUIDs, the IA_NA with the
	// address; the server's REPLY completes it.
	if err := release6Via(t.Context(), c, raw); err != nil {
		t.Fatalf("release6: %v", err)
	}
	select {
	case <-srv.released:
	case <-time.After(10 * time.Second):
		t.Fatal("server saw no RELEASE")
	}
	rel := srv.releases[0]
	ia := rel.Options.OneIANA()
	if ia == nil || ia.Options.OneAddress() == nil || !ia.Options.OneAddress().IPv6Addr.Equal(net.ParseIP("2001:db8::50")) {
		t.Errorf("RELEASE IA_NA %v", ia)
	}
	if sid := rel.Options.ServerID(); sid == nil || !slices.Equal(sid.ToBytes(), []byte(l.ServerID6)) {
		t.Errorf("RELEASE server id %v, want %s", sid, l.ServerID6)
	}
	if cid := rel.Options.ClientID(); cid == nil || !slices.Equal(cid.ToBytes(), []byte(l.ClientID6)) {
		t.Errorf("RELEASE client id %v, want %s", cid, l.ClientID6)
	}
	if d := conn.lastDst(); d != "[ff02::1:2]:547" {
		t.Errorf("RELEASE sent to %s, want [ff02::1:2]:547", d)
	}
}

func TestAcquire6NoAddrs(t *testing.T) {
	srv := newFakeServer6("2001:db8::50", nil)
	srv.noAddrs = true
	conn, stop := serve6(srv)
	defer stop()
	_, _, err := acquire6(t.Context(), newTestClient6(t, conn, Options{}), "eth0")
	if !errors.Is(err, ErrDHCPv6Status) {
		t.Fatalf("acquire6 error = %v, want ErrDHCPv6Status", err)
	}
}

// No server: SOLICIT is retransmitted with doubling timeouts, then given up.
func TestAcquire6NoServer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		conn, _ := newPipe()
		o := Options{DHCPTimeout: time.Second, DHCPRetries: 3}
		c := newTestClient6(t, conn, o)
		start := time.Now()
		_, _, err := acquire6(t.Context(), c, "eth0")
		if !errors.Is(err, nclient6.ErrNoResponse) {
			t.Fatalf("acquire6 error = %v, want ErrNoResponse", err)
		}
		if got := time.Since(start); got != 7*time.Second {
			t.Errorf("gave up after %v (fake clock), want 7s", got)
		}
		if n := conn.writes(); n != 3 {
			t.Errorf("sent %d SOLICITs, want 3", n)
		}
		c.Close()
	})
}

func TestLeaseFromReply6Rejects(t *testing.T) {
	cid := dhcpv6.OptClientID(&dhcpv6.DUIDLL{HWType: iana.HWTypeEthernet, LinkLayerAddr: testMAC})
	mk := func(typ dhcpv6.MessageType, opts ...dhcpv6.Option) *dhcpv6.Message {
		m := &dhcpv6.Message{MessageType: typ}
		m.AddOption(cid)
		for _, o := range opts {
			m.AddOption(o)
		}
		return m
	}
	ia := func(addr string, valid time.Duration) *dhcpv6.OptIANA {
		x := &dhcpv6.OptIANA{}
		x.Options.Add(&dhcpv6.OptIAAddress{IPv6Addr: net.ParseIP(addr), ValidLifetime: valid})
		return x
	}
	for name, m := range map[string]*dhcpv6.Message{
		"advertise":     mk(dhcpv6.MessageTypeAdvertise, ia("2001:db8::1", time.Hour)),
		"no IA_NA":      mk(dhcpv6.MessageTypeReply),
		"status":        mk(dhcpv6.MessageTypeReply, ia("2001:db8::1", time.Hour), &dhcpv6.OptStatusCode{StatusCode: iana.StatusUnspecFail}),
		"zero lifetime": mk(dhcpv6.MessageTypeReply, ia("2001:db8::1", 0)),
		"link-local":    mk(dhcpv6.MessageTypeReply, ia("fe80::1", time.Hour)),
		"v4-mapped":     mk(dhcpv6.MessageTypeReply, ia("::ffff:10.0.0.1", time.Hour)),
	} {
		if l, err := leaseFromReply6("eth0", nil, m); err == nil {
			t.Errorf("%s: accepted, lease %+v", name, l)
		}
	}
	if _, err := newRelease6(nil); err == nil {
		t.Error("newRelease6(nil) accepted")
	}
}
