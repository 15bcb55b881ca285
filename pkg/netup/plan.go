package netup

import (
	"cmp"
	"net"
	"net/netip"
	"path"
	"slices"
	"strconv"
	"strings"
)

// planRoutes returns the routes to add for l, in order (on-link host routes
// to gateways before the routes that use them). It follows RFC 3442 and
// cloud-init's EphemeralIPv4Network: with classless static routes the router
// option is ignored; a gateway outside the leased subnet first gets an
// on-link /32; link-local routes are added on-link unless the lease already
// routes that exact prefix.
func planRoutes(l *Lease, linkLocal []netip.Prefix) []Route {
	subnet := l.Addr.Masked()
	var out []Route
	seen := map[netip.Prefix]bool{}
	add := func(r Route) {
		if seen[r.Dst] {
			return
		}
		seen[r.Dst] = true
		out = append(out, r)
	}
	via := func(dst netip.Prefix, gw netip.Addr) {
		if gw.IsValid() && !subnet.Contains(gw) {
			add(Route{Dst: netip.PrefixFrom(gw, 32)})
		}
		add(Route{Dst: dst, Gateway: gw})
	}
	if len(l.Routes) > 0 {
		for _, r := range l.Routes {
			if !r.Gateway.IsValid() && r.Dst == subnet {
				continue // the kernel adds the subnet route with the address
			}
			via(r.Dst, r.Gateway)
		}
	} else if l.Router.IsValid() && !l.Router.IsUnspecified() && l.Router != l.Addr.Addr() {
		via(netip.PrefixFrom(netip.IPv4Unspecified(), 0), l.Router)
	}
	for _, p := range linkLocal {
		if p.IsValid() && p.Addr().Is4() {
			add(Route{Dst: p.Masked()})
		}
	}
	return out
}

// linkInfo is what selection needs to know about a link.
type linkInfo struct {
	Name     string
	Index    int
	Type     string // netlink type: "device", "veth", "bridge", ...
	Encap    string // "ether", "loopback", ...
	Loopback bool
	Carrier  bool
	Up       bool
	HWAddr   net.HardwareAddr
}

// ethernetLike reports whether l is a default candidate: a physical
// (netlink type "device") non-loopback link with an ethernet header.
func (l linkInfo) ethernetLike() bool {
	return !l.Loopback && l.Encap == "ether" && l.Type == "device" && len(l.HWAddr) == 6
}

// selectLinks picks candidates from links: those matching one of patterns
// (names or path.Match globs), or every ethernet-like link when patterns is
// empty. Loopback is never selected. The result is ordered carrier first,
// then by natural name order (eth2 before eth10).
func selectLinks(links []linkInfo, patterns []string) []linkInfo {
	var out []linkInfo
	for _, l := range links {
		if l.Loopback || l.Encap == "loopback" {
			continue
		}
		if len(patterns) == 0 {
			if l.ethernetLike() {
				out = append(out, l)
			}
			continue
		}
		for _, p := range patterns {
			if ok, err := path.Match(p, l.Name); (err == nil && ok) || p == l.Name {
				out = append(out, l)
				break
			}
		}
	}
	slices.SortStableFunc(out, func(a, b linkInfo) int {
		if a.Carrier != b.Carrier {
			if a.Carrier {
				return -1
			}
			return 1
		}
		return naturalCompare(a.Name, b.Name)
	})
	return out
}

// naturalCompare orders names with embedded numbers numerically.
func naturalCompare(a, b string) int {
	for a != "" && b != "" {
		da, db := digitPrefix(a), digitPrefix(b)
		if da != "" && db != "" {
			na, _ := strconv.ParseUint(da, 10, 64)
			nb, _ := strconv.ParseUint(db, 10, 64)
			if c := cmp.Compare(na, nb); c != 0 {
				return c
			}
			if c := cmp.Compare(da, db); c != 0 {
				return c
			}
			a, b = a[len(da):], b[len(db):]
			continue
		}
		if c := cmp.Compare(a[0], b[0]); c != 0 {
			return c
		}
		a, b = a[1:], b[1:]
	}
	return cmp.Compare(len(a), len(b))
}

func digitPrefix(s string) string {
	i := 0
	for i < len(s) && i < 18 && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return s[:i]
}

// renderResolvConf renders the DNS part of l (DHCPv4 and DHCPv6) as
// resolv.conf.
func renderResolvConf(l *Lease) []byte {
	var b strings.Builder
	b.WriteString("# ephemeral, written by cloudroot netup for " + l.Iface + "; removed before switch_root\n")
	search := slices.Clone(l.Search)
	if len(search) == 0 && l.Domain != "" {
		search = []string{l.Domain}
	}
	for _, d := range l.Search6 {
		if !slices.Contains(search, d) {
			search = append(search, d)
		}
	}
	if len(search) > 0 {
		b.WriteString("search " + strings.Join(search, " ") + "\n")
	}
	// IPv4 servers first (the network probed is usually IPv4), then IPv6.
	for _, d := range slices.Concat(l.DNS, l.DNS6) {
		b.WriteString("nameserver " + d.String() + "\n")
	}
	return []byte(b.String())
}

// leaseFromIPConfig builds the static lease for an ip= configuration on iface.
func leaseFromIPConfig(c IPConfig, iface string, hw HardwareAddr) *Lease {
	l := &Lease{
		Iface:      iface,
		HWAddr:     hw,
		Proto:      ProtoStatic,
		Addr:       c.Prefix(),
		Router:     c.Gateway,
		DNS:        slices.Clone(c.DNS),
		Hostname:   c.Hostname,
		NextServer: c.ServerIP,
	}
	if c.NTP.IsValid() {
		l.NTP = []netip.Addr{c.NTP}
	}
	l.sanitize() // the ip= host name may come from a PXE server's config
	return l
}
