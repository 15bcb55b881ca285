package netup

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4/nclient4"
	"github.com/insomniacslk/dhcp/dhcpv6"
	"github.com/insomniacslk/dhcp/dhcpv6/nclient6"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// carrierPoll is how often link state is re-read while waiting for carrier.
const carrierPoll = 50 * time.Millisecond

// system holds what a lease needs to undo itself.
type system struct {
	h        *netlink.Handle
	index    int
	raw      *nclient4.Lease
	raw6     *dhcpv6.Message // the DHCPv6 REPLY, for the RELEASE
	opts     Options
	resolv   []byte // previous resolv.conf contents
	hadResol bool   // resolv.conf existed before
}

// Up brings up an ephemeral configuration with DHCPv4 and/or DHCPv6
// (Options.Family) and returns the first lease obtained on any candidate
// link, applied. See the package documentation for the contract.
func Up(ctx context.Context, o Options) (*Lease, error) {
	log := o.logger()
	start := time.Now()
	fam := o.Family
	if !fam.v4() && !fam.v6() {
		return nil, fmt.Errorf("netup.Up: unknown address family %s", fam)
	}
	h, err := netlink.NewHandle(unix.NETLINK_ROUTE)
	if err != nil {
		return nil, fmt.Errorf("opening netlink: %w", err)
	}
	cands, wasDown, err := prepareLinks(ctx, h, o.Interfaces, o)
	if err != nil {
		h.Close()
		return nil, err
	}
	names := make([]string, len(cands))
	for i, c := range cands {
		names[i] = c.Name
	}
	// Sockets are opened here, on the calling thread, so they belong to
	// its network namespace.
	clients := make([]*nclient4.Client, len(cands))
	openErrs := make([]error, len(cands))
	if fam.v4() {
		for i, c := range cands {
			conn, err := nclient4.NewRawUDPConn(c.Name, nclient4.ClientPort)
			if err != nil {
				openErrs[i] = fmt.Errorf("opening DHCP socket on %s: %w", c.Name, err)
				continue
			}
			cl, err := nclient4.NewWithConn(conn, c.HWAddr, o.clientOptions(c.Name)...)
			if err != nil {
				conn.Close()
				openErrs[i] = fmt.Errorf("creating DHCP client on %s: %w", c.Name, err)
				continue
			}
			clients[i] = cl
		}
	}
	clients6 := make([]*nclient6.Client, len(cands))
	openErrs6 := make([]error, len(cands))
	if fam.v6() {
		start6 := time.Now()
		lls, why := waitLinkLocal(ctx, h, cands, o.dadTimeout())
		log.Debug("netup: link-local addresses", "found", len(lls), "duration", time.Since(start6))
		for i, c := range cands {
			ll, ok := lls[c.Index]
			if !ok {
				openErrs6[i] = fmt.Errorf("DHCPv6 on %s: %w", c.Name, why[c.Index])
				continue
			}
			cl, err := newClient6(c.Name, c.Index, ll, c.HWAddr, o)
			if err != nil {
				openErrs6[i] = err
				continue
			}
			clients6[i] = cl
		}
	}
	log.Info("netup: DHCP", "family", fam.String(), "iface", strings.Join(names, ","))
	type won struct {
		l     *Lease
		raw   *nclient4.Lease
		raw6  *dhcpv6.Message
		index int
	}
	idx, w, err := firstLease(ctx, names, func(ctx context.Context, i int) (won, error) {
		var (
			l4, l6     *Lease
			raw        *nclient4.Lease
			raw6       *dhcpv6.Message
			err4, err6 error
			done6      = make(chan struct{})
		)
		go func() {
			defer close(done6)
			if !fam.v6() {
				return
			}
			if clients6[i] == nil {
				err6 = openErrs6[i]
				return
			}
			l6, raw6, err6 = acquire6(ctx, clients6[i], names[i])
		}()
		if fam.v4() {
			if clients[i] == nil {
				err4 = openErrs[i]
			} else {
				l4, raw, err4 = acquire(ctx, clients[i], names[i], o)
			}
		}
		<-done6
		switch {
		case l4 == nil && l6 == nil:
			return won{}, errors.Join(err4, err6)
		case l4 == nil:
			if fam.v4() {
				log.Warn("netup: DHCPv4 failed, keeping the DHCPv6 lease", "iface", names[i], "err", err4)
			}
			return won{l: l6, raw6: raw6}, nil
		case l6 != nil:
			l4.merge6(l6)
		case fam.v6():
			log.Warn("netup: DHCPv6 failed, keeping the DHCPv4 lease", "iface", names[i], "err", err6)
		}
		return won{l: l4, raw: raw, raw6: raw6}, nil
	}, func(i int, v won) {
		// A second lease nobody will use: give it back.
		if v.raw != nil {
			if err := releaseVia(clients[i], v.raw); err != nil {
				log.Debug("netup: releasing unused lease", "iface", names[i], "err", err)
			}
		}
		if v.raw6 != nil {
			rctx, cancel := context.WithTimeout(context.Background(), releaseTimeout6)
			if err := release6Via(rctx, clients6[i], v.raw6); err != nil {
				log.Debug("netup: releasing unused DHCPv6 lease", "iface", names[i], "err", err)
			}
			cancel()
		}
	})
	for i := range cands {
		if clients[i] != nil {
			clients[i].Close()
		}
		if clients6[i] != nil {
			clients6[i].Close()
		}
	}
	// Links that did not win go back to the way they were.
	for i, c := range cands {
		if i != idx && wasDown[c.Index] {
			if err := h.LinkSetDown(&netlink.Device{LinkAttrs: netlink.LinkAttrs{Index: c.Index}}); err != nil {
				log.Warn("netup: setting link down again", "iface", c.Name, "err", err)
			}
		}
	}
	if err != nil {
		h.Close()
		log.Warn("netup: no lease", "iface", strings.Join(names, ","), "duration", time.Since(start), "err", err)
		return nil, err
	}
	l := w.l
	l.Uptime = uptime()
	for _, d := range l.Dropped {
		log.Warn("netup: "+d, "iface", l.Iface)
	}
	l.Applied.LinkWasDown = wasDown[cands[idx].Index]
	l.sys = &system{h: h, index: cands[idx].Index, raw: w.raw, raw6: w.raw6, opts: o}
	if err := l.apply(); err != nil {
		log.Warn("netup: applying lease", "iface", l.Iface, "err", err)
		if derr := l.Down(); derr != nil {
			err = errors.Join(err, derr)
		}
		return nil, err
	}
	attrs := []any{"iface", l.Iface}
	if l.Addr.IsValid() {
		attrs = append(attrs, "addr", l.Addr.String(), "router", l.Router.String(),
			"server_id", l.ServerID.String(), "lease_time", l.LeaseTime)
	}
	if l.Addr6.IsValid() {
		attrs = append(attrs, "addr6", l.Addr6.String(), "server_id6", l.ServerID6.String(), "lease_time6", l.LeaseTime6)
	}
	log.Info("netup: lease applied", append(attrs, "duration", time.Since(start))...)
	return l, nil
}

