package netup

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// IPConfig is one kernel ip= argument (Documentation/admin-guide/nfs/nfsroot.rst):
//
//	ip=<client-ip>:<server-ip>:<gw-ip>:<netmask>:<hostname>:<device>:<autoconf>:<dns0-ip>:<dns1-ip>:<ntp0-ip>
//	ip=<autoconf>            (ip=dhcp, ip=off, ...)
//	ip=<device>:<autoconf>   (dracut's short form: ip=eth0:dhcp)
//
// Empty fields keep their defaults, as in the kernel and klibc ipconfig.
// Only IPv4 is understood; dracut's bracketed IPv6 and :<mtu>:<mac> suffixes
// are rejected with an error.
type IPConfig struct {
	ClientIP netip.Addr
	ServerIP netip.Addr
	Gateway  netip.Addr
	// Netmask is a dotted mask; a prefix length ("24") is accepted on input.
	Netmask  netip.Addr
	Hostname string
	// Device is the interface name; empty or "all" means every interface.
	Device string
	// Autoconf is the method as written ("" when omitted): off, none,
	// static, on, any, dhcp, bootp, rarp, both, or one of dracut's dhcp6,
	// auto6, either6, link6, ibft.
	Autoconf string
	DNS      []netip.Addr
	NTP      netip.Addr
}

// maxHostname is the kernel's __NEW_UTS_LEN.
const maxHostname = 64

// isAutoconf reports whether s is an autoconf method the kernel, klibc or
// dracut knows.
func isAutoconf(s string) bool {
	switch s {
	case "off", "none", "static",
		"on", "any", "dhcp", "bootp", "rarp", "both",
		"dhcp6", "auto6", "either6", "link6", "ibft":
		return true
	}
	return false
}

// ParseIPArg parses the value of one ip= kernel argument (without "ip=").
func ParseIPArg(s string) (IPConfig, error) {
	var c IPConfig
	if strings.ContainsAny(s, "[]") {
		return c, fmt.Errorf("ip=%q: IPv6 forms are not supported", s)
	}
	if !strings.Contains(s, ":") {
		if s == "" {
			return c, fmt.Errorf("ip=: empty value")
		}
		if !isAutoconf(s) {
			return c, fmt.Errorf("ip=%q: unknown autoconf method", s)
		}
		c.Autoconf = s
		return c, nil
	}
	f := strings.Split(s, ":")
	if len(f) == 2 && isAutoconf(f[1]) {
		if _, err := netip.ParseAddr(f[0]); err != nil && f[0] != "" {
			// dracut's ip=<device>:<autoconf>.
			if err := checkDevice(f[0]); err != nil {
				return IPConfig{}, fmt.Errorf("ip=%q: %w", s, err)
			}
			c.Device, c.Autoconf = f[0], f[1]
			return c, nil
		}
	}
	if len(f) > 10 {
		return c, fmt.Errorf("ip=%q: %d fields, at most 10 (the :<mtu>:<mac> forms are not supported)", s, len(f))
	}
	addr := func(i int, name string, dst *netip.Addr) error {
		if i >= len(f) || f[i] == "" {
			return nil
		}
		a, err := netip.ParseAddr(f[i])
		if err != nil || !a.Is4() {
			return fmt.Errorf("ip=%q: field %d (%s): %q is not an IPv4 address", s, i+1, name, f[i])
		}
		*dst = a
		return nil
	}
	if err := addr(0, "client-ip", &c.ClientIP); err != nil {
		return IPConfig{}, err
	}
	if err := addr(1, "server-ip", &c.ServerIP); err != nil {
		return IPConfig{}, err
	}
	if err := addr(2, "gw-ip", &c.Gateway); err != nil {
		return IPConfig{}, err
	}
	if len(f) > 3 && f[3] != "" {
		m, err := parseNetmask(f[3])
		if err != nil {
			return IPConfig{}, fmt.Errorf("ip=%q: field 4 (netmask): %w", s, err)
		}
		c.Netmask = m
	}
	if len(f) > 4 {
		if len(f[4]) > maxHostname {
			return IPConfig{}, fmt.Errorf("ip=%q: field 5 (hostname): longer than %d bytes", s, maxHostname)
		}
		c.Hostname = f[4]
	}
	if len(f) > 5 && f[5] != "" {
		if err := checkDevice(f[5]); err != nil {
			return IPConfig{}, fmt.Errorf("ip=%q: field 6 (device): %w", s, err)
		}
		c.Device = f[5]
	}
	if len(f) > 6 && f[6] != "" {
		if !isAutoconf(f[6]) {
			return IPConfig{}, fmt.Errorf("ip=%q: field 7 (autoconf): unknown method %q", s, f[6])
		}
		c.Autoconf = f[6]
	}
	for i := 7; i <= 8 && i < len(f); i++ {
		var a netip.Addr
		if err := addr(i, fmt.Sprintf("dns%d-ip", i-7), &a); err != nil {
			return IPConfig{}, err
		}
		if a.IsValid() {
			c.DNS = append(c.DNS, a)
		}
	}
	if err := addr(9, "ntp0-ip", &c.NTP); err != nil {
		return IPConfig{}, err
	}
	return c, nil
}

