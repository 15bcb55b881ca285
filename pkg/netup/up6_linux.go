package netup

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv6"
	"github.com/insomniacslk/dhcp/dhcpv6/nclient6"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// ErrNoIPv6 means IPv6 is not available on a link: the kernel has no IPv6,
// or net.ipv6.conf.<iface>.disable_ipv6 is set.
var ErrNoIPv6 = errors.New("IPv6 is not available")

// ipv6Problem reports why iface cannot do IPv6 at all, or nil. It reads
// /proc/sys/net on the calling thread, so in the caller's namespace.
func ipv6Problem(iface string) error {
	b, err := os.ReadFile("/proc/sys/net/ipv6/conf/" + iface + "/disable_ipv6")
	switch {
	case errors.Is(err, os.ErrNotExist):
		if _, err := os.Stat("/proc/sys/net/ipv6"); errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("%w: the kernel has no IPv6 (no /proc/sys/net/ipv6)", ErrNoIPv6)
		}
		return nil // no per-link entry yet; let the address wait decide
	case err != nil:
		return nil
	case strings.TrimSpace(string(b)) != "0":
		return fmt.Errorf("%w on %s: net.ipv6.conf.%s.disable_ipv6=%s", ErrNoIPv6, iface, iface, strings.TrimSpace(string(b)))
	}
	return nil
}

// linkLocal returns the link-local address of the link with index idx once
// it has left DAD; tentative reports that one is still in DAD, failed that
// one failed it.
func linkLocal(h *netlink.Handle, idx int) (addr netip.Addr, tentative, failed bool) {
	addrs, err := h.AddrList(&netlink.Device{LinkAttrs: netlink.LinkAttrs{Index: idx}}, netlink.FAMILY_V6)
	if err != nil {
		return netip.Addr{}, false, false
	}
	for _, a := range addrs {
		ip, ok := netip.AddrFromSlice(a.IP)
		if !ok || !ip.Is6() || !ip.IsLinkLocalUnicast() {
			continue
		}
		switch {
		case a.Flags&unix.IFA_F_DADFAILED != 0:
			failed = true
		case a.Flags&unix.IFA_F_TENTATIVE != 0:
			tentative = true
		default:
			return ip, false, false
		}
	}
	return netip.Addr{}, tentative, failed
}

// waitLinkLocal waits, at most timeout, until every link in ls has a
// link-local address that left DAD (DHCPv6 is sent from it). It returns the
// addresses found, and for the other links why not.
func waitLinkLocal(ctx context.Context, h *netlink.Handle, ls []linkInfo, timeout time.Duration) (map[int]netip.Addr, map[int]error) {
	found := map[int]netip.Addr{}
	why := map[int]error{}
	pending := 0
	for _, l := range ls {
		if err := ipv6Problem(l.Name); err != nil {
			why[l.Index] = err
			continue
		}
		pending++
	}
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(carrierPoll)
	defer tick.Stop()
	for pending > 0 {
		for _, l := range ls {
			if _, done := found[l.Index]; done {
				continue
			}
			if _, bad := why[l.Index]; bad {
				continue
			}
			switch ip, _, failed := linkLocal(h, l.Index); {
			case ip.IsValid():
				found[l.Index] = ip
				pending--
			case failed:
				why[l.Index] = fmt.Errorf("the link-local address of %s failed duplicate address detection", l.Name)
				pending--
			}
		}
		if pending == 0 {
			break
		}
		select {
		case <-ctx.Done():
			pending = 0
		case <-deadline.C:
			pending = 0
		case <-tick.C:
		}
	}
	for _, l := range ls {
		if _, ok := found[l.Index]; ok {
			continue
		}
		if _, ok := why[l.Index]; ok {
			continue
		}
		if err := ctx.Err(); err != nil {
			why[l.Index] = err
			continue
		}
		_, tentative, _ := linkLocal(h, l.Index)
		state := "no link-local address"
		if tentative {
			state = "link-local address still tentative (DAD)"
		}
		why[l.Index] = fmt.Errorf("%s on %s after %v", state, l.Name, timeout)
	}
	return found, why
}