// Static applies a configuration from the kernel ip= argument. DHCP forms
// (ip=dhcp, ip=eth0:dhcp, ...) go through Up restricted to the named device;
// static forms configure the named device (or the first candidate link,
// carrier first) without any DHCP traffic. ip=dhcp6 (dracut) runs Up with
// FamilyV6. ErrDisabled for ip=off/none.
func Static(ctx context.Context, c IPConfig, o Options) (*Lease, error) {
	if c.Disabled() {
		return nil, ErrDisabled
	}
	if !c.AllDevices() {
		o.Interfaces = []string{c.Device}
	}
	if c.Autoconf == "dhcp6" && !c.ClientIP.IsValid() {
		o.Family = FamilyV6
		return Up(ctx, o)
	}
	if c.DHCP() {
		if o.Hostname == "" {
			o.Hostname = c.Hostname
		}
		return Up(ctx, o)
	}
	if !c.Static() {
		return nil, fmt.Errorf("ip=%s: autoconf method %q: %w", c, c.Autoconf, ErrUnsupported)
	}
	log := o.logger()
	start := time.Now()
	h, err := netlink.NewHandle(unix.NETLINK_ROUTE)
	if err != nil {
		return nil, fmt.Errorf("opening netlink: %w", err)
	}
	cands, wasDown, err := prepareLinks(ctx, h, o.Interfaces, o)
	if err != nil {
		h.Close()
		return nil, err
	}
	for _, x := range cands[1:] {
		if wasDown[x.Index] {
			if err := h.LinkSetDown(&netlink.Device{LinkAttrs: netlink.LinkAttrs{Index: x.Index}}); err != nil {
				log.Warn("netup: setting link down again", "iface", x.Name, "err", err)
			}
		}
	}
	l := leaseFromIPConfig(c, cands[0].Name, HardwareAddr(cands[0].HWAddr))
	for _, d := range l.Dropped {
		log.Warn("netup: "+d, "iface", l.Iface)
	}
	l.Acquired = time.Now()
	l.Uptime = uptime()
	l.Applied.LinkWasDown = wasDown[cands[0].Index]
	l.sys = &system{h: h, index: cands[0].Index, opts: o}
	if err := l.apply(); err != nil {
		if derr := l.Down(); derr != nil {
			err = errors.Join(err, derr)
		}
		return nil, err
	}
	log.Info("netup: static address applied", "iface", l.Iface, "addr", l.Addr.String(), "duration", time.Since(start))
	return l, nil
}

