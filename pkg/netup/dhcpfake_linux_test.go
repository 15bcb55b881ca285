package netup

import (
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/dhcpv4/server4"
)

// fakeServer is a tiny DHCPv4 server: one address for every client, the
// configured options, RELEASEs recorded. It is a server4.Handler, used both
// over an in-memory pipe (no root) and inside a test network namespace.
type fakeServer struct {
	yiaddr   netip.Addr
	serverID netip.Addr
	mask     net.IPMask
	opts     []dhcpv4.Option
	nak      bool

	mu       sync.Mutex
	seen     []dhcpv4.MessageType
	releases []*dhcpv4.DHCPv4
	released chan struct{} // closed on the first RELEASE
}

func newFakeServer(yiaddr, serverID string, opts ...dhcpv4.Option) *fakeServer {
	return &fakeServer{
		yiaddr:   netip.MustParseAddr(yiaddr),
		serverID: netip.MustParseAddr(serverID),
		mask:     net.CIDRMask(24, 32),
		opts:     opts,
		released: make(chan struct{}),
	}
}

func (s *fakeServer) handle(conn net.PacketConn, peer net.Addr, m *dhcpv4.DHCPv4) {
	s.mu.Lock()
	s.seen = append(s.seen, m.MessageType())
	s.mu.Unlock()
	var typ dhcpv4.MessageType
	switch m.MessageType() {
	case dhcpv4.MessageTypeDiscover:
		typ = dhcpv4.MessageTypeOffer
	case dhcpv4.MessageTypeRequest:
		typ = dhcpv4.MessageTypeAck
		if s.nak {
			typ = dhcpv4.MessageTypeNak
		}
	case dhcpv4.MessageTypeRelease:
		s.mu.Lock()
		s.releases = append(s.releases, m)
		if len(s.releases) == 1 {
			close(s.released)
		}
		s.mu.Unlock()
		return
	default:
		return
	}
	mods := []dhcpv4.Modifier{
		dhcpv4.WithMessageType(typ),
		dhcpv4.WithServerIP(s.serverID.AsSlice()),
		dhcpv4.WithOption(dhcpv4.OptServerIdentifier(s.serverID.AsSlice())),
	}
	if typ != dhcpv4.MessageTypeNak {
		mods = append(mods,
			dhcpv4.WithYourIP(s.yiaddr.AsSlice()),
			dhcpv4.WithOption(dhcpv4.OptSubnetMask(s.mask)),
			dhcpv4.WithOption(dhcpv4.OptIPAddressLeaseTime(10*time.Minute)),
		)
		for _, o := range s.opts {
			mods = append(mods, dhcpv4.WithOption(o))
		}
	}
	reply, err := dhcpv4.NewReplyFromRequest(m, mods...)
	if err != nil {
		return
	}
	_, _ = conn.WriteTo(reply.ToBytes(), peer)
}

func (s *fakeServer) messages() []dhcpv4.MessageType {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]dhcpv4.MessageType(nil), s.seen...)
}

// pipeConn is one end of an in-memory packet pipe standing in for the
// client's raw socket and the server's UDP socket. Nothing reaches a network.
type pipeConn struct {
	in     chan []byte
	peer   *pipeConn
	from   net.Addr // what ReadFrom reports as the sender
	closed chan struct{}
	once   sync.Once

	mu   sync.Mutex
	dsts []net.Addr // destinations of WriteTo calls
}

func newPipe() (client, server *pipeConn) {
	client = &pipeConn{in: make(chan []byte, 16), closed: make(chan struct{}),
		from: &net.UDPAddr{IP: net.IPv4(10, 0, 0, 1), Port: dhcpv4.ServerPort}}
	server = &pipeConn{in: make(chan []byte, 16), closed: make(chan struct{}),
		from: &net.UDPAddr{IP: net.IPv4zero, Port: dhcpv4.ClientPort}}
	client.peer, server.peer = server, client
	return client, server
}

func (p *pipeConn) ReadFrom(b []byte) (int, net.Addr, error) {
	select {
	case pkt := <-p.in:
		return copy(b, pkt), p.from, nil
	case <-p.closed:
		return 0, nil, net.ErrClosed
	}
}

func (p *pipeConn) WriteTo(b []byte, addr net.Addr) (int, error) {
	p.mu.Lock()
	p.dsts = append(p.dsts, addr)
	p.mu.Unlock()
	select {
	case <-p.closed:
		return 0, net.ErrClosed
	default:
	}
	select {
	case p.peer.in <- append([]byte(nil), b...):
	case <-p.peer.closed:
	case <-p.closed:
		return 0, net.ErrClosed
	}
	return len(b), nil
}

func (p *pipeConn) lastDst() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.dsts) == 0 {
		return ""
	}
	return p.dsts[len(p.dsts)-1].String()
}

func (p *pipeConn) writes() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.dsts)
}

func (p *pipeConn) Close() error {
	p.once.Do(func() { close(p.closed) })
	return nil
}

func (p *pipeConn) LocalAddr() net.Addr              { return &net.UDPAddr{} }
func (p *pipeConn) SetDeadline(time.Time) error      { return nil }
func (p *pipeConn) SetReadDeadline(time.Time) error  { return nil }
func (p *pipeConn) SetWriteDeadline(time.Time) error { return nil }

// serve runs s behind the server end of a new pipe and returns the client end.
func serve(s *fakeServer) (client *pipeConn, stop func()) {
	c, sc := newPipe()
	srv, err := server4.NewServer("", nil, s.handle, server4.WithConn(sc))
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
