// Package netconfig is cloud-init's network configuration, rebuilt: one
// model, pure parsers for every input format cloud-init accepts (network
// config v1 and v2, OpenStack network_data.json, ENI text), a fallback
// config, and pure renderers for every output cloud-init writes (netplan,
// systemd-networkd, ENI, RHEL sysconfig, NetworkManager keyfiles).
//
// The contract:
//   - Parsing never touches the live system. Interface names that depend on
//     MAC addresses are resolved through Links, which callers back with
//     netlink in the initramfs and with a table in tests and net-convert.
//   - The model mirrors cloud-init's internal network state: interfaces, each
//     with an ordered list of subnets (one per address or DHCP/RA method),
//     global routes and global DNS. v2 input is converted the way cloud-init
//     converts it, and also kept verbatim, because cloud-init hands v2 to
//     netplan unchanged.
//   - Rendering is a function from *Config to files (path, bytes, mode).
//     Writing them, running `netplan generate` or reloading udev is the
//     caller's business. What a renderer cannot express it drops with a
//     warning in Output.Warnings rather than failing the boot.
//   - Every string that reaches a rendered file is checked where a document
//     becomes the model (validate.go): a value that could add a line or run
//     a command is refused with a warning, and renderers refuse a model
//     that still holds one (ErrUnsafeValue).
//   - No input makes any function here panic.
package netconfig

import (
	"errors"
	"net/netip"
	"strings"
)

// Kind is an interface type, named as in network config v1.
type Kind string

// Interface kinds.
const (
	KindPhysical   Kind = "physical"
	KindBond       Kind = "bond"
	KindBridge     Kind = "bridge"
	KindVLAN       Kind = "vlan"
	KindLoopback   Kind = "loopback"
	KindInfiniband Kind = "infiniband"
)

// SubnetType is how one subnet of an interface gets its addresses, named as
// in network config v1.
type SubnetType string

// Subnet types.
const (
	SubnetDHCP4          SubnetType = "dhcp4"
	SubnetDHCP           SubnetType = "dhcp" // v1 alias of dhcp4, kept for fidelity
	SubnetDHCP6          SubnetType = "dhcp6"
	SubnetStatic         SubnetType = "static"
	SubnetStatic6        SubnetType = "static6"
	SubnetSLAAC          SubnetType = "ipv6_slaac"
	SubnetDHCP6Stateful  SubnetType = "ipv6_dhcpv6-stateful"
	SubnetDHCP6Stateless SubnetType = "ipv6_dhcpv6-stateless"
	SubnetManual         SubnetType = "manual"
	SubnetLoopback       SubnetType = "loopback"
)

// Prefix lengths cloud-init assumes for an address written without one.
const (
	defaultIPv4PrefixBits = 24
	defaultIPv6PrefixBits = 64
)

// Errors callers branch on.
var (
	// ErrUnsupportedVersion: the document's version is neither 1 nor 2.
	ErrUnsupportedVersion = errors.New("unsupported network config version")
	// ErrNoConfig: the document holds no network config at all.
	ErrNoConfig = errors.New("no network config")
	// ErrUnknownRenderer: Render was asked for a renderer that does not exist.
	ErrUnknownRenderer = errors.New("unknown network renderer")
)

// Config is a parsed network configuration.
type Config struct {
	// Version is the version of the input (1 or 2). Some renderers behave
	// differently for each, as cloud-init's do.
	Version int
	// Disabled is set by `config: disabled`: render nothing, touch nothing.
	Disabled bool
	// Renderer is v2's `renderer:` key (networkd, NetworkManager), if any.
	Renderer string
	// Interfaces in the order cloud-init creates them.
	Interfaces []*Interface
	// Routes not bound to a subnet (v1 `type: route`).
	Routes []Route
	// DNS is the global resolver configuration (v1 `type: nameserver`
	// without interface; for v2 every interface's nameservers are added).
	DNS DNS
	// V2 is the v2 document (the mapping under `network:`), kept for the
	// netplan renderer, which passes v2 through verbatim as cloud-init does.
	V2 *omap `json:"-"`
	// Warnings are what the parser skipped or could not honour.
	Warnings []string
	// Rejected are the values refused as unsafe to write (validate.go),
	// also in Warnings: callers report them as warnings, with the source.
	Rejected []string `json:",omitempty"`
}