// prepareLinks lists and selects candidate links, sets them up and waits
// (bounded) for carrier. It returns the candidates to try: those with
// carrier, or all of them when none got carrier in time. wasDown records
// the links it set up.
func prepareLinks(ctx context.Context, h *netlink.Handle, patterns []string, o Options) ([]linkInfo, map[int]bool, error) {
	log := o.logger()
	links, err := listLinks(h)
	if err != nil {
		return nil, nil, err
	}
	cands := selectLinks(links, patterns)
	if len(cands) == 0 {
		if len(patterns) > 0 {
			return nil, nil, fmt.Errorf("%w matching %q", ErrNoInterfaces, patterns)
		}
		return nil, nil, ErrNoInterfaces
	}
	wasDown := map[int]bool{}
	var errs []error
	usable := cands[:0:0]
	for _, c := range cands {
		if !c.Up {
			if err := h.LinkSetUp(&netlink.Device{LinkAttrs: netlink.LinkAttrs{Index: c.Index}}); err != nil {
				errs = append(errs, fmt.Errorf("setting %s up: %w", c.Name, err))
				continue
			}
			wasDown[c.Index] = true
		}
		usable = append(usable, c)
	}
	if len(usable) == 0 {
		return nil, nil, fmt.Errorf("%w: %w", ErrNoInterfaces, errors.Join(errs...))
	}
	start := time.Now()
	withCarrier := waitCarrier(ctx, h, usable, o.carrierTimeout())
	if len(withCarrier) == 0 {
		log.Warn("netup: no carrier, trying every link anyway", "iface", linkNames(usable), "duration", time.Since(start))
		return usable, wasDown, nil
	}
	log.Debug("netup: carrier", "iface", linkNames(withCarrier), "duration", time.Since(start))
	// Put back the links we set up but will not use.
	for _, c := range usable {
		if wasDown[c.Index] && !containsIndex(withCarrier, c.Index) {
			_ = h.LinkSetDown(&netlink.Device{LinkAttrs: netlink.LinkAttrs{Index: c.Index}})
			delete(wasDown, c.Index)
		}
	}
	return withCarrier, wasDown, nil
}

func containsIndex(ls []linkInfo, idx int) bool {
	for _, l := range ls {
		if l.Index == idx {
			return true
		}
	}
	return false
}

func linkNames(ls []linkInfo) string {
	n := make([]string, len(ls))
	for i, l := range ls {
		n[i] = l.Name
	}
	return strings.Join(n, ",")
}

func listLinks(h *netlink.Handle) ([]linkInfo, error) {
	var links []netlink.Link
	var err error
	for range 3 {
		links, err = h.LinkList()
		if !errors.Is(err, netlink.ErrDumpInterrupted) {
			break
		}
	}
	if err != nil && !errors.Is(err, netlink.ErrDumpInterrupted) {
		return nil, fmt.Errorf("listing links: %w", err)
	}
	out := make([]linkInfo, 0, len(links))
	for _, l := range links {
		out = append(out, toLinkInfo(l))
	}
	return out, nil
}

func toLinkInfo(l netlink.Link) linkInfo {
	a := l.Attrs()
	return linkInfo{
		Name:     a.Name,
		Index:    a.Index,
		Type:     l.Type(),
		Encap:    a.EncapType,
		Loopback: a.Flags&net.FlagLoopback != 0,
		Carrier:  a.RawFlags&unix.IFF_LOWER_UP != 0,
		Up:       a.Flags&net.FlagUp != 0,
		HWAddr:   a.HardwareAddr,
	}
}

// waitCarrier polls until at least one link has carrier (returning all that
// have it then), the timeout passes or ctx ends (returning none).
func waitCarrier(ctx context.Context, h *netlink.Handle, ls []linkInfo, timeout time.Duration) []linkInfo {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(carrierPoll)
	defer tick.Stop()
	for {
		var have []linkInfo
		for _, l := range ls {
			nl, err := h.LinkByIndex(l.Index)
			if err != nil {
				continue
			}
			if li := toLinkInfo(nl); li.Carrier {
				have = append(have, li)
			}
		}
		if len(have) > 0 {
			return have
		}
		select {
		case <-ctx.Done():
			return nil
		case <-deadline.C:
			return nil
		case <-tick.C:
		}
	}
}