// checkDevice accepts what the kernel accepts as an interface name.
func checkDevice(d string) error {
	if len(d) >= 16 {
		return fmt.Errorf("interface name %q longer than 15 bytes", d)
	}
	if d == "." || d == ".." || strings.ContainsAny(d, "/ \t\n\x00=,") {
		return fmt.Errorf("invalid interface name %q", d)
	}
	return nil
}

func parseNetmask(s string) (netip.Addr, error) {
	if n, err := strconv.Atoi(s); err == nil {
		if n < 0 || n > 32 || strings.HasPrefix(s, "+") || (len(s) > 1 && s[0] == '0') {
			return netip.Addr{}, fmt.Errorf("prefix length %q out of range", s)
		}
		return prefixMask(n), nil
	}
	m, err := netip.ParseAddr(s)
	if err != nil || !m.Is4() {
		return netip.Addr{}, fmt.Errorf("%q is not a netmask", s)
	}
	if maskBits(m) < 0 {
		return netip.Addr{}, fmt.Errorf("%q is not a contiguous netmask", s)
	}
	return m, nil
}

// maskBits returns the prefix length of a contiguous dotted mask, or -1.
func maskBits(m netip.Addr) int {
	if !m.Is4() {
		return -1
	}
	b := m.As4()
	v := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	n := 0
	for v&0x80000000 != 0 {
		n++
		v <<= 1
	}
	if v != 0 {
		return -1
	}
	return n
}

// Disabled reports ip=off / ip=none without an address: no network wanted.
func (c IPConfig) Disabled() bool {
	return !c.ClientIP.IsValid() && (c.Autoconf == "off" || c.Autoconf == "none" || c.Autoconf == "static")
}

// DHCP reports whether the configuration asks for DHCPv4, as klibc decides:
// a client address turns autoconfiguration off unless the autoconf field
// turns it back on. BOOTP is answered by DHCP here; RARP alone is not.
func (c IPConfig) DHCP() bool {
	switch c.Autoconf {
	case "on", "any", "dhcp", "bootp", "both":
		return true
	case "":
		return !c.ClientIP.IsValid()
	}
	return false
}

// Static reports whether the configuration is a static IPv4 address.
func (c IPConfig) Static() bool {
	return c.ClientIP.IsValid() && !c.DHCP()
}

// AllDevices reports whether the configuration applies to every interface.
func (c IPConfig) AllDevices() bool {
	return c.Device == "" || c.Device == "all"
}

// Prefix returns the client address with its prefix length; without a
// netmask the classful default is used, as klibc ipconfig does.
func (c IPConfig) Prefix() netip.Prefix {
	if !c.ClientIP.IsValid() {
		return netip.Prefix{}
	}
	bits := maskBits(c.Netmask)
	if !c.Netmask.IsValid() || bits < 0 {
		bits = classfulBits(c.ClientIP)
	}
	return netip.PrefixFrom(c.ClientIP, bits)
}

func classfulBits(a netip.Addr) int {
	b := a.As4()[0]
	switch {
	case b < 128:
		return 8
	case b < 192:
		return 16
	default:
		return 24
	}
}

// String formats the configuration back into an ip= value that ParseIPArg
// reads as the same IPConfig.
func (c IPConfig) String() string {
	if !c.ClientIP.IsValid() && !c.ServerIP.IsValid() && !c.Gateway.IsValid() && !c.Netmask.IsValid() &&
		c.Hostname == "" && len(c.DNS) == 0 && !c.NTP.IsValid() && c.Autoconf != "" {
		if c.Device == "" {
			return c.Autoconf
		}
		if _, err := netip.ParseAddr(c.Device); err != nil {
			return c.Device + ":" + c.Autoconf
		}
	}
	a := func(x netip.Addr) string {
		if !x.IsValid() {
			return ""
		}
		return x.String()
	}
	f := []string{a(c.ClientIP), a(c.ServerIP), a(c.Gateway), a(c.Netmask), c.Hostname, c.Device, c.Autoconf}
	for _, d := range c.DNS {
		f = append(f, d.String())
	}
	if c.NTP.IsValid() {
		for len(f) < 9 {
			f = append(f, "")
		}
		f = append(f, c.NTP.String())
	}
	for len(f) > 1 && f[len(f)-1] == "" {
		f = f[:len(f)-1]
	}
	if len(f) == 1 {
		// A lone field would read as an autoconf method; keep the colon.
		return f[0] + ":"
	}
	return strings.Join(f, ":")
}
