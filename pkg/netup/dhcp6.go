package netup

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv6"
	"github.com/insomniacslk/dhcp/dhcpv6/nclient6"
	"github.com/insomniacslk/dhcp/iana"
)

// DHCPv6 timing of the RELEASE exchange (RFC 8415 §7.6: REL_TIMEOUT 1 s).
const releaseTimeout6 = time.Second

// ErrDHCPv6Status: the server answered with a status code other than
// Success (NoAddrsAvail, NotOnLink, ...), for the message or the IA_NA.
var ErrDHCPv6Status = errors.New("DHCPv6 server refused")

// dhcp6Dest is the All_DHCP_Relay_Agents_and_Servers group on the link with
// index ifindex. The zone is numeric so that it never goes through the
// process-wide interface-name cache (tests run in other namespaces).
func dhcp6Dest(ifindex int) *net.UDPAddr {
	return &net.UDPAddr{IP: net.ParseIP("ff02::1:2"), Port: dhcpv6.DefaultServerPort, Zone: strconv.Itoa(ifindex)}
}

// client6Options are the nclient6 options derived from o for the link with
// index ifindex (0: keep nclient6's default destination, for tests).
func (o Options) client6Options(iface string, ifindex int) []nclient6.ClientOpt {
	opts := []nclient6.ClientOpt{
		nclient6.WithTimeout(o.dhcpTimeout()),
		nclient6.WithRetry(o.dhcpRetries()),
	}
	if ifindex > 0 {
		opts = append(opts, nclient6.WithBroadcastAddr(dhcp6Dest(ifindex)))
	}
	return opts
}

// statusErr returns an error for a non-success status code option.
func statusErr(where string, sc *dhcpv6.OptStatusCode) error {
	if sc == nil || sc.StatusCode == iana.StatusSuccess {
		return nil
	}
	return fmt.Errorf("%w: %s: %s %q", ErrDHCPv6Status, where, sc.StatusCode, sc.StatusMessage)
}

// acquire6 runs SOLICIT/ADVERTISE/REQUEST/REPLY over c for one IA_NA
// address and converts the REPLY. The client's timeout and retries are set
// by its creator.
func acquire6(ctx context.Context, c *nclient6.Client, iface string) (*Lease, *dhcpv6.Message, error) {
	adv, err := c.Solicit(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("DHCPv6 on %s: SOLICIT: %w", iface, err)
	}
	if err := statusErr("ADVERTISE", adv.Options.Status()); err != nil {
		return nil, nil, fmt.Errorf("DHCPv6 on %s: %w", iface, err)
	}
	if ia := adv.Options.OneIANA(); ia == nil {
		return nil, nil, fmt.Errorf("DHCPv6 on %s: ADVERTISE carries no IA_NA", iface)
	} else if err := statusErr("ADVERTISE IA_NA", ia.Options.Status()); err != nil {
		return nil, nil, fmt.Errorf("DHCPv6 on %s: %w", iface, err)
	}
	reply, err := c.Request(ctx, adv)
	if err != nil {
		return nil, nil, fmt.Errorf("DHCPv6 on %s: REQUEST: %w", iface, err)
	}
	l, err := leaseFromReply6(iface, HardwareAddr(c.InterfaceAddr()), reply)
	if err != nil {
		return nil, nil, fmt.Errorf("DHCPv6 on %s: %w", iface, err)
	}
	l.Acquired6 = time.Now()
	return l, reply, nil
}

