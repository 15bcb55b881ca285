package netconfig

// ENI text, as NoCloud's meta-data `network-interfaces` carries it,
// converted to network config v1 as cloud-init's convert_eni_data does:
// every `iface NAME FAMILY METHOD` stanza becomes a subnet of device NAME
// (an alias NAME:N folds into NAME), `lo` is the loopback, `auto` lines make
// a stanza's control auto (else manual), address/netmask/gateway/broadcast,
// dns-nameservers/dns-search and hwaddress are read; other options
// (bond-*, bridge_*, up/down commands) are parsed and ignored, as in
// cloud-init. ifupdown's one stanza per name and family is allowed (cloud-init
// refuses a second stanza for a name). `source` and `source-directory` are ignored: the text stands
// alone. `allow-hotplug` gives control hotplug. Two fixes over cloud-init: `inet6 dhcp` becomes dhcp6 (cloud-init
// makes it dhcp4) and `inet6 auto` becomes ipv6_slaac (cloud-init keeps
// "auto", which its renderers reject).

import (
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"
)

type eniStanza struct {
	name, family, method string
	opts                 map[string]string
	dns                  DNS
	hwaddress            string
}

// ParseENI converts ENI text.
func ParseENI(data []byte) (*Config, error) {
	if !utf8.Valid(data) {
		return nil, fmt.Errorf("eni text is not valid UTF-8")
	}
	var stanzas []*eniStanza
	auto, hotplug := map[string]bool{}, map[string]bool{}
	seen := map[string]bool{}
	var warnings []string
	var cur *eniStanza
	for n, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		opt := f[0]
		switch {
		case opt == "source" || opt == "source-directory":
			warnings = append(warnings, fmt.Sprintf("line %d: %s ignored (ENI text stands alone)", n+1, opt))
		case opt == "auto":
			for _, name := range f[1:] {
				auto[name] = true
			}
		case opt == "allow-hotplug":
			for _, name := range f[1:] {
				hotplug[name] = true
			}
		case opt == "iface":
			if len(f) < 4 {
				return nil, fmt.Errorf("eni line %d: iface needs a name, a family and a method", n+1)
			}
			// ifupdown allows one stanza per name and family (cloud-init
			// only one per name).
			key := f[1] + " " + f[2]
			if seen[key] {
				return nil, fmt.Errorf("eni line %d: interface %s %s can only be defined once", n+1, f[1], f[2])
			}
			seen[key] = true
			cur = &eniStanza{name: f[1], family: f[2], method: f[3], opts: map[string]string{}}
			stanzas = append(stanzas, cur)
		case cur == nil:
			warnings = append(warnings, fmt.Sprintf("line %d: %q outside an iface stanza ignored", n+1, opt))
		case opt == "hwaddress":
			if len(f) >= 3 && f[1] == "ether" {
				cur.hwaddress = f[2]
			} else if len(f) >= 2 {
				cur.hwaddress = f[1]
			}
		case opt == "dns-nameservers":
			cur.dns.Nameservers = append([]string(nil), f[1:]...)
		case opt == "dns-search":
			cur.dns.Search = append([]string(nil), f[1:]...)
		case len(f) >= 2:
			cur.opts[opt] = f[1]
		}
	}
	type dev struct {
		name, kind, mac string
		subnets         []any
	}
	devs := map[string]*dev{}
	for _, s := range stanzas {
		devname, _, _ := strings.Cut(s.name, ":")
		d, ok := devs[devname]
		if !ok {
			kind := "physical"
			if devname == "lo" {
				kind = "loopback"
			}
			d = &dev{name: devname, kind: kind}
			devs[devname] = d
		}
		if d.mac == "" && s.hwaddress != "" {
			d.mac = s.hwaddress
		}
		sub := newOmap()
		t := s.method
		if s.family == "inet6" {
			switch t {
			case "dhcp":
				t = "dhcp6"
			case "auto":
				t = "ipv6_slaac"
			}
		}
		sub.set("type", t)
		switch {
		case auto[s.name]:
			sub.set("control", "auto")
		case hotplug[s.name]:
			sub.set("control", "hotplug")
		default:
			sub.set("control", "manual")
		}
		if s.method == "static" {
			sub.set("address", s.opts["address"])
		}
		for _, k := range []string{"netmask", "gateway", "broadcast"} {
			if v, ok := s.opts[k]; ok {
				sub.set(k, v)
			}
		}
		if len(s.dns.Nameservers) > 0 {
			sub.set("dns_nameservers", stringsAny(s.dns.Nameservers))
		}
		if len(s.dns.Search) > 0 {
			sub.set("dns_search", stringsAny(s.dns.Search))
		}
		d.subnets = append(d.subnets, sub)
	}
	names := make([]string, 0, len(devs))
	for n := range devs {
		names = append(names, n)
	}
	sort.Strings(names)
	var list []any
	for _, n := range names {
		d := devs[n]
		c := newOmap()
		c.set("type", d.kind)
		c.set("name", d.name)
		if d.mac != "" {
			c.set("mac_address", d.mac)
		}
		c.set("subnets", d.subnets)
		list = append(list, c)
	}
	doc := newOmap()
	doc.set("version", 1)
	doc.set("config", list)
	cfg, err := parseV1(doc, nil)
	if err != nil {
		return nil, err
	}
	cfg.Warnings = append(warnings, cfg.Warnings...)
	return cfg, nil
}