// apply adds the address, routes and resolv.conf of l, recording each change.
func (l *Lease) apply() error {
	s := l.sys
	if !l.Addr.IsValid() && !l.Addr6.IsValid() {
		return fmt.Errorf("configuring %s: no address", l.Iface)
	}
	if l.Addr.IsValid() {
		if err := l.apply4(); err != nil {
			return err
		}
	}
	if l.Addr6.IsValid() {
		if err := l.apply6(); err != nil {
			return err
		}
	}
	if p := s.opts.ResolvConf; p != "" && len(l.DNS)+len(l.DNS6) > 0 {
		prev, err := os.ReadFile(p)
		switch {
		case err == nil:
			s.resolv, s.hadResol = prev, true
		case errors.Is(err, os.ErrNotExist):
		default:
			return fmt.Errorf("reading %s: %w", p, err)
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fmt.Errorf("writing DNS for %s: %w", l.Iface, err)
		}
		if err := writeFileAtomic(p, renderResolvConf(l), 0o644); err != nil {
			return fmt.Errorf("writing DNS for %s: %w", l.Iface, err)
		}
		l.Applied.ResolvConf = p
	}
	return nil
}

// apply4 adds the IPv4 address and routes of l.
func (l *Lease) apply4() error {
	s := l.sys
	log := s.opts.logger()
	link := &netlink.Device{LinkAttrs: netlink.LinkAttrs{Index: s.index, Name: l.Iface}}
	if !l.Addr.Addr().Is4() {
		return fmt.Errorf("configuring %s: %s is not an IPv4 address", l.Iface, l.Addr)
	}
	bcast := l.Broadcast
	if !bcast.IsValid() {
		bcast = broadcastOf(l.Addr)
	}
	addr := &netlink.Addr{IPNet: ipNet(l.Addr)}
	if bcast.IsValid() {
		addr.Broadcast = bcast.AsSlice()
	}
	switch err := s.h.AddrAdd(link, addr); {
	case err == nil:
		l.Applied.Addr = l.Addr
	case errors.Is(err, unix.EEXIST):
		log.Debug("netup: address already present, leaving it", "iface", l.Iface, "addr", l.Addr.String())
	default:
		return fmt.Errorf("adding address %s to %s: %w", l.Addr, l.Iface, err)
	}
	proto := netlink.RouteProtocol(unix.RTPROT_DHCP)
	if l.Proto == ProtoStatic {
		proto = unix.RTPROT_STATIC
	}
	for _, r := range planRoutes(l, s.opts.LinkLocalRoutes) {
		nr := netlinkRoute(r, s.index, l.Addr.Addr(), s.opts.RouteMetric, proto)
		switch err := s.h.RouteAdd(nr); {
		case err == nil:
			l.Applied.Routes = append(l.Applied.Routes, r)
		case errors.Is(err, unix.EEXIST):
			log.Debug("netup: route already present, leaving it", "iface", l.Iface, "route", r.String())
		default:
			return fmt.Errorf("adding route %s on %s: %w", r, l.Iface, err)
		}
	}
	return nil
}

func ipNet(p netip.Prefix) *net.IPNet {
	return &net.IPNet{IP: p.Addr().AsSlice(), Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())}
}

func netlinkRoute(r Route, index int, src netip.Addr, metric int, proto netlink.RouteProtocol) *netlink.Route {
	nr := &netlink.Route{
		LinkIndex: index,
		Dst:       ipNet(r.Dst),
		Priority:  metric,
		Protocol:  proto,
		Family:    unix.AF_INET,
	}
	if r.Gateway.IsValid() {
		nr.Gw = r.Gateway.AsSlice()
		nr.Scope = netlink.SCOPE_UNIVERSE
	} else {
		nr.Scope = netlink.SCOPE_LINK
		nr.Src = src.AsSlice()
	}
	return nr
}

