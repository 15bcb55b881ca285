package netconfig

// EC2 instance metadata (meta-data/network/interfaces/macs/) converted to
// network config v2 as cloud-init's convert_ec2_metadata_network_config
// does:
//   - only NICs present both in the metadata and on the machine (resolved
//     by MAC through Links) are configured, keyed and set-name'd by their
//     live name and matched by their lower-case MAC;
//   - NICs are ordered by (network-card, device-number, MAC), absent
//     numbers last; index 0 is the primary NIC;
//   - every NIC gets dhcp4: true, dhcp4-overrides.route-metric
//     100×(index+1), dhcp6: true (same overrides) when it has ipv6s, and
//     its secondary addresses as static: local-ipv4s[1:] with the prefix of
//     subnet-ipv4-cidr-block (default /24), ipv6s[1:] with /128 (cloud-init
//     reads the singular subnet-ipv6-cidr-block, which IMDS never serves, so
//     its IPv6 secondaries are always /128; we match it);
//   - with the netplan renderer (EC2Options.PolicyRouting), each secondary
//     NIC with a device-number gets use-routes and source routing in table
//     100+index: a default route via its IPv4 gateway, routes to its subnet
//     CIDRs, and `from <ip>` rules for each of its addresses;
//   - with a single NIC the overrides, routes and rules are dropped;
//   - with apply_full_imds_network_config false (EC2Options.PrimaryOnly)
//     only the primary NIC is configured, DHCP only.
// cloud-init learns a secondary NIC's gateway with a DHCP discovery on it;
// a pure converter cannot, so EC2Options.Gateway supplies it, and without it
// the subnet's first host is used (the VPC router: AWS reserves the subnet
// base + 1 for it). When no NIC can be configured the converter returns
// ErrNoConfig so that callers fall back, where cloud-init would render an
// empty ethernets map.

import (
	"fmt"
	"math"
	"net/netip"
	"sort"
	"strings"
)

// EC2Options tunes ConvertEC2. The zero value is cloud-init's default
// behaviour on a renderer other than netplan.
type EC2Options struct {
	// PrimaryOnly is datasource.Ec2.apply_full_imds_network_config: false —
	// configure only the primary NIC, with DHCP only.
	PrimaryOnly bool
	// PolicyRouting adds cloud-init's source routing for secondary NICs
	// (cloud-init does so only when the renderer is netplan, the only one
	// that receives v2 routing-policy verbatim).
	PolicyRouting bool
	// Gateway returns the IPv4 gateway of a secondary NIC (by name) for its
	// policy-routing default route; nil, or false, uses the first host of
	// its subnet-ipv4-cidr-block.
	Gateway func(nic string) (netip.Addr, bool)
}

// Defaults of the EC2 conversion, as in cloud-init.
const (
	// EC2RouteMetricStep is the route-metric of the primary NIC; the NIC
	// with index i gets (i+1) times it.
	EC2RouteMetricStep = 100
	// EC2PolicyTableBase is the routing table of the primary NIC; secondary
	// NIC i uses EC2PolicyTableBase+i.
	EC2PolicyTableBase = 100
	ec2DefaultIPv4Bits = "24"
	ec2DefaultIPv6Bits = "128"
)

type ec2NIC struct {
	mac, name string
	md        map[string]any
	card, dev float64
}