// Interface is one network device.
type Interface struct {
	Name string
	// ConfigID is the v2 ethernets key the device came from (cloud-init's
	// config_id): NetworkManager and sysconfig name their files after it.
	ConfigID string
	Kind     Kind
	// MAC is the hardware address: the match for physical devices, the
	// address to set for bonds, bridges and VLANs. Kept as written.
	MAC string
	// Rename is set when the device found by MAC must be given Name (v1
	// physical with mac_address; v2 set-name).
	Rename bool
	// Match is v2's match block (netplan passes it through).
	Match Match
	// Driver and DeviceID come from v1 params or v2 match.driver.
	Driver   string
	DeviceID string
	MTU      int
	// AcceptRA is nil when unset.
	AcceptRA  *bool
	WakeOnLAN bool
	// Optional is nil when unset (ENI writes `optional off` for false).
	Optional *bool
	Subnets  []Subnet
	// DNS is per-interface resolver configuration (v1 nameserver with
	// interface:, v2 nameservers).
	DNS DNS
	// DHCP4/DHCP6 are v2 dhcp4-overrides/dhcp6-overrides.
	DHCP4, DHCP6 *DHCPOverrides
	// RoutingPolicy is v2 routing-policy.
	RoutingPolicy []RoutingRule

	// BondMaster names the bond this device is enslaved to.
	BondMaster string
	// BondParams are bond parameters with v2 names (mode,
	// mii-monitor-interval, transmit-hash-policy...). Values keep the type
	// they were written with.
	BondParams map[string]any
	// BridgePorts lists the bridge's member devices.
	BridgePorts []string
	// BridgeParams are bridge parameters with v2 names (stp, forward-delay,
	// path-cost as port→cost...).
	BridgeParams map[string]any
	// VLANID and VLANLink describe a VLAN device.
	VLANID   int
	VLANLink string
	// Params are v1 params without a v2 name (bridge_maxwait, custom keys);
	// the ENI renderer writes them through.
	Params map[string]any
}

// Match is v2's device match.
type Match struct {
	MACAddress string
	Name       string // may be a glob
	Driver     string
}

// Subnet is one address or one address-assignment method of an interface.
type Subnet struct {
	Type SubnetType
	// Control is ENI's start mode: "" (auto), "auto", "manual", "hotplug".
	Control string
	// Address is a static address with its prefix length (host bits kept).
	Address netip.Prefix
	Gateway netip.Addr
	// Broadcast, PointToPoint and Scope are v1 keys ENI writes through.
	Broadcast string
	// DNS on the subnet (v1 dns_nameservers/dns_search).
	DNS    DNS
	Routes []Route
	// Metric is the v1 subnet metric (also v2 dhcp overrides route-metric).
	Metric *int
	MTU    int
	// IPv4/IPv6 mark OpenStack's ipv4/ipv6 network types.
	IPv4, IPv6 bool
}

// Route is a static route.
type Route struct {
	To     netip.Prefix
	Via    netip.Addr
	Metric *int
	Table  int
	OnLink bool
}

// DNS is a nameserver list and a search list. Nameservers stay strings, as
// written (cloud-init passes them through unvalidated; cloudroot keeps only
// IP addresses, see validate.go).
type DNS struct {
	Nameservers []string
	Search      []string
}

func (d DNS) empty() bool { return len(d.Nameservers) == 0 && len(d.Search) == 0 }

// DHCPOverrides are v2 dhcp4-overrides / dhcp6-overrides. Nil pointers are
// unset.
type DHCPOverrides struct {
	RouteMetric  *int
	UseDNS       *bool
	UseRoutes    *bool
	UseMTU       *bool
	UseNTP       *bool
	UseHostname  *bool
	SendHostname *bool
	Hostname     string
	// UseDomains is "true", "false" or "route".
	UseDomains string
}

