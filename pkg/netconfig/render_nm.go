package netconfig

// The NetworkManager renderer writes one keyfile per device,
// /etc/NetworkManager/system-connections/cloud-init-<if>.nmconnection
// (0600), as cloud-init's network_manager.py does: a connection UUID derived
// from the device name (UUIDv5 in cloud-init's namespace), bond members and
// bridge ports pointing at their master's UUID, ethernet devices matched by
// MAC. One fix over 22.4: static6 subnets get method=manual (22.4 wrote
// auto with may-fail=true).
//
// Not expressible: routing policy, route tables, on-link, route metrics,
// global routes and global DNS (cloud-init drops them too).

import (
	"crypto/sha1"
	"fmt"
	"strings"
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
	c.kf.set("user", "org.freedesktop.NetworkManager.origin", "cloud-init")
	return c
}

func (c *nmConn) setIPMethod(family string, t SubnetType) {
	c.kf.setDefault(family, "method", "disabled")
	method := "auto"
	switch t {
	case SubnetStatic, SubnetStatic6:
		method = "manual"
	case SubnetDHCP6, SubnetSLAAC, SubnetDHCP6Stateless, SubnetDHCP6Stateful, SubnetDHCP4, SubnetDHCP:
	default:
		c.kf.set(family, "may-fail", "true")
	}
	cur := c.kf.get(family, "method")
	if cur == "dhcp" || (cur == "auto" && method == "manual") {
		return
	}
	c.kf.set(family, "method", method)
	c.kf.setDefault(family, "may-fail", "false")
}

func (c *nmConn) addNumbered(sec, prefix, val string) {
	for i := 1; ; i++ {
		k := fmt.Sprintf("%s%d", prefix, i)
		if !c.kf.has(sec, k) {
			c.kf.set(sec, k, val)
			return
		}
	}
}

func (c *nmConn) addNameserver(ns string) {
	family := "ipv4"
	if a, err := parseAddr(ns); err == nil && a.Is6() {
		family = "ipv6"
	}
	c.kf.setDefault(family, "method", "disabled")
	c.kf.setDefault(family, "dns", "")
	c.kf.set(family, "dns", c.kf.get(family, "dns")+ns+";")
}

func (c *nmConn) addSearch(family string, search []string) {
	c.kf.setDefault(family, "dns-search", "")
	c.kf.set(family, "dns-search", c.kf.get(family, "dns-search")+strings.Join(search, ";")+";")
}

var nmType = map[Kind]string{
	KindPhysical: "ethernet", KindVLAN: "vlan", KindBond: "bond", KindBridge: "bridge", KindInfiniband: "infiniband",
}

// NM property ← model parameter.
var nmBondProps = []struct{ nm, v2 string }{
	{"mode", "mode"},
	{"miimon", "mii-monitor-interval"},
	{"xmit_hash_policy", "transmit-hash-policy"},
	{"num_grat_arp", "gratuitous-arp"},
	{"downdelay", "down-delay"},
	{"updelay", "up-delay"},
	{"fail_over_mac", "fail-over-mac-policy"},
	{"primary_reselect", "primary-reselect-policy"},
	{"primary", "primary"},
}

// RenderNetworkManager renders cfg as NetworkManager keyfiles.
func RenderNetworkManager(cfg *Config) (*Output, error) {
	o := newOutput()
	unsupported(o, cfg, RendererNetworkManager, true, true)
	cfg = mainTableOnly(cfg)
	if len(cfg.Routes) > 0 {
		o.warnf("global routes (v1 type: route) cannot be expressed by the network-manager renderer; dropped (as cloud-init does)")
	}
	conns := map[string]*nmConn{}
	var order []string
	for _, i := range cfg.Interfaces {
		if _, ok := conns[i.Name]; !ok {
			order = append(order, i.Name)
		}
		conns[i.Name] = newNMConn(i.Name)
	}
	ref := func(name string) string {
		if c, ok := conns[name]; ok {
			return c.uuid
		}
		return name
	}
	for _, iface := range cfg.Interfaces {
		c := conns[iface.Name]
		t, ok := nmType[iface.Kind]
		if !ok {
			continue
		}
		c.kf.set("connection", "type", t)
		if iface.BondMaster != "" {
			c.kf.set("connection", "slave-type", "bond")
			c.kf.set("connection", "master", ref(iface.BondMaster))
		}
		c.kf.section(t)
		ipv4MTU := 0
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
				v := r.To.String()
				if r.Via.IsValid() {
					v += "," + r.Via.String()
				}
				c.addNumbered(family, "route", v)
			}
			for _, n := range s.DNS.Nameservers {
				c.addNameserver(n)
			}
			if len(s.DNS.Search) > 0 {
				c.addSearch(family, s.DNS.Search)
			}
			if family == "ipv4" && s.MTU != 0 {
				ipv4MTU = s.MTU
			}
		}
		if ipv4MTU == 0 {
			ipv4MTU = iface.MTU
		} else if iface.MTU != 0 && ipv4MTU != iface.MTU {
			o.warnf("%s: ignoring device-level mtu %d because ipv4 subnet-level mtu %d is provided", iface.Name, iface.MTU, ipv4MTU)
		}
		switch iface.Kind {
		case KindBond:
			for _, p := range nmBondProps {
				if v, ok := iface.BondParams[p.v2]; ok && v != nil {
					c.kf.set(t, p.nm, nmValue(v))
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
		case KindBridge:
			for _, port := range iface.BridgePorts {
				if pc, ok := conns[port]; ok {
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
	for _, name := range order {
		c := conns[name]
		if !c.kf.has("connection", "type") {
			continue
		}
		o.add(NMConnectionsDir+"cloud-init-"+name+".nmconnection",
			"# Generated by cloud-init. Changes will be lost.\n\n"+c.kf.String(), 0o600)
	}
	return o, nil
}

func nmValue(v any) string {
	if b, ok := v.(bool); ok {
		if b {
			return "true"
		}
		return "false"
	}
	return pyStr(v)
}

func nmMAC(mac string) string { return strings.ToUpper(strings.ReplaceAll(mac, "-", ":")) }
