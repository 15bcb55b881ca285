package netup

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"

	"github.com/insomniacslk/dhcp/dhcpv4"
)

// requestedOptions is the parameter request list (option 55) sent with
// DISCOVER and REQUEST.
func requestedOptions() []dhcpv4.OptionCode {
	return []dhcpv4.OptionCode{
		dhcpv4.OptionSubnetMask,
		dhcpv4.OptionRouter,
		dhcpv4.OptionDomainNameServer,
		dhcpv4.OptionHostName,
		dhcpv4.OptionDomainName,
		dhcpv4.OptionRootPath,
		dhcpv4.OptionInterfaceMTU,
		dhcpv4.OptionBroadcastAddress,
		dhcpv4.OptionNTPServers,
		dhcpv4.OptionNetworkInformationServiceDomain,
		dhcpv4.OptionIPAddressLeaseTime,
		dhcpv4.OptionServerIdentifier,
		dhcpv4.OptionDNSDomainSearchList,
		dhcpv4.OptionClasslessStaticRoute,
		OptionAzureWireserver,
	}
}

// OptionAzureWireserver is the private-use DHCP option in which Azure
// hands out its wireserver address (cloud-init's "unknown-245").
const OptionAzureWireserver = dhcpv4.GenericOptionCode(245)

// privateOptions copies the site-specific and private-use options (codes
// 224-254) and vendor-specific information (43) of an ACK: nothing else
// parses them, and some clouds put their service addresses there.
func privateOptions(ack *dhcpv4.DHCPv4) map[uint8][]byte {
	var out map[uint8][]byte
	for code, v := range ack.Options {
		if code == dhcpv4.OptionVendorSpecificInformation.Code() || (code >= 224 && code <= 254) {
			if out == nil {
				out = map[uint8][]byte{}
			}
			out[code] = append([]byte(nil), v...)
		}
	}
	return out
}

// modifiers builds what every DHCP message carries.
func (o Options) modifiers() []dhcpv4.Modifier {
	m := []dhcpv4.Modifier{dhcpv4.WithRequestedOptions(requestedOptions()...)}
	if o.Hostname != "" {
		m = append(m, dhcpv4.WithOption(dhcpv4.OptHostName(o.Hostname)))
	}
	if o.VendorClass != "" {
		m = append(m, dhcpv4.WithOption(dhcpv4.OptClassIdentifier(o.VendorClass)))
	}
	return m
}

// leaseFromACK turns a DHCPACK into a Lease (nothing applied yet).
func leaseFromACK(iface string, hw HardwareAddr, ack *dhcpv4.DHCPv4) (*Lease, error) {
	addr, ok := addr4(ack.YourIPAddr)
	if !ok || addr.IsUnspecified() {
		return nil, fmt.Errorf("ACK from %s carries no address", ack.ServerIdentifier())
	}
	bits := classfulBits(addr)
	if m := ack.SubnetMask(); m != nil {
		if ones, size := m.Size(); size == 32 {
			bits = ones
		}
	}
	l := &Lease{
		Iface:     iface,
		HWAddr:    hw,
		Proto:     ProtoDHCP,
		Addr:      netip.PrefixFrom(addr, bits),
		Domain:    ack.DomainName(),
		Hostname:  ack.HostName(),
		RootPath:  ack.RootPath(),
		BootFile:  ack.BootFileNameOption(),
		LeaseTime: ack.IPAddressLeaseTime(0),
	}
	if l.BootFile == "" {
		l.BootFile = ack.BootFileName
	}
	if b, ok := addr4(ack.BroadcastAddress()); ok {
		l.Broadcast = b
	}
	for _, r := range ack.Router() {
		if a, ok := addr4(r); ok && !a.IsUnspecified() {
			l.Router = a
			break
		}
	}
	for _, r := range ack.ClasslessStaticRoute() {
		dst, ok := addr4(r.Dest.IP)
		if !ok {
			continue
		}
		ones, _ := r.Dest.Mask.Size()
		rt := Route{Dst: netip.PrefixFrom(dst, ones).Masked()}
		if gw, ok := addr4(r.Router); ok && !gw.IsUnspecified() {
			rt.Gateway = gw
		}
		l.Routes = append(l.Routes, rt)
	}
	l.DNS = addrs4(ack.DNS())
	l.NTP = addrs4(ack.NTPServers())
	if s := ack.DomainSearch(); s != nil {
		l.Search = append(l.Search, s.Labels...)
	}
	if v := ack.Options.Get(dhcpv4.OptionNetworkInformationServiceDomain); len(v) > 0 {
		l.NISDomain = string(v)
	}
	if v := ack.Options.Get(dhcpv4.OptionInterfaceMTU); len(v) == 2 {
		l.MTU = int(v[0])<<8 | int(v[1])
	}
	if a, ok := addr4(ack.ServerIdentifier()); ok {
		l.ServerID = a
	}
	if a, ok := addr4(ack.ServerIPAddr); ok && !a.IsUnspecified() {
		l.NextServer = a
	}
	l.Options = privateOptions(ack)
	l.sanitize()
	return l, nil
}

func addr4(ip net.IP) (netip.Addr, bool) {
	v4 := ip.To4()
	if v4 == nil {
		return netip.Addr{}, false
	}
	a, ok := netip.AddrFromSlice(v4)
	return a, ok
}

func addrs4(ips []net.IP) []netip.Addr {
	var out []netip.Addr
	for _, ip := range ips {
		if a, ok := addr4(ip); ok && !a.IsUnspecified() {
			out = append(out, a)
		}
	}
	return out
}

// firstLease runs try for every candidate concurrently and returns the first
// lease; the others are cancelled. A lease that completes after the winner
// is handed to loser (to be released). With no success, every failure is
// joined under ErrNoLease.
func firstLease[T any](ctx context.Context, names []string, try func(ctx context.Context, i int) (T, error), loser func(i int, v T)) (int, T, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type result struct {
		i   int
		v   T
		err error
	}
	ch := make(chan result, len(names))
	for i := range names {
		go func() {
			v, err := try(ctx, i)
			ch <- result{i, v, err}
		}()
	}
	var errs []error
	winner := -1
	var win T
	for range names {
		r := <-ch
		switch {
		case r.err != nil:
			if winner < 0 {
				errs = append(errs, r.err)
			}
		case winner < 0:
			winner, win = r.i, r.v
			cancel()
		default:
			loser(r.i, r.v)
		}
	}
	if winner < 0 {
		var zero T
		return -1, zero, fmt.Errorf("%w on %v: %w", ErrNoLease, names, errors.Join(errs...))
	}
	return winner, win, nil
}
