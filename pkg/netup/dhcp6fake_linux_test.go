package netup

import (
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv6"
	"github.com/insomniacslk/dhcp/dhcpv6/server6"
	"github.com/insomniacslk/dhcp/iana"
)

// fakeServer6 is a tiny DHCPv6 server: one IA_NA address for every client,
// DNS (23) and domain search (24), RELEASEs recorded and answered. It is a
// server6.Handler, used over an in-memory pipe (no root) and inside a test
// network namespace.
type fakeServer6 struct {
	addr    netip.Addr
	duid    dhcpv6.DUID
	dns     []net.IP
	search  []string
	noAddrs bool // ADVERTISE with NoAddrsAvail

	mu       sync.Mutex
	seen     []dhcpv6.MessageType
	releases []*dhcpv6.Message
	released chan struct{} // closed on the first RELEASE
}

var serverMAC6 = net.HardwareAddr{0x52, 0x54, 0x00, 0x99, 0x00, 0x01}

func newFakeServer6(addr string, dns []string, search ...string) *fakeServer6 {
	s := &fakeServer6{
		addr:     netip.MustParseAddr(addr),
		duid:     &dhcpv6.DUIDLL{HWType: iana.HWTypeEthernet, LinkLayerAddr: serverMAC6},
		search:   search,
		released: make(chan struct{}),
	}
	for _, d := range dns {
		s.dns = append(s.dns, net.ParseIP(d))
	}
	return s
}

func (s *fakeServer6) handle(conn net.PacketConn, peer net.Addr, d dhcpv6.DHCPv6) {
	m, err := d.GetInnerMessage()
	if err != nil {
		return
	}
	s.mu.Lock()
	s.seen = append(s.seen, m.MessageType)
	s.mu.Unlock()
	mods := []dhcpv6.Modifier{dhcpv6.WithServerID(s.duid)}
	var ia *dhcpv6.OptIANA
	if req := m.Options.OneIANA(); req != nil {
		ia = &dhcpv6.OptIANA{IaId: req.IaId, T1: 5 * time.Minute, T2: 8 * time.Minute}
		if s.noAddrs {
			ia.Options.Add(&dhcpv6.OptStatusCode{StatusCode: iana.StatusNoAddrsAvail, StatusMessage: "pool empty"})
		} else {
			ia.Options.Add(&dhcpv6.OptIAAddress{IPv6Addr: s.addr.AsSlice(), PreferredLifetime: 10 * time.Minute, ValidLifetime: 20 * time.Minute})
		}
	}
	var reply *dhcpv6.Message
	switch m.MessageType {
	case dhcpv6.MessageTypeSolicit, dhcpv6.MessageTypeRequest:
		if ia != nil {
			mods = append(mods, dhcpv6.WithOption(ia))
		}
		if len(s.dns) > 0 {
			mods = append(mods, dhcpv6.WithDNS(s.dns...))
		}
		if len(s.search) > 0 {
			mods = append(mods, dhcpv6.WithDomainSearchList(s.search...))
		}
		if m.MessageType == dhcpv6.MessageTypeSolicit {
			reply, err = dhcpv6.NewAdvertiseFromSolicit(m, mods...)
		} else {
			reply, err = dhcpv6.NewReplyFromMessage(m, mods...)
		}
	case dhcpv6.MessageTypeRelease:
		s.mu.Lock()
		s.releases = append(s.releases, m)
		if len(s.releases) == 1 {
			close(s.released)
		}
		s.mu.Unlock()
		mods = append(mods, dhcpv6.WithOption(&dhcpv6.OptStatusCode{StatusCode: iana.StatusSuccess}))
		reply, err = dhcpv6.NewReplyFromMessage(m, mods...)
	default:
		return
	}
	if err != nil {
		return
	}
	_, _ = conn.WriteTo(reply.ToBytes(), peer)
}

func (s *fakeServer6) messages() []dhcpv6.MessageType {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]dhcpv6.MessageType(nil), s.seen...)
}

// serve6 runs s behind the server end of a new pipe and returns the client end.
func serve6(s *fakeServer6) (client *pipeConn, stop func()) {
	c, sc := newPipe()
	srv, err := server6.NewServer("", nil, s.handle, server6.WithConn(sc))
	if err != nil {
		panic(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve()
	}()
	return c, func() {
		c.Close()
		srv.Close()
		<-done
	}
}
