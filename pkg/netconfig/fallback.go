package netconfig

// The fallback config: when no source gives a network config, DHCP on the
// NIC most likely to be connected, as cloud-init's generate_fallback_config.
//
// Two deliberate differences, because the initramfs sees the machine live
// (docs/network.md):
//
//   - IPv6 is rendered by what the link offers, not as cloud-init's
//     unconditional dhcp6, which ifupdown turns into `inet6 dhcp`: with no
//     DHCPv6 server (QEMU user networking, many LANs) networking.service
//     then blocks until its 5-minute timeout. A router advertisement with the
//     M flag gives dhcp6; the O flag stateless DHCPv6;
//     anything else (no RA seen, or the link was not up to look) SLAAC only
//     (accept-ra, `inet6 auto`), which cannot block the boot.
//   - The interface is named as the booted system's udev will name it
//     (Link.Name is that name when the caller knows it), so the config,
//     set-name and the udev rule agree with the running system instead of
//     pinning the kernel's eth0.

import (
	"errors"
	"sort"
	"strings"
)

// IPv6Offer is what a link was seen to offer for IPv6.
type IPv6Offer int

// IPv6 offers, from router advertisement flags (a DHCPv6 probe could add
// IPv6Managed evidence; not done).
const (
	// IPv6Unknown: nothing observed (the link was not up, or no RA came in
	// the bounded listen). Rendered as SLAAC only.
	IPv6Unknown IPv6Offer = iota
	// IPv6SLAAC: an RA without the M or O flag.
	IPv6SLAAC
	// IPv6Stateless: an RA with the O flag (other configuration by DHCPv6).
	IPv6Stateless
	// IPv6Managed: an RA with the M flag.
	IPv6Managed
)

func (o IPv6Offer) String() string {
	switch o {
	case IPv6SLAAC:
		return "slaac"
	case IPv6Stateless:
		return "dhcpv6-stateless"
	case IPv6Managed:
		return "dhcpv6"
	}
	return "unknown"
}

// RA flag bits (RFC 4861 4.2).
const (
	raManaged = 0x80
	raOther   = 0x40
)

// ErrNotRouterAdvert: the ICMPv6 message is not a router advertisement.
var ErrNotRouterAdvert = errors.New("not an ICMPv6 router advertisement")

// ParseRouterAdvert reads the offer of an ICMPv6 router advertisement
// (the ICMPv6 message, as a raw ICMPv6 socket returns it).
func ParseRouterAdvert(b []byte) (IPv6Offer, error) {
	// type, code, checksum(2), cur hop limit, flags, lifetime(2),
	// reachable(4), retrans(4).
	if len(b) < 16 || b[0] != 134 || b[1] != 0 {
		return IPv6Unknown, ErrNotRouterAdvert
	}
	switch f := b[5]; {
	case f&raManaged != 0:
		return IPv6Managed, nil
	case f&raOther != 0:
		return IPv6Stateless, nil
	}
	return IPv6SLAAC, nil
}

// Better is the richer of two offers (several RAs: the most the link offers).
func (o IPv6Offer) Better(p IPv6Offer) IPv6Offer { return max(o, p) }

// DefaultPrimaryInterface is preferred when it has carrier.
const DefaultPrimaryInterface = "eth0"

// Link is what Fallback needs to know about one network device; callers
// fill it from /sys/class/net.
type Link struct {
	Name   string
	MAC    string
	Driver string
	// Carrier is /sys/class/net/<if>/carrier == 1.
	Carrier bool
	// Dormant is /sys/class/net/<if>/dormant == 1.
	Dormant bool
	// OperState is /sys/class/net/<if>/operstate.
	OperState string
	// Bridge and Bond: the device is a bridge or a bond master.
	Bridge, Bond bool
	// Member: the device is enslaved to a bond or bridge.
	Member bool
	// Virtual: no backing hardware (veth, tun, dummy...).
	Virtual bool
	// NetFailover: a net_failover primary or standby (its MAC is shared).
	NetFailover bool
	// NetFailoverMaster: the net_failover master; matched by name.
	NetFailoverMaster bool
	// IPv6 is what the link was seen to offer for IPv6.
	IPv6 IPv6Offer
}

// FallbackNICs returns the candidate NICs in cloud-init's order: eth0 if
// connected, other connected NICs naturally sorted, then eth0 and the others
// that might get carrier once up (dormant, down, lowerlayerdown, unknown).
func FallbackNICs(links []Link) []string {
	var connected, possible []string
	for _, l := range links {
		switch {
		case l.Name == "" || l.Name == "lo":
		case l.MAC == "":
		case strings.HasPrefix(l.Name, "veth"), l.Virtual:
		case l.Bridge, l.Bond, l.Member, l.NetFailover:
		case l.Carrier:
			connected = append(connected, l.Name)
		case l.Dormant:
			possible = append(possible, l.Name)
		default:
			switch l.OperState {
			case "dormant", "down", "lowerlayerdown", "unknown":
				possible = append(possible, l.Name)
			}
		}
	}
	var out []string
	for _, group := range [][]string{connected, possible} {
		sort.SliceStable(group, func(i, j int) bool { return naturalLess(group[i], group[j]) })
		for i, n := range group {
			if n == DefaultPrimaryInterface {
				group = append([]string{n}, append(group[:i:i], group[i+1:]...)...)
				break
			}
		}
		out = append(out, group...)
	}
	return out
}

// Fallback returns the fallback config, or nil when no NIC qualifies: v2
// DHCPv4 on the chosen NIC, matched by MAC (by name for a net_failover
// master) and named with set-name, and IPv6 by its IPv6 offer.
func Fallback(links []Link) *Config {
	nics := FallbackNICs(links)
	if len(nics) == 0 {
		return nil
	}
	var target Link
	for _, l := range links {
		if l.Name == nics[0] {
			target = l
			break
		}
	}
	match := newOmap()
	if target.NetFailoverMaster {
		match.set("name", target.Name)
	} else {
		match.set("macaddress", strings.ToLower(target.MAC))
	}
	eth := newOmap()
	eth.set("dhcp4", true)
	switch target.IPv6 {
	case IPv6Managed, IPv6Stateless:
		eth.set("dhcp6", true)
	default:
		eth.set("accept-ra", true)
	}
	eth.set("set-name", target.Name)
	eth.set("match", match)
	ethernets := newOmap()
	ethernets.set(target.Name, eth)
	doc := newOmap()
	doc.set("ethernets", ethernets)
	doc.set("version", 2)
	cfg, err := parseV2(doc, nil)
	if err != nil || len(cfg.Interfaces) != 1 {
		return nil
	}
	// What v2 cannot say: SLAAC alone, and SLAAC with stateless DHCPv6
	// (renderers other than netplan read the model).
	iface := cfg.Interfaces[0]
	switch target.IPv6 {
	case IPv6Stateless:
		for i, sn := range iface.Subnets {
			if sn.Type == SubnetDHCP6 {
				iface.Subnets[i].Type = SubnetDHCP6Stateless
			}
		}
	case IPv6Managed:
	default:
		iface.AcceptRA = nil
		iface.Subnets = append(iface.Subnets, Subnet{Type: SubnetSLAAC})
	}
	return cfg
}