// RoutingRule is one v2 routing-policy entry.
type RoutingRule struct {
	From          netip.Prefix
	To            netip.Prefix
	Table         int
	Priority      *int
	Mark          *int
	TypeOfService *int
}

// IsIPv6 reports whether the subnet configures IPv6 (cloud-init's
// subnet_is_ipv6).
func (s Subnet) IsIPv6() bool {
	switch s.Type {
	case SubnetStatic6, SubnetDHCP6, SubnetSLAAC, SubnetDHCP6Stateful, SubnetDHCP6Stateless:
		return true
	}
	if strings.HasSuffix(string(s.Type), "6") {
		return true
	}
	return s.Type == SubnetStatic && s.Address.IsValid() && s.Address.Addr().Is6()
}

// IsStatic reports whether the subnet carries a static address.
func (s Subnet) IsStatic() bool { return s.Type == SubnetStatic || s.Type == SubnetStatic6 }

// IsDHCP4 reports dhcp4 or its v1 alias dhcp.
func (s Subnet) IsDHCP4() bool { return s.Type == SubnetDHCP4 || s.Type == SubnetDHCP }

// isIPv6Dynamic is cloud-init's IPV6_DYNAMIC_TYPES.
func (s Subnet) isIPv6Dynamic() bool {
	switch s.Type {
	case SubnetDHCP6, SubnetSLAAC, SubnetDHCP6Stateless, SubnetDHCP6Stateful:
		return true
	}
	return false
}

// IsDefault reports whether the route is a default route.
func (r Route) IsDefault() bool { return r.To.IsValid() && r.To.Bits() == 0 }

// Interface returns the interface called name, or nil.
func (c *Config) Interface(name string) *Interface {
	for _, i := range c.Interfaces {
		if i.Name == name {
			return i
		}
	}
	return nil
}

// UseIPv6 is cloud-init's use_ipv6 (sysconfig's NETWORKING_IPV6): a subnet
// type ending in 6 (dhcp6, static6) or an IPv6 address. SLAAC alone does
// not count, as in cloud-init.
func (c *Config) UseIPv6() bool {
	for _, i := range c.Interfaces {
		for _, s := range i.Subnets {
			if strings.HasSuffix(string(s.Type), "6") || (s.Address.IsValid() && s.Address.Addr().Is6()) {
				return true
			}
		}
	}
	return false
}

// HasDefaultRoute reports whether a global or subnet route is a default
// route (gateways of static subnets do not count, as in cloud-init).
func (c *Config) HasDefaultRoute() bool {
	for _, r := range c.Routes {
		if r.IsDefault() {
			return true
		}
	}
	for _, i := range c.Interfaces {
		for _, s := range i.Subnets {
			for _, r := range s.Routes {
				if r.IsDefault() {
					return true
				}
			}
		}
	}
	return false
}

// bondMembers returns, sorted, the interfaces enslaved to bond.
func (c *Config) bondMembers(bond string) []string {
	var out []string
	for _, i := range c.Interfaces {
		if i.BondMaster == bond {
			out = append(out, i.Name)
		}
	}
	sortStrings(out)
	return out
}

func (c *Config) warnf(format string, args ...any) {
	c.Warnings = append(c.Warnings, sprintf(format, args...))
}

// Links resolves MAC addresses to interface names on the machine being
// configured.
type Links interface {
	NameByMAC(mac string) (string, bool)
}

// MACs is a Links backed by a table of MAC address → interface name.
// Lookups ignore case.
type MACs map[string]string

// NameByMAC implements Links.
func (m MACs) NameByMAC(mac string) (string, bool) {
	if n, ok := m[mac]; ok {
		return n, true
	}
	want := strings.ToLower(mac)
	for k, n := range m {
		if strings.ToLower(k) == want {
			return n, true
		}
	}
	return "", false
}

func nameByMAC(l Links, mac string) (string, bool) {
	if l == nil || mac == "" {
		return "", false
	}
	return l.NameByMAC(strings.ToLower(mac))
}

func boolPtr(b bool) *bool { return &b }
func intPtr(i int) *int    { return &i }