// ConvertEC2 converts the EC2 meta-data network/interfaces/macs tree (MAC →
// NIC metadata) to a network config v2. primaryMAC is the NIC that
// PrimaryOnly configures (cloud-init's fallback interface); empty picks the
// first NIC in metadata order. links resolves MACs to the machine's NIC
// names.
func ConvertEC2(macs map[string]any, primaryMAC string, opts EC2Options, links Links) (*Config, error) {
	var warnings []string
	warnf := func(f string, a ...any) { warnings = append(warnings, fmt.Sprintf(f, a...)) }
	var nics []ec2NIC
	for _, mac := range sortedKeys(macs) {
		md := mapOf(macs[mac])
		if md == nil {
			warnf("ec2: metadata of %s is not a mapping; skipped", mac)
			continue
		}
		lmac := strings.ToLower(mac)
		name, ok := nameByMAC(links, lmac)
		if !ok {
			warnf("ec2: no interface with MAC %s on this machine; skipped", lmac)
			continue
		}
		n := ec2NIC{mac: lmac, name: name, md: md}
		var okc, okd bool
		n.card, okc = leafInt(md["network-card"], math.Inf(1))
		n.dev, okd = leafInt(md["device-number"], math.Inf(1))
		if !okc || !okd {
			warnf("ec2: %s: network-card %q or device-number %q is not a number; ordered last", lmac,
				leafString(md["network-card"]), leafString(md["device-number"]))
		}
		nics = append(nics, n)
	}
	if len(nics) == 0 {
		return nil, fmt.Errorf("ec2: no metadata NIC is present on this machine: %w", ErrNoConfig)
	}
	byMAC := append([]ec2NIC(nil), nics...)
	sort.SliceStable(nics, func(i, j int) bool {
		a, b := nics[i], nics[j]
		if a.card != b.card {
			return a.card < b.card
		}
		if a.dev != b.dev {
			return a.dev < b.dev
		}
		return a.mac < b.mac
	})
	index := map[string]int{}
	for i, n := range nics {
		index[n.mac] = i
	}

	ethernets := newOmap()
	doc := omapOf("version", 2, "ethernets", ethernets)
	if opts.PrimaryOnly {
		p := nics[0]
		if primaryMAC != "" {
			want := strings.ToLower(primaryMAC)
			found := false
			for _, n := range nics {
				if n.mac == want {
					p, found = n, true
					break
				}
			}
			if !found {
				warnf("ec2: primary MAC %s is not a metadata NIC on this machine; using %s", want, p.mac)
			}
		}
		dev := omapOf("dhcp4", true, "dhcp6", pyTruthy(p.md["ipv6s"]),
			"match", omapOf("macaddress", p.mac), "set-name", p.name)
		ethernets.set(p.name, dev)
		return finishConverted(doc, links, warnings)
	}

	for _, n := range byMAC {
		idx := index[n.mac]
		primary := idx == 0
		override := omapOf("route-metric", (idx+1)*EC2RouteMetricStep)
		dev := omapOf("dhcp4", true, "dhcp4-overrides", override, "dhcp6", false,
			"match", omapOf("macaddress", n.mac), "set-name", n.name)
		policy := opts.PolicyRouting && pyTruthy(n.md["device-number"]) && !primary
		table := EC2PolicyTableBase + idx
		if policy {
			override.set("use-routes", true)
			ec2PolicyRouting(dev, n, opts, true, table, warnf)
		}
		if pyTruthy(n.md["ipv6s"]) {
			dev.set("dhcp6", true)
			dev.set("dhcp6-overrides", override)
			if policy {
				ec2PolicyRouting(dev, n, opts, false, table, warnf)
			}
		}
		if addrs := ec2SecondaryAddresses(n, warnf); len(addrs) > 0 {
			dev.set("addresses", addrs)
		}
		if ethernets.has(n.name) {
			warnf("ec2: %s and another metadata NIC share the interface %s; the last wins", n.mac, n.name)
		}
		ethernets.set(n.name, dev)
	}
	if len(ethernets.keys) == 1 {
		dev := asMap(ethernets.m[ethernets.keys[0]])
		for _, k := range []string{"dhcp4-overrides", "dhcp6-overrides", "routes", "routing-policy"} {
			omapDel(dev, k)
		}
	}
	return finishConverted(doc, links, warnings)
}

// ec2PolicyRouting is cloud-init's _configure_policy_routing.
func ec2PolicyRouting(dev *omap, n ec2NIC, opts EC2Options, v4 bool, table int, warnf func(string, ...any)) {
	cidrKey, ipsKey := "subnet-ipv4-cidr-block", "local-ipv4s"
	if !v4 {
		cidrKey, ipsKey = "subnet-ipv6-cidr-blocks", "ipv6s"
	}
	prefixes, ips := strList(n.md[cidrKey]), strList(n.md[ipsKey])
	if len(prefixes) == 0 || len(ips) == 0 {
		return
	}
	routes, _ := mustGet(dev, "routes").([]any)
	if v4 {
		gw, ok := netip.Addr{}, false
		if opts.Gateway != nil {
			gw, ok = opts.Gateway(n.name)
		}
		if !ok {
			gw, ok = firstHost(prefixes[0])
		}
		if ok {
			routes = append(routes, omapOf("to", "0.0.0.0/0", "via", gw.String(), "table", table))
		} else {
			warnf("ec2: %s: no IPv4 gateway for %s; not adding its default route in table %d", n.name, prefixes[0], table)
		}
	}
	for _, p := range prefixes {
		routes = append(routes, omapOf("to", p, "table", table))
	}
	dev.set("routes", routes)
	rules, _ := mustGet(dev, "routing-policy").([]any)
	for _, ip := range ips {
		rules = append(rules, omapOf("from", ip, "table", table))
	}
	dev.set("routing-policy", rules)
}

// firstHost is the first address of an IPv4 CIDR (the VPC router).
func firstHost(cidr string) (netip.Addr, bool) {
	p, err := netip.ParsePrefix(strings.TrimSpace(cidr))
	if err != nil || !p.Addr().Is4() || p.Bits() > 30 {
		return netip.Addr{}, false
	}
	return p.Masked().Addr().Next(), true
}

// ec2SecondaryAddresses is cloud-init's get_secondary_addresses: every
// address after the first of a NIC's local-ipv4s and ipv6s lists, sorted as
// strings.
func ec2SecondaryAddresses(n ec2NIC, warnf func(string, ...any)) []any {
	var out []string
	for _, f := range []struct{ ips, cidrKey, def string }{
		{"local-ipv4s", "subnet-ipv4-cidr-block", ec2DefaultIPv4Bits},
		{"ipv6s", "subnet-ipv6-cidr-block", ec2DefaultIPv6Bits},
	} {
		ips, isList := n.md[f.ips].([]any)
		if !isList || len(ips) < 2 {
			continue
		}
		prefix := f.def
		cidr := leafString(n.md[f.cidrKey])
		if parts := strings.Split(cidr, "/"); cidr != "" && len(parts) == 2 {
			prefix = parts[1]
		} else if f.ips == "local-ipv4s" {
			warnf("ec2: could not parse %s %q for %s; secondary IPv4 addresses get /%s", f.cidrKey, cidr, n.mac, prefix)
		}
		for _, ip := range strList(ips[1:]) {
			out = append(out, ip+"/"+prefix)
		}
	}
	sort.Strings(out)
	res := make([]any, len(out))
	for i, a := range out {
		res[i] = a
	}
	return res
}
