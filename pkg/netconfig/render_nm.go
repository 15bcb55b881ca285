package netconfig

// The NetworkManager renderer writes one keyfile per device,
// /etc/NetworkManager/system-connections/cloud-init-<id>.nmconnection
// (0600; <id> is the v2 ethernets key, else the device name), and
// /etc/NetworkManager/conf.d/30-cloud-init-ip6-addr-gen-mode.conf (EUI-64
// addresses for SLAAC), as cloud-init 26.x's network_manager.py does: a
// connection UUID derived from the device name (UUIDv5 in cloud-init's
// namespace), autoconnect-priority 120, bond members and bridge ports
// pointing at their master's UUID, ethernet devices matched by MAC, routes
// with their metric (a default route's metric and a subnet's metric as the
// family's route-metric), may-fail=true when both families use DHCP/RA.
//
// Not expressible: routing policy, route tables, on-link and global routes
// (cloud-init drops them too).

import (
	"crypto/sha1"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// NMConnectionsDir is where NetworkManager keyfiles go.
const NMConnectionsDir = "/etc/NetworkManager/system-connections/"

// nmNamespace is cloud-init's UUID namespace for connection UUIDs.
var nmNamespace = [16]byte{0xa3, 0x92, 0x4c, 0xb8, 0x09, 0xe0, 0x43, 0xe9, 0x89, 0x0b, 0x77, 0x97, 0x2a, 0x80, 0x01, 0x08}

// uuid5 is RFC 4122 name-based UUID with SHA-1.
func uuid5(ns [16]byte, name string) string {
	h := sha1.New()
	h.Write(ns[:])
	h.Write([]byte(name))
	s := h.Sum(nil)
	s[6] = s[6]&0x0f | 0x50
	s[8] = s[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", s[0:4], s[4:6], s[6:8], s[8:10], s[10:16])
}

// keyfile is an ordered INI document (configparser keeps insertion order).
type keyfile struct {
	order []string
	secs  map[string]*kfSection
}

type kfSection struct {
	keys []string
	vals map[string]string
}

func newKeyfile() *keyfile { return &keyfile{secs: map[string]*kfSection{}} }

func (k *keyfile) section(name string) *kfSection {
	s, ok := k.secs[name]
	if !ok {
		s = &kfSection{vals: map[string]string{}}
		k.secs[name] = s
		k.order = append(k.order, name)
	}
	return s
}

func (k *keyfile) has(sec, key string) bool {
	s, ok := k.secs[sec]
	if !ok {
		return false
	}
	_, ok = s.vals[key]
	return ok
}

func (k *keyfile) get(sec, key string) string {
	if s, ok := k.secs[sec]; ok {
		return s.vals[key]
	}
	return ""
}

func (k *keyfile) set(sec, key, val string) {
	s := k.section(sec)
	if _, ok := s.vals[key]; !ok {
		s.keys = append(s.keys, key)
	}
	s.vals[key] = val
}

func (k *keyfile) setDefault(sec, key, val string) {
	if !k.has(sec, key) {
		k.set(sec, key, val)
	}
}

func (k *keyfile) String() string {
	var b strings.Builder
	for _, name := range k.order {
		s := k.secs[name]
		fmt.Fprintf(&b, "[%s]\n", name)
		for _, key := range s.keys {
			fmt.Fprintf(&b, "%s=%s\n", key, s.vals[key])
		}
		b.WriteString("\n")
	}
	return b.String()
}

type nmConn struct {
	kf   *keyfile
	uuid string
}

func newNMConn(id string) *nmConn {
	c := &nmConn{kf: newKeyfile(), uuid: uuid5(nmNamespace, id)}
	c.kf.set("connection", "id", "cloud-init "+id)
	c.kf.set("connection", "uuid", c.uuid)
	c.kf.set("connection", "autoconnect-priority", "120")
	c.kf.set("user", "org.freedesktop.NetworkManager.origin", "cloud-init")
	return c
}

// nmMethod is cloud-init's method_map; "" for a type it does not know.
var nmMethod = sync.OnceValue(func() map[SubnetType]string {
	return map[SubnetType]string{
		SubnetStatic: "manual", SubnetStatic6: "manual",
		SubnetDHCP6: "auto", SubnetSLAAC: "auto", SubnetDHCP6Stateless: "auto",
		SubnetDHCP6Stateful: "dhcp",
		SubnetDHCP4:         "auto", SubnetDHCP: "auto",
	}
})

// setIPMethod is cloud-init's _set_ip_method; t == "" (a bond without
// subnets) leaves the family disabled.
func (c *nmConn) setIPMethod(family string, t SubnetType) {
	c.kf.setDefault(family, "method", "disabled")
	method := "disabled"
	if t != "" {
		var ok bool
		if method, ok = nmMethod()[t]; !ok {
			method = "auto"
			c.kf.set(family, "may-fail", "true")
		}
	}
	cur := c.kf.get(family, "method")
	if cur == "dhcp" || (cur == "auto" && method == "manual") {
		return
	}
	switch t {
	case SubnetDHCP6Stateful, SubnetDHCP6Stateless, SubnetSLAAC:
		c.kf.setDefault("ipv4", "method", "disabled")
	}
	c.kf.set(family, "method", method)
	c.kf.setDefault(family, "may-fail", "false")
}

// mayFailBothDHCP is cloud-init's _set_mayfail_true_if_both_false_dhcp:
// with DHCP/RA on both families, either one succeeding is enough.
func (c *nmConn) mayFailBothDHCP() {
	for _, f := range []string{"ipv4", "ipv6"} {
		if !c.kf.has(f, "may-fail") || c.kf.get(f, "may-fail") != "false" {
			return
		}
		if m := c.kf.get(f, "method"); m != "dhcp" && m != "auto" {
			return
		}
	}
	for _, f := range []string{"ipv4", "ipv6"} {
		c.kf.set(f, "may-fail", "true")
	}
}

func (c *nmConn) addNumbered(sec, prefix, val string) {
	c.kf.section(sec)
	for i := 1; ; i++ {
		k := fmt.Sprintf("%s%d", prefix, i)
		if !c.kf.has(sec, k) {
			c.kf.set(sec, k, val)
			return
		}
	}
}

// addRoute is cloud-init's _add_route: the family is the route's own.
func (c *nmConn) addRoute(r Route) {
	family := "ipv4"
	if r.To.Addr().Is6() {
		family = "ipv6"
	}
	v := r.To.String()
	if r.Via.IsValid() {
		v += "," + r.Via.String()
	}
	if r.Metric != nil {
		if r.IsDefault() && r.To.Addr().IsUnspecified() {
			c.kf.set(family, "route-metric", fmt.Sprint(*r.Metric))
		} else {
			v += fmt.Sprintf(",%d", *r.Metric)
		}
	}
	c.addNumbered(family, "route", v)
}

// enabled reports whether the family's section exists and is not disabled.
func (c *nmConn) enabled(family string) bool {
	return c.kf.secs[family] != nil && c.kf.get(family, "method") != "disabled"
}

func (c *nmConn) addNameserver(ns string) {
	family := "ipv4"
	if a, err := parseAddr(ns); err == nil && a.Is6() {
		family = "ipv6"
	}
	if !c.enabled(family) {
		return
	}
	c.kf.setDefault(family, "dns", "")
	c.kf.set(family, "dns", c.kf.get(family, "dns")+ns+";")
}

func (c *nmConn) addSearch(search []string) {
	for _, family := range []string{"ipv4", "ipv6"} {
		if !c.enabled(family) {
			continue
		}
		c.kf.setDefault(family, "dns-search", "")
		c.kf.set(family, "dns-search", c.kf.get(family, "dns-search")+strings.Join(search, ";")+";")
	}
}

var nmType = sync.OnceValue(func() map[Kind]string {
	return map[Kind]string{
		KindPhysical: "ethernet", KindVLAN: "vlan", KindBond: "bond", KindBridge: "bridge", KindInfiniband: "infiniband",
	}
})

// nmBondProps are the NetworkManager bond options cloud-init writes, in its
// order; each is looked up as the v1 parameter bond-<name> (underscores or
// dashes).
var nmBondProps = []string{
	"mode", "miimon", "xmit_hash_policy", "num_grat_arp", "downdelay", "updelay",
	"fail_over_mac", "primary_reselect", "primary", "active_slave",
	"ad_actor_sys_prio", "ad_actor_system", "ad_select", "ad_user_port_key",
	"all_slaves_active", "arp_all_targets", "arp_interval", "arp_ip_target",
	"arp_validate", "lacp_rate", "lp_interval", "min_links", "num_unsol_na",
	"packets_per_slave", "peer_notif_delay", "resend_igmp", "tlb_dynamic_lb",
	"use_carrier",
}

// nmBondValue finds bond option prop among the bond's parameters.
func nmBondValue(iface *Interface, prop string) (any, bool) {
	dashed := "bond-" + strings.ReplaceAll(prop, "_", "-")
	if v2, ok := bondV1ToV2()[dashed]; ok {
		if v, ok := iface.BondParams[v2]; ok && v != nil {
			return v, true
		}
	}
	for _, k := range []string{"bond-" + prop, dashed} {
		if v, ok := iface.Params[k]; ok && v != nil {
			return v, true
		}
	}
	return nil, false
}

// nmConf is cloud-init's NM_IPV6_ADDR_GEN_CONF.
const nmConf = `# This is generated by cloud-init. Do not edit.
#
[.config]
  enable=nm-version-min:1.40
[connection.30-cloud-init-ip6-addr-gen-mode]
  # Select EUI64 to be used if the profile does not specify it.
  ipv6.addr-gen-mode=0

`

// NMConfPath is the NetworkManager configuration cloud-init writes.
const NMConfPath = "/etc/NetworkManager/conf.d/30-cloud-init-ip6-addr-gen-mode.conf"

// RenderNetworkManager renders cfg as NetworkManager keyfiles.
func RenderNetworkManager(cfg *Config) (*Output, error) {
	if err := checkSafe(cfg); err != nil {
		return nil, fmt.Errorf("rendering NetworkManager: %w", err)
	}
	o := newOutput()
	unsupported(o, cfg, RendererNetworkManager, true, true)
	cfg = mainTableOnly(cfg)
	if len(cfg.Routes) > 0 {
		o.warnf("global routes (v1 type: route) cannot be expressed by the network-manager renderer; dropped (as cloud-init does)")
	}
	conns := map[string]*nmConn{}
	byName := map[string]*nmConn{}
	var order []string
	key := func(i *Interface) string {
		if i.ConfigID != "" {
			return i.ConfigID
		}
		return i.Name
	}
	for _, i := range cfg.Interfaces {
		k := key(i)
		if _, ok := conns[k]; !ok {
			order = append(order, k)
		}
		conns[k] = newNMConn(i.Name)
		byName[i.Name] = conns[k]
	}
	lookup := func(name string) *nmConn {
		if c, ok := conns[name]; ok {
			return c
		}
		return byName[name]
	}
	ref := func(name string) string {
		if c := lookup(name); c != nil {
			return c.uuid
		}
		return name
	}
	for _, iface := range cfg.Interfaces {
		c := conns[key(iface)]
		t, ok := nmType()[iface.Kind]
		if !ok {
			continue
		}
		c.kf.set("connection", "type", t)
		if iface.BondMaster != "" {
			c.kf.set("connection", "slave-type", "bond")
			c.kf.set("connection", "master", ref(iface.BondMaster))
		}
		c.kf.section(t)
		if iface.Kind == KindBond && len(iface.Subnets) == 0 {
			c.setIPMethod("ipv4", "")
			c.setIPMethod("ipv6", "")
		}
		ipv4MTU := 0
		var nameservers, search []string
		for _, s := range iface.Subnets {
			family := "ipv4"
			if s.IsIPv6() {
				family = "ipv6"
			}
			c.setIPMethod(family, s.Type)
			if s.Address.IsValid() {
				c.addNumbered(family, "address", addrCIDR(s.Address))
			}
			if s.Gateway.IsValid() {
				c.kf.set(family, "gateway", s.Gateway.String())
			}
			for _, r := range s.Routes {
				c.addRoute(r)
			}
			if s.Metric != nil {
				c.kf.set(family, "route-metric", fmt.Sprint(*s.Metric))
			}
			nameservers = append(nameservers, s.DNS.Nameservers...)
			search = append(search, s.DNS.Search...)
			if family == "ipv4" && s.MTU != 0 {
				ipv4MTU = s.MTU
			}
		}
		for _, n := range iface.DNS.Nameservers {
			if !slices.Contains(nameservers, n) {
				nameservers = append(nameservers, n)
			}
		}
		for _, n := range iface.DNS.Search {
			if !slices.Contains(search, n) {
				search = append(search, n)
			}
		}
		if len(nameservers) == 0 {
			nameservers = cfg.DNS.Nameservers
		}
		if len(search) == 0 {
			search = cfg.DNS.Search
		}
		for _, n := range nameservers {
			c.addNameserver(n)
		}
		if len(search) > 0 {
			c.addSearch(search)
		}
		c.mayFailBothDHCP()
		if ipv4MTU == 0 {
			ipv4MTU = iface.MTU
		} else if iface.MTU != 0 && ipv4MTU != iface.MTU {
			o.warnf("%s: ignoring device-level mtu %d because ipv4 subnet-level mtu %d is provided", iface.Name, iface.MTU, ipv4MTU)
		}
		switch iface.Kind {
		case KindBond:
			for _, p := range nmBondProps {
				if v, ok := nmBondValue(iface, p); ok {
					c.kf.set(t, p, nmValue(v))
				}
			}
		case KindBridge:
			if v, ok := iface.BridgeParams["stp"]; ok && v != nil {
				c.kf.set(t, "stp", nmValue(v))
			}
			if v, ok := iface.BridgeParams["priority"]; ok && v != nil {
				c.kf.set(t, "priority", nmValue(v))
			}
		case KindVLAN:
			c.kf.set(t, "id", fmt.Sprint(iface.VLANID))
		}
		switch iface.Kind {
		case KindPhysical:
			if iface.WakeOnLAN {
				c.kf.set(t, "wake-on-lan", "64")
			}
			if ipv4MTU != 0 {
				c.kf.set(t, "mtu", fmt.Sprint(ipv4MTU))
			}
			if iface.MAC != "" {
				c.kf.set(t, "mac-address", nmMAC(iface.MAC))
			}
		case KindVLAN:
			if iface.VLANLink != "" {
				c.kf.set(t, "parent", ref(iface.VLANLink))
			}
		case KindBond:
			if ipv4MTU != 0 {
				c.kf.set("ethernet", "mtu", fmt.Sprint(ipv4MTU))
			}
		case KindBridge:
			for _, port := range iface.BridgePorts {
				if pc := lookup(port); pc != nil {
					pc.kf.setDefault("connection", "slave-type", "bridge")
					pc.kf.setDefault("connection", "master", c.uuid)
				}
			}
			if iface.MAC != "" {
				c.kf.set(t, "mac-address", nmMAC(iface.MAC))
			}
		case KindInfiniband:
			if ipv4MTU != 0 {
				c.kf.set(t, "transport-mode", "datagram")
				c.kf.set(t, "mtu", fmt.Sprint(ipv4MTU))
				if iface.MAC != "" {
					c.kf.set(t, "mac-address", nmMAC(iface.MAC))
				}
			}
		}
		if iface.Kind == KindBridge || !c.kf.has(t, "mac-address") {
			c.kf.set("connection", "interface-name", iface.Name)
		}
	}
	for _, k := range order {
		c := conns[k]
		if !c.kf.has("connection", "type") {
			continue
		}
		o.add(NMConnectionsDir+"cloud-init-"+k+".nmconnection",
			"# Generated by cloud-init. Changes will be lost.\n\n"+c.kf.String(), 0o600)
	}
	o.add(NMConfPath, nmConf, 0o600)
	return o, nil
}

func nmValue(v any) string {
	if b, ok := v.(bool); ok {
		if b {
			return "true"
		}
		return "false"
	}
	return renderValue(v)
}

func nmMAC(mac string) string { return strings.ToUpper(strings.ReplaceAll(mac, "-", ":")) }
