package netconfig

// The fallback config: when no source gives a network config, DHCP on the
// NIC most likely to be connected, as cloud-init's generate_fallback_config
// (with the dhcp6 of current cloud-init).

import (
	"sort"
	"strings"
)

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
// DHCPv4 and DHCPv6 on the chosen NIC, matched by MAC (by name for a
// net_failover master) and named with set-name.
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
	eth.set("dhcp6", true)
	eth.set("set-name", target.Name)
	eth.set("match", match)
	ethernets := newOmap()
	ethernets.set(target.Name, eth)
	doc := newOmap()
	doc.set("ethernets", ethernets)
	doc.set("version", 2)
	cfg, err := parseV2(doc, nil)
	if err != nil {
		return nil
	}
	return cfg
}