// newClient6 opens the DHCPv6 client socket on [ll%index]:546. Call it on
// the thread whose namespace the link is in.
func newClient6(name string, index int, ll netip.Addr, hw net.HardwareAddr, o Options, extra ...nclient6.ClientOpt) (*nclient6.Client, error) {
	conn, err := net.ListenUDP("udp6", &net.UDPAddr{IP: ll.AsSlice(), Port: dhcpv6.DefaultClientPort, Zone: strconv.Itoa(index)})
	if err != nil {
		return nil, fmt.Errorf("opening DHCPv6 socket on %s: %w", name, err)
	}
	if len(hw) < 4 {
		conn.Close()
		return nil, fmt.Errorf("DHCPv6 on %s: hardware address %q too short for a DUID", name, hw)
	}
	opts := append(o.client6Options(name, index), extra...)
	c, err := nclient6.NewWithConn(conn, hw, opts...)
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("creating DHCPv6 client on %s: %w", name, err)
	}
	return c, nil
}

// apply6 adds the DHCPv6 address (a /128, no route: router advertisements
// provide the prefix and the default route) and waits, bounded, for it to
// leave DAD so that it can be used as a source address.
func (l *Lease) apply6() error {
	s := l.sys
	log := s.opts.logger()
	if !l.Addr6.Addr().Is6() || l.Addr6.Addr().Is4In6() {
		return fmt.Errorf("configuring %s: %s is not an IPv6 address", l.Iface, l.Addr6)
	}
	link := &netlink.Device{LinkAttrs: netlink.LinkAttrs{Index: s.index, Name: l.Iface}}
	switch err := s.h.AddrAdd(link, &netlink.Addr{IPNet: ipNet(l.Addr6)}); {
	case err == nil:
		l.Applied.Addr6 = l.Addr6
	case errors.Is(err, unix.EEXIST):
		log.Debug("netup: address already present, leaving it", "iface", l.Iface, "addr", l.Addr6.String())
		return nil
	default:
		return fmt.Errorf("adding address %s to %s: %w", l.Addr6, l.Iface, err)
	}
	deadline := time.Now().Add(s.opts.dadTimeout())
	for {
		addrs, err := s.h.AddrList(link, netlink.FAMILY_V6)
		if err != nil {
			return fmt.Errorf("listing addresses of %s: %w", l.Iface, err)
		}
		state := -1 // -1 missing, 0 tentative, 1 ok
		for _, a := range addrs {
			if ip, ok := netip.AddrFromSlice(a.IP); !ok || ip != l.Addr6.Addr() {
				continue
			}
			switch {
			case a.Flags&unix.IFA_F_DADFAILED != 0:
				return fmt.Errorf("address %s on %s failed duplicate address detection", l.Addr6, l.Iface)
			case a.Flags&unix.IFA_F_TENTATIVE != 0:
				state = 0
			default:
				state = 1
			}
		}
		switch {
		case state == 1:
			return nil
		case state < 0:
			return fmt.Errorf("address %s vanished from %s", l.Addr6, l.Iface)
		case time.Now().After(deadline):
			log.Warn("netup: DHCPv6 address still tentative, continuing", "iface", l.Iface, "addr", l.Addr6.String())
			return nil
		}
		time.Sleep(carrierPoll)
	}
}

// release6 sends the DHCPv6 RELEASE from the link-local address and waits
// for the REPLY.
func (l *Lease) release6(ctx context.Context) error {
	s := l.sys
	ll, _, _ := linkLocal(s.h, s.index)
	if !ll.IsValid() {
		return fmt.Errorf("releasing DHCPv6 lease on %s: no usable link-local address", l.Iface)
	}
	c, err := newClient6(l.Iface, s.index, ll, net.HardwareAddr(l.HWAddr), s.opts, nclient6.WithTimeout(releaseTimeout6))
	if err != nil {
		return fmt.Errorf("releasing DHCPv6 lease on %s: %w", l.Iface, err)
	}
	err = release6Via(ctx, c, s.raw6)
	c.Close()
	if err != nil {
		return fmt.Errorf("releasing DHCPv6 lease on %s to %s: %w", l.Iface, l.ServerID6, err)
	}
	l.Applied.Released6 = true
	s.opts.logger().Info("netup: DHCPv6 lease released", "iface", l.Iface, "addr6", l.Addr6.String(), "server_id6", l.ServerID6.String())
	return nil
}