// Down removes every address and route Up/Static added, restores
// resolv.conf and sets the link down again if it was down. It is safe to
// call more than once; the second call does nothing.
func (l *Lease) Down() error {
	s := l.sys
	if s == nil || l.Applied.Down {
		return nil
	}
	log := s.opts.logger()
	start := time.Now()
	var errs []error
	link := &netlink.Device{LinkAttrs: netlink.LinkAttrs{Index: s.index, Name: l.Iface}}
	for i := len(l.Applied.Routes) - 1; i >= 0; i-- {
		r := l.Applied.Routes[i]
		err := s.h.RouteDel(netlinkRoute(r, s.index, l.Addr.Addr(), s.opts.RouteMetric, 0))
		if err != nil && !gone(err) {
			errs = append(errs, fmt.Errorf("removing route %s from %s: %w", r, l.Iface, err))
		}
	}
	for _, a := range []netip.Prefix{l.Applied.Addr, l.Applied.Addr6} {
		if !a.IsValid() {
			continue
		}
		err := s.h.AddrDel(link, &netlink.Addr{IPNet: ipNet(a)})
		if err != nil && !gone(err) {
			errs = append(errs, fmt.Errorf("removing address %s from %s: %w", a, l.Iface, err))
		}
	}
	if p := l.Applied.ResolvConf; p != "" {
		var err error
		if s.hadResol {
			err = writeFileAtomic(p, s.resolv, 0o644)
		} else if err = os.Remove(p); errors.Is(err, os.ErrNotExist) {
			err = nil
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("restoring %s: %w", p, err))
		}
	}
	if l.Applied.LinkWasDown {
		if err := s.h.LinkSetDown(link); err != nil && !gone(err) {
			errs = append(errs, fmt.Errorf("setting %s down: %w", l.Iface, err))
		}
	}
	s.h.Close()
	l.Applied.Down = true
	err := errors.Join(errs...)
	if err != nil {
		log.Warn("netup: teardown", "iface", l.Iface, "duration", time.Since(start), "err", err)
		return err
	}
	log.Info("netup: torn down", "iface", l.Iface, "duration", time.Since(start))
	return nil
}

// gone reports errors meaning "already not there".
func gone(err error) bool {
	return errors.Is(err, unix.ESRCH) || errors.Is(err, unix.ENOENT) ||
		errors.Is(err, unix.EADDRNOTAVAIL) || errors.Is(err, unix.ENODEV)
}

// Release sends DHCPRELEASE for a DHCPv4 lease (unicast from the leased
// address to the server identifier) and a DHCPv6 RELEASE for a DHCPv6 lease
// (to All_DHCP_Relay_Agents_and_Servers from the link-local address, waiting
// for the server's REPLY within ctx). Call it before Down, while the
// address is configured. It does nothing for static leases or for what was
// already released; a family that fails is tried again by the next call.
func (l *Lease) Release(ctx context.Context) error {
	s := l.sys
	if s == nil || l.Proto == ProtoStatic {
		return nil
	}
	need4 := s.raw != nil && !l.Applied.Released
	need6 := s.raw6 != nil && !l.Applied.Released6
	if !need4 && !need6 {
		return nil
	}
	if l.Applied.Down {
		return fmt.Errorf("releasing lease on %s: already torn down (call Release before Down)", l.Iface)
	}
	var errs []error
	if need4 {
		errs = append(errs, l.release4(ctx))
	}
	if need6 {
		errs = append(errs, l.release6(ctx))
	}
	return errors.Join(errs...)
}

func (l *Lease) release4(ctx context.Context) error {
	s := l.sys
	lc := net.ListenConfig{Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		err := rc.Control(func(fd uintptr) {
			if serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEADDR, 1); serr != nil {
				return
			}
			serr = unix.BindToDevice(int(fd), l.Iface)
		})
		return errors.Join(err, serr)
	}}
	local := netip.AddrPortFrom(l.Addr.Addr(), nclient4.ClientPort)
	conn, err := lc.ListenPacket(ctx, "udp4", local.String())
	if err != nil {
		return fmt.Errorf("releasing lease on %s: %w", l.Iface, err)
	}
	if d, ok := ctx.Deadline(); ok {
		_ = conn.SetWriteDeadline(d)
	}
	c, err := nclient4.NewWithConn(conn, net.HardwareAddr(l.HWAddr), s.opts.clientOptions(l.Iface)...)
	if err != nil {
		conn.Close()
		return fmt.Errorf("releasing lease on %s: %w", l.Iface, err)
	}
	err = releaseVia(c, s.raw)
	c.Close()
	if err != nil {
		return fmt.Errorf("releasing lease on %s to %s: %w", l.Iface, l.ServerID, err)
	}
	l.Applied.Released = true
	s.opts.logger().Info("netup: lease released", "iface", l.Iface, "server_id", l.ServerID.String())
	return nil
}

func uptime() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts); err != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}