// leaseFromReply6 turns a DHCPv6 REPLY into a (DHCPv6-only) Lease.
func leaseFromReply6(iface string, hw HardwareAddr, reply *dhcpv6.Message) (*Lease, error) {
	if reply.MessageType != dhcpv6.MessageTypeReply {
		return nil, fmt.Errorf("got %s, want REPLY", reply.MessageType)
	}
	if err := statusErr("REPLY", reply.Options.Status()); err != nil {
		return nil, err
	}
	ia := reply.Options.OneIANA()
	if ia == nil {
		return nil, errors.New("REPLY carries no IA_NA")
	}
	if err := statusErr("REPLY IA_NA", ia.Options.Status()); err != nil {
		return nil, err
	}
	var ipa *dhcpv6.OptIAAddress
	for _, a := range ia.Options.Addresses() {
		if statusErr("", a.Options.Status()) != nil || a.ValidLifetime == 0 {
			continue
		}
		if addr, ok := netip.AddrFromSlice(a.IPv6Addr); ok && addr.Is6() && !addr.Is4In6() && addr.IsGlobalUnicast() {
			ipa = a
			break
		}
	}
	if ipa == nil {
		return nil, errors.New("REPLY carries no usable IA_NA address")
	}
	addr, _ := netip.AddrFromSlice(ipa.IPv6Addr)
	l := &Lease{
		Iface:          iface,
		HWAddr:         hw,
		Proto:          ProtoDHCP6,
		Addr6:          netip.PrefixFrom(addr, 128),
		IAID6:          binary.BigEndian.Uint32(ia.IaId[:]),
		LeaseTime6:     ipa.ValidLifetime,
		PreferredTime6: ipa.PreferredLifetime,
	}
	for _, ip := range reply.Options.DNS() {
		if a, ok := netip.AddrFromSlice(ip); ok && a.Is6() && !a.IsUnspecified() && !slices.Contains(l.DNS6, a) {
			l.DNS6 = append(l.DNS6, a)
		}
	}
	if s := reply.Options.DomainSearchList(); s != nil {
		l.Search6 = append(l.Search6, s.Labels...)
	}
	if d := reply.Options.ServerID(); d != nil {
		l.ServerID6 = DUID(d.ToBytes())
	}
	if d := reply.Options.ClientID(); d != nil {
		l.ClientID6 = DUID(d.ToBytes())
	}
	l.sanitize()
	return l, nil
}

// merge6 copies the DHCPv6 part of v6 into l.
func (l *Lease) merge6(v6 *Lease) {
	l.Addr6 = v6.Addr6
	l.DNS6 = v6.DNS6
	l.Search6 = v6.Search6
	l.Dropped = append(l.Dropped, v6.Dropped...)
	l.ServerID6 = v6.ServerID6
	l.ClientID6 = v6.ClientID6
	l.IAID6 = v6.IAID6
	l.LeaseTime6 = v6.LeaseTime6
	l.PreferredTime6 = v6.PreferredTime6
	l.Acquired6 = v6.Acquired6
}

// newRelease6 builds the RELEASE for the address leased in reply: the
// client and server identifiers and the IA_NA with its address, as RFC 8415
// §18.2.7 asks.
func newRelease6(reply *dhcpv6.Message) (*dhcpv6.Message, error) {
	if reply == nil {
		return nil, errors.New("no DHCPv6 lease to release")
	}
	cid, sid, ia := reply.Options.ClientID(), reply.Options.ServerID(), reply.Options.OneIANA()
	if cid == nil || sid == nil || ia == nil {
		return nil, errors.New("DHCPv6 REPLY lacks client id, server id or IA_NA")
	}
	m, err := dhcpv6.NewMessage()
	if err != nil {
		return nil, err
	}
	m.MessageType = dhcpv6.MessageTypeRelease
	m.AddOption(dhcpv6.OptClientID(cid))
	m.AddOption(dhcpv6.OptServerID(sid))
	m.AddOption(dhcpv6.OptElapsedTime(0))
	rel := &dhcpv6.OptIANA{IaId: ia.IaId}
	for _, a := range ia.Options.Addresses() {
		rel.Options.Add(&dhcpv6.OptIAAddress{IPv6Addr: a.IPv6Addr})
	}
	m.AddOption(rel)
	return m, nil
}

// release6Via sends a RELEASE for the lease in reply over c and waits for
// the server's REPLY (bounded by c's retries and ctx).
func release6Via(ctx context.Context, c *nclient6.Client, reply *dhcpv6.Message) error {
	rel, err := newRelease6(reply)
	if err != nil {
		return err
	}
	ans, err := c.SendAndRead(ctx, c.RemoteAddr(), rel, nclient6.IsMessageType(dhcpv6.MessageTypeReply))
	if err != nil {
		return err
	}
	return statusErr("RELEASE REPLY", ans.Options.Status())
}
