package opennebula

// The network configuration cloud-init's OpenNebulaNetwork.gen_conf makes
// of the context (pure).

import (
	"net/netip"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
)

var (
	ethMAC   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(ETH(\d+))_MAC$`) })
	routeVia = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*(\S+)\s+via\s+(\S+)\s*$`) })
)

// NetworkConfig is the network config v2 document cloud-init's
// OpenNebulaNetwork.gen_conf makes of ctx: one ethernet per ETH<n>_MAC,
// matched by MAC and keyed by its context name lowercased ("eth0"; cloud-init
// keys it by the system's name for that MAC, which is not known before the
// root is up), with ETH<n>_IP (else the address the MAC encodes) over
// ETH<n>_MASK (default 255.255.255.0), ETH<n>_IP6 and _IP6_ULA over
// _IP6_PREFIX_LENGTH (default 64), _GATEWAY as gateway4, _IP6_GATEWAY
// (else _GATEWAY6) as gateway6, _DNS then DNS and _SEARCH_DOMAIN then
// SEARCH_DOMAIN as nameservers, _MTU and _ROUTES ("NET via GW, ...").
// An empty value counts as absent. nil when ctx has no ETH<n>_MAC.
func NetworkConfig(ctx map[string]string) map[string]any {
	type nic struct {
		dev, mac string
		n        int
	}
	var nics []nic
	for k, v := range ctx {
		m := ethMAC().FindStringSubmatch(k)
		if m == nil || strings.TrimSpace(v) == "" {
			continue
		}
		n, _ := strconv.Atoi(m[2])
		nics = append(nics, nic{dev: m[1], mac: strings.ToLower(strings.TrimSpace(v)), n: n})
	}
	if len(nics) == 0 {
		return nil
	}
	sort.Slice(nics, func(i, j int) bool { return nics[i].n < nics[j].n })
	field := func(dev, name, def string) string {
		if v := ctx[dev+"_"+name]; v != "" {
			return v
		}
		return def
	}
	ethernets := map[string]any{}
	for _, c := range nics {
		conf := map[string]any{"match": map[string]any{"macaddress": c.mac}}
		addrs := []any{field(c.dev, "IP", mac2ip(c.mac)) + "/" + maskPrefix(field(c.dev, "MASK", "255.255.255.0"))}
		var six []string
		for _, k := range []string{"IP6", "IP6_ULA"} {
			if v := field(c.dev, k, ""); v != "" {
				six = append(six, v)
			}
		}
		prefix6 := field(c.dev, "IP6_PREFIX_LENGTH", "64")
		for _, a := range six {
			addrs = append(addrs, a+"/"+prefix6)
		}
		conf["addresses"] = addrs
		if gw := field(c.dev, "GATEWAY", ""); gw != "" {
			conf["gateway4"] = gw
		}
		gw6, ok := ctx[c.dev+"_IP6_GATEWAY"]
		if !ok || gw6 == "" {
			gw6 = field(c.dev, "GATEWAY6", "")
		}
		if gw6 != "" {
			conf["gateway6"] = gw6
		}
		ns := map[string]any{}
		if dns := uniqueFields(field(c.dev, "DNS", ""), ctx["DNS"]); len(dns) > 0 {
			ns["addresses"] = dns
		}
		if search := uniqueFields(field(c.dev, "SEARCH_DOMAIN", ""), ctx["SEARCH_DOMAIN"]); len(search) > 0 {
			ns["search"] = search
		}
		if len(ns) > 0 {
			conf["nameservers"] = ns
		}
		if mtu := field(c.dev, "MTU", ""); mtu != "" {
			if n, err := strconv.Atoi(mtu); err == nil {
				conf["mtu"] = n
			}
		}
		var routes []any
		for _, e := range strings.Split(field(c.dev, "ROUTES", ""), ",") {
			if m := routeVia().FindStringSubmatch(e); m != nil {
				routes = append(routes, map[string]any{"to": m[1], "via": m[2]})
			}
		}
		if len(routes) > 0 {
			conf["routes"] = routes
		}
		ethernets[strings.ToLower(c.dev)] = conf
	}
	return map[string]any{"version": 2, "ethernets": ethernets}
}

// mac2ip is the IPv4 address OpenNebula encodes in a MAC's last four
// octets.
func mac2ip(mac string) string {
	parts := strings.Split(mac, ":")
	if len(parts) < 6 {
		return ""
	}
	var out []string
	for _, p := range parts[2:] {
		n, err := strconv.ParseUint(p, 16, 8)
		if err != nil {
			return ""
		}
		out = append(out, strconv.FormatUint(n, 10))
	}
	return strings.Join(out, ".")
}

// maskPrefix is a dotted IPv4 netmask's prefix length (the text as is
// when it is not one).
func maskPrefix(mask string) string {
	a, err := netip.ParseAddr(mask)
	if err != nil || !a.Is4() {
		return mask
	}
	b := a.As4()
	n := 0
	for _, x := range b {
		for i := 7; i >= 0; i-- {
			if x&(1<<i) == 0 {
				return strconv.Itoa(n)
			}
			n++
		}
	}
	return strconv.Itoa(n)
}

func uniqueFields(lists ...string) []any {
	var out []any
	seen := map[string]bool{}
	for _, l := range lists {
		for _, f := range strings.Fields(l) {
			if !seen[f] {
				seen[f] = true
				out = append(out, f)
			}
		}
	}
	return out
}
