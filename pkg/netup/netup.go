// Package netup brings up an ephemeral network (DHCPv4, DHCPv6 or static
// ip=) inside the initramfs so that network datasources (an IMDS, an
// #include URL) can be probed, and tears it down again before switch_root.
//
// # Contract
//
//   - Nothing here runs unless a caller asks: a local seed that needs nothing
//     remote boots without touching a NIC.
//   - [Up] picks links (Options.Interfaces, or every non-loopback
//     ethernet-like link, carrier first), sets them up, waits a bounded time
//     for carrier, runs DHCPv4 (DISCOVER/OFFER/REQUEST/ACK with
//     insomniacslk/dhcp nclient4) on all of them in parallel and keeps the
//     first lease. Links that did not win are put back the way they were.
//   - With Options.Family including FamilyV6, Up also (or only) runs DHCPv6
//     (SOLICIT/ADVERTISE/REQUEST/REPLY for one IA_NA address, nclient6) on
//     each link, after waiting a bounded time for the link-local address to
//     leave DAD. The leased address is added as a /128 and nothing else: the
//     on-link prefix and the default route come from router advertisements,
//     which the kernel handles itself (accept_ra is not touched). A link
//     wins as soon as every requested family has finished on it with at
//     least one lease; both families end up in the same [Lease].
//   - [Static] applies a configuration parsed from the kernel's ip= argument
//     ([ParseIPArg]); ip=dhcp forms go through [Up].
//   - Everything applied is recorded in [Lease.Applied]: address, routes,
//     resolv.conf, whether the link was down. [Lease.Down] undoes exactly that
//     and nothing else (an address or route that already existed is not
//     ours), so the real system starts clean. [Lease.Release] sends
//     DHCPRELEASE (and a DHCPv6 RELEASE for a DHCPv6 lease); call it before
//     Down, while the address is still there.
//   - [Lease.WriteKlibcState] writes /run/net-<iface>.conf in klibc
//     ipconfig's format, which cloud-init reads as its INITRAMFS network
//     source, and /run/net6-<iface>.conf (the IPV6* variables Ubuntu's
//     initramfs writes for DHCPv6) for a DHCPv6 lease. [FormatKlibc] and
//     [FormatKlibc6] are the pure formatters behind it.
//   - Every socket (netlink, raw packet, UDP, UDPv6) is created on the calling
//     goroutine: run Up, Static, Release and Down on a thread that is in the
//     target network namespace (trivially true for PID 1 in the initramfs;
//     tests lock an OS thread inside a namespace they create).
//
// Routes follow cloud-init's EphemeralIPv4Network and RFC 3442: when the
// lease carries classless static routes (option 121) the router option is
// ignored; a gateway outside the leased subnet gets an on-link host route
// first; Options.LinkLocalRoutes (e.g. the metadata address /32) are added
// on-link with the leased address as source unless the lease already routes
// that exact prefix.
package netup

import (
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// Defaults used when the corresponding Options field is zero.
const (
	// DefaultCarrierTimeout bounds the wait for carrier on the candidate links.
	DefaultCarrierTimeout = 5 * time.Second
	// DefaultDHCPTimeout is the first retransmission timeout; nclient4 doubles
	// it on every retry.
	DefaultDHCPTimeout = 2 * time.Second
	// DefaultDHCPRetries is the number of transmissions of each DHCP message.
	DefaultDHCPRetries = 3
	// DefaultKlibcDir is where klibc ipconfig writes its state files.
	DefaultKlibcDir = "/run"
	// DefaultDADTimeout bounds each wait for IPv6 duplicate address
	// detection: for the link-local address before DHCPv6 is sent, and for
	// the leased address after it is added.
	DefaultDADTimeout = 5 * time.Second
	// DefaultResolvConf is the resolv.conf path in the initramfs. It is not
	// used unless a caller puts it into Options.ResolvConf.
	DefaultResolvConf = "/etc/resolv.conf"
)

// Lease protocols, spelled as klibc ipconfig spells PROTO.
const (
	ProtoDHCP   = "dhcp"
	ProtoStatic = "none"
	// ProtoDHCP6 is the Proto of a lease obtained with DHCPv6 only (and
	// klibc's IPV6PROTO of every DHCPv6 lease).
	ProtoDHCP6 = "dhcp6"
)

// Family selects the DHCP protocols [Up] runs. The zero value is FamilyV4.
type Family uint8

const (
	// FamilyV4 runs DHCPv4 only (the default).
	FamilyV4 Family = 0
	// FamilyV6 runs DHCPv6 only.
	FamilyV6 Family = 1
	// FamilyBoth runs DHCPv4 and DHCPv6 in parallel on every candidate link;
	// a link wins when both have finished on it and at least one gave a
	// lease, so on a network without a DHCPv6 server Up waits for the whole
	// DHCPv6 retransmission schedule. Lower DHCPRetries accordingly.
	FamilyBoth Family = 2
)

func (f Family) v4() bool { return f == FamilyV4 || f == FamilyBoth }
func (f Family) v6() bool { return f == FamilyV6 || f == FamilyBoth }

func (f Family) String() string {
	switch f {
	case FamilyV4:
		return "v4"
	case FamilyV6:
		return "v6"
	case FamilyBoth:
		return "both"
	}
	return "Family(" + strconv.Itoa(int(f)) + ")"
}

// Sentinel errors callers branch on.
var (
	// ErrNoInterfaces: no link matched Options.Interfaces (or none is
	// ethernet-like).
	ErrNoInterfaces = errors.New("no usable network interface")
	// ErrNoLease: DHCP failed on every candidate link; the returned error
	// joins every per-link failure.
	ErrNoLease = errors.New("no DHCP lease")
	// ErrDisabled: the ip= argument turns networking off (ip=off, ip=none).
	ErrDisabled = errors.New("network disabled by ip= argument")
	// ErrUnsupported: bring-up is only implemented on Linux.
	ErrUnsupported = errors.New("network bring-up is not supported on this platform")
)

// Options configure [Up] and [Static]. The zero value works: every
// ethernet-like link, default timeouts, no link-local routes, no resolv.conf.
type Options struct {
	// Family selects DHCPv4 (zero value), DHCPv6 or both.
	Family Family
	// Interfaces are link names or path.Match globs ("eth*", "en*"), tried in
	// parallel. Empty: every non-loopback ethernet-like physical link.
	Interfaces []string
	// CarrierTimeout bounds the wait for carrier after setting links up.
	CarrierTimeout time.Duration
	// DHCPTimeout is the first retransmission timeout of each DHCP message.
	DHCPTimeout time.Duration
	// DHCPRetries is how many times each DHCP message is sent (≥1).
	DHCPRetries int
	// DADTimeout bounds each wait for IPv6 duplicate address detection
	// (DHCPv6 only).
	DADTimeout time.Duration
	// Hostname, if set, is sent as DHCP option 12 (DHCPv4 only).
	Hostname string
	// VendorClass, if set, is sent as DHCP option 60 (DHCPv4 only).
	VendorClass string
	// LinkLocalRoutes are added on-link on the leased interface with the
	// leased address as source, as cloud-init's EphemeralIPv4Network does
	// for the metadata address (pass imds.DefaultAddr as a /32).
	LinkLocalRoutes []netip.Prefix
	// RouteMetric is the priority of every route added.
	RouteMetric int
	// ResolvConf is where DNS servers from the lease (DHCPv4 and DHCPv6) are written (the
	// initramfs has /etc). Empty: resolv.conf is not touched. Down restores
	// what was there before.
	ResolvConf string
	// Logger receives one line per step; nil discards.
	Logger *slog.Logger
}

func (o Options) logger() *slog.Logger {
	if o.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return o.Logger
}

func (o Options) carrierTimeout() time.Duration {
	if o.CarrierTimeout > 0 {
		return o.CarrierTimeout
	}
	return DefaultCarrierTimeout
}

func (o Options) dhcpTimeout() time.Duration {
	if o.DHCPTimeout > 0 {
		return o.DHCPTimeout
	}
	return DefaultDHCPTimeout
}

func (o Options) dadTimeout() time.Duration {
	if o.DADTimeout > 0 {
		return o.DADTimeout
	}
	return DefaultDADTimeout
}

func (o Options) dhcpRetries() int {
	if o.DHCPRetries > 0 {
		return o.DHCPRetries
	}
	return DefaultDHCPRetries
}

// Route is one IPv4 route. An invalid Gateway means on-link.
type Route struct {
	Dst     netip.Prefix `json:"dst"`
	Gateway netip.Addr   `json:"gateway,omitzero"`
}

func (r Route) String() string {
	if r.Gateway.IsValid() {
		return r.Dst.String() + " via " + r.Gateway.String()
	}
	return r.Dst.String() + " on-link"
}

// Lease is what the ephemeral configuration is made of: the DHCP answer (or
// the static ip= settings) and what was applied to the system.
type Lease struct {
	Iface  string       `json:"iface"`
	HWAddr HardwareAddr `json:"hwaddr,omitempty"`
	// Proto is ProtoDHCP (DHCPv4, possibly with DHCPv6), ProtoDHCP6 (DHCPv6
	// only) or ProtoStatic.
	Proto string `json:"proto"`
	// Addr is the IPv4 address with its prefix length (invalid for a
	// DHCPv6-only lease).
	Addr      netip.Prefix `json:"addr"`
	Broadcast netip.Addr   `json:"broadcast,omitzero"`
	// Router is the first router offered (option 3).
	Router netip.Addr `json:"router,omitzero"`
	// Routes are the classless static routes (option 121).
	Routes     []Route      `json:"routes,omitempty"`
	DNS        []netip.Addr `json:"dns,omitempty"`
	Domain     string       `json:"domain,omitempty"`
	Search     []string     `json:"search,omitempty"`
	Hostname   string       `json:"hostname,omitempty"`
	NTP        []netip.Addr `json:"ntp,omitempty"`
	MTU        int          `json:"mtu,omitempty"`
	NISDomain  string       `json:"nis_domain,omitempty"`
	NextServer netip.Addr   `json:"next_server,omitzero"`
	RootPath   string       `json:"root_path,omitempty"`
	BootFile   string       `json:"boot_file,omitempty"`
	// ServerID is the DHCP server identifier (option 54); CloudStack finds
	// its virtual router by it.
	ServerID  netip.Addr    `json:"server_id,omitzero"`
	LeaseTime time.Duration `json:"lease_time,omitempty"`
	// Options are the ACK's vendor-specific (43) and private-use (224-254)
	// options, raw, by code (Azure's wireserver address is in 245).
	Options map[uint8][]byte `json:"options,omitempty"`
	// Acquired is when the ACK arrived; Uptime is the time since boot then
	// (klibc's UPTIME).
	Acquired time.Time     `json:"acquired,omitzero"`
	Uptime   time.Duration `json:"uptime,omitempty"`

	// Addr6 is the DHCPv6 IA_NA address as a /128: DHCPv6 carries no prefix
	// length (router advertisements do).
	Addr6 netip.Prefix `json:"addr6,omitzero"`
	// DNS6 and Search6 are DHCPv6 options 23 and 24.
	DNS6    []netip.Addr `json:"dns6,omitempty"`
	Search6 []string     `json:"search6,omitempty"`
	// Dropped says which offered values were refused (see sanitize).
	Dropped []string `json:"-"`
	// ServerID6 and ClientID6 are the DUIDs of the exchange (options 2 and
	// 1); the RELEASE carries both.
	ServerID6 DUID `json:"server_id6,omitempty"`
	ClientID6 DUID `json:"client_id6,omitempty"`
	// IAID6 is the IA_NA's identity association id.
	IAID6 uint32 `json:"iaid6,omitempty"`
	// LeaseTime6 and PreferredTime6 are the address's valid and preferred
	// lifetimes.
	LeaseTime6     time.Duration `json:"lease_time6,omitempty"`
	PreferredTime6 time.Duration `json:"preferred_time6,omitempty"`
	// Acquired6 is when the DHCPv6 REPLY arrived.
	Acquired6 time.Time `json:"acquired6,omitzero"`

	// Applied records the changes Up/Static made; Down undoes them.
	Applied Applied `json:"applied"`

	sys *system // platform handles; nil for a lease that was never applied
}

// Applied lists what was changed on the system, in the order it was done.
type Applied struct {
	// LinkWasDown: the link was set up by us and is set down again by Down.
	LinkWasDown bool `json:"link_was_down,omitempty"`
	// Addr is set when the address was added by us (not already present).
	Addr   netip.Prefix `json:"addr,omitzero"`
	Routes []Route      `json:"routes,omitempty"`
	// ResolvConf is the path written, if any.
	ResolvConf string `json:"resolv_conf,omitempty"`
	// Released: DHCPRELEASE was sent.
	Released bool `json:"released,omitempty"`
	// Addr6 is set when the DHCPv6 address was added by us.
	Addr6 netip.Prefix `json:"addr6,omitzero"`
	// Released6: the DHCPv6 RELEASE was answered by the server.
	Released6 bool `json:"released6,omitempty"`
	// Down: the changes were undone.
	Down bool `json:"down,omitempty"`
}

// Netmask returns the dotted netmask of the leased address.
func (l *Lease) Netmask() netip.Addr {
	return prefixMask(l.Addr.Bits())
}

func prefixMask(bits int) netip.Addr {
	if bits < 0 || bits > 32 {
		return netip.Addr{}
	}
	m := net.CIDRMask(bits, 32)
	a, _ := netip.AddrFromSlice(m)
	return a
}

// broadcastOf returns the directed broadcast address of p.
func broadcastOf(p netip.Prefix) netip.Addr {
	if !p.Addr().Is4() || p.Bits() >= 31 {
		return netip.Addr{}
	}
	a := p.Addr().As4()
	m := net.CIDRMask(p.Bits(), 32)
	for i := range a {
		a[i] |= ^m[i]
	}
	return netip.AddrFrom4(a)
}

// DUID is a DHCPv6 unique identifier, marshalled as colon-separated hex
// ("00:03:00:01:52:54:00:12:34:56").
type DUID []byte

func (d DUID) String() string { return net.HardwareAddr(d).String() }

// MarshalText implements encoding.TextMarshaler.
func (d DUID) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (d *DUID) UnmarshalText(b []byte) error {
	s := strings.ReplaceAll(string(b), ":", "")
	v, err := hex.DecodeString(s)
	if err != nil {
		return fmt.Errorf("DUID %q: %w", b, err)
	}
	if len(v) == 0 {
		v = nil
	}
	*d = v
	return nil
}

// HardwareAddr is a net.HardwareAddr that marshals as text
// ("52:54:00:12:34:56"), so a Lease serializes readably.
type HardwareAddr net.HardwareAddr

func (h HardwareAddr) String() string { return net.HardwareAddr(h).String() }

// MarshalText implements encoding.TextMarshaler.
func (h HardwareAddr) MarshalText() ([]byte, error) { return []byte(h.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (h *HardwareAddr) UnmarshalText(b []byte) error {
	if len(b) == 0 {
		*h = nil
		return nil
	}
	m, err := net.ParseMAC(string(b))
	if err != nil {
		return err
	}
	*h = HardwareAddr(m)
	return nil
}
