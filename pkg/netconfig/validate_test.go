package netconfig

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// hostileCases are network configs carrying a value meant to add a line to,
// or run a command from, a rendered file. Every hostile value holds "pwn";
// keep is a value of the same config that must survive.
var hostileCases = []struct {
	name, in, key, keep string
}{
	{"v1 mac newline", `version: 1
config:
- {type: physical, name: eth0, mac_address: "52:54:00:12:34:56\nNM_CONTROLLED=pwn", subnets: [{type: dhcp}]}
- {type: physical, name: eth1, subnets: [{type: dhcp}]}
`, "mac_address", "eth1"},
	{"v1 mac command", `version: 1
config:
- {type: physical, name: eth0, mac_address: "52:54:00:12:34:56$(touch /pwn)", subnets: [{type: dhcp}]}
- {type: physical, name: eth1, subnets: [{type: dhcp}]}
`, "mac_address", "eth1"},
	{"v1 bond mac quote", `version: 1
config:
- {type: physical, name: eth0}
- {type: bond, name: bond0, mac_address: "52:54:00:12:34:56\" ; touch /pwn; \"", bond_interfaces: [eth0], params: {bond-mode: active-backup}, subnets: [{type: dhcp}]}
`, "mac_address", "bond0"},
	{"v1 driver", `version: 1
config:
- {type: physical, name: eth0, mac_address: "52:54:00:12:34:56", params: {driver: "virtio_net\"\nATTR{pwn}"}, subnets: [{type: dhcp}]}
- {type: physical, name: eth1, subnets: [{type: dhcp}]}
`, "driver", "eth1"},
	{"v1 dns_search", `version: 1
config:
- type: physical
  name: eth0
  subnets:
  - {type: static, address: 192.0.2.10/24, dns_nameservers: [192.0.2.1], dns_search: [good.example, "a$(touch /pwn)", "b\nnameserver 6.6.6.6 pwn"]}
`, "search domain", "good.example"},
	{"v1 nameserver", `version: 1
config:
- {type: physical, name: eth0, subnets: [{type: dhcp}]}
- {type: nameserver, address: [192.0.2.1, "192.0.2.2\noptions pwn"], search: [good.example, "x` + "`touch /pwn`" + `"]}
`, "nameserver", "eth0"},
	{"v1 bond param", `version: 1
config:
- {type: physical, name: eth0}
- {type: bond, name: bond0, bond_interfaces: [eth0], params: {bond-mode: active-backup, bond-primary: "eth0\npost-up touch /pwn"}, subnets: [{type: dhcp}]}
`, "parameter", "active-backup"},
	{"v2 match.driver", `version: 2
ethernets:
  id0: {match: {driver: "virtio*\nDriver=pwn"}, set-name: eth0, dhcp4: true}
  eth1: {dhcp4: true}
`, "match.driver", "eth1"},
	{"v2 match.macaddress", `version: 2
ethernets:
  id0: {match: {macaddress: "52:54:00:12:34:56\" RUN+=\"/pwn"}, set-name: eth0, dhcp4: true}
  eth1: {dhcp4: true}
`, "match.macaddress", "eth1"},
	{"v2 search", `version: 2
ethernets:
  eth0:
    addresses: [192.0.2.10/24]
    nameservers: {addresses: [192.0.2.1], search: [good.example, "pwn.example\"; touch /x; \"", "a\nb.pwn"]}
`, "search domain", "good.example"},
	{"v2 bond macaddress", `version: 2
ethernets: {eth0: {}}
bonds:
  bond0: {interfaces: [eth0], macaddress: "$(touch /pwn)", dhcp4: true}
`, "macaddress", "bond0"},
}

// TestHostileValuesNeverRendered: no renderer writes a hostile value, each
// is reported by key, and the rest of the config is kept.
func TestHostileValuesNeverRendered(t *testing.T) {
	for _, tc := range hostileCases {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := Parse([]byte(tc.in), fuzzMACs)
			if err != nil {
				t.Fatal(err)
			}
			warned := false
			for _, w := range cfg.Warnings {
				warned = warned || (strings.Contains(w, tc.key) && strings.Contains(w, "pwn"))
			}
			if !warned {
				t.Errorf("no warning names %s and the value: %q", tc.key, cfg.Warnings)
			}
			for _, r := range Renderers {
				out, err := Render(r.Name, cfg)
				if err != nil {
					t.Errorf("%s: %v", r.Name, err)
					continue
				}
				kept := false
				for _, p := range out.Paths() {
					data := string(out.Files[p].Data)
					if strings.Contains(data, "pwn") {
						t.Errorf("%s: %s holds the hostile value:\n%s", r.Name, p, data)
					}
					kept = kept || strings.Contains(data, tc.keep)
				}
				if !kept {
					t.Errorf("%s: %q was dropped with the hostile value", r.Name, tc.keep)
				}
			}
		})
	}
}

// TestRenderersRefuseUnsafeModel: a model built by hand, past the parsers,
// is refused by every renderer.
func TestRenderersRefuseUnsafeModel(t *testing.T) {
	bad := []*Config{
		{Version: 1, Interfaces: []*Interface{{Name: "eth0", Kind: KindPhysical, MAC: "52:54:00:12:34:56\nX=1"}}},
		{Version: 1, Interfaces: []*Interface{{Name: "eth0", Kind: KindPhysical, Driver: "e1000$(reboot)"}}},
		{Version: 1, Interfaces: []*Interface{{Name: "eth0", Kind: KindPhysical, Subnets: []Subnet{{Type: SubnetDHCP4, DNS: DNS{Search: []string{"a\nb"}}}}}}},
		{Version: 1, Interfaces: []*Interface{{Name: "eth0$(x)", Kind: KindPhysical}}},
		{Version: 1, Interfaces: []*Interface{{Name: "eth0", Kind: KindPhysical}}, DNS: DNS{Nameservers: []string{"1.1.1.1\nsearch x"}}},
	}
	for n, cfg := range bad {
		for _, r := range Renderers {
			if _, err := Render(r.Name, cfg); !errors.Is(err, ErrUnsafeValue) {
				t.Errorf("case %d, %s: err = %v, want ErrUnsafeValue", n, r.Name, err)
			}
		}
	}
}

func TestValidDomain(t *testing.T) {
	for _, tc := range []struct {
		in            string
		loose, strict bool
	}{
		{"example.com", true, true},
		{"example.com.", true, true},
		{"a-b.c0", true, true},
		{"_srv.example", true, false},
		{"", false, false},
		{".", false, false},
		{"a..b", false, false},
		{"-a.b", false, false},
		{"a b", false, false},
		{"a\nb", false, false},
		{"a$(x)", false, false},
		{strings.Repeat("a", 64) + ".b", false, false},
		{strings.Repeat("a.", 127) + "ab", false, false},
	} {
		if got := ValidDomain(tc.in, false); got != tc.loose {
			t.Errorf("ValidDomain(%q, false) = %v", tc.in, got)
		}
		if got := ValidDomain(tc.in, true); got != tc.strict {
			t.Errorf("ValidDomain(%q, true) = %v", tc.in, got)
		}
	}
}

// TestKlibcSearchStrict: DOMAINSEARCH in a klibc state file came from a
// DHCP server (option 119): only RFC 1123 names are kept.
func TestKlibcSearchStrict(t *testing.T) {
	state := "DEVICE='eth0'\nPROTO='dhcp'\nIPV4ADDR='10.0.2.15'\nIPV4NETMASK='255.255.255.0'\nIPV4DNS0='10.0.2.3'\n" +
		"DOMAINSEARCH='good.example _srv.example a$(touch /pwn) b\"pwn'\n"
	cfg, err := ParseKlibc([]KlibcFile{{Path: "/run/net-eth0.conf", Data: []byte(state)}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := cfg.Interface("eth0").Subnets[0].DNS.Search
	if strings.Join(got, " ") != "good.example" {
		t.Errorf("search = %q, want [good.example]", got)
	}
	dropped := 0
	for _, w := range cfg.Warnings {
		if strings.Contains(w, "/run/net-eth0.conf: DOMAINSEARCH") {
			dropped++
		}
	}
	if dropped != 4 { // "a$(touch /pwn)" is two words
		t.Errorf("%d DOMAINSEARCH warnings naming the file, want 4: %q", dropped, cfg.Warnings)
	}
}

// TestHostileOtherFormats: no renderer writes the values of the hostile
// seeds of the ENI, network_data.json and klibc fuzz targets.
func TestHostileOtherFormats(t *testing.T) {
	parse := map[string]func(string) (*Config, error){}
	for i, s := range hostileNetworkData {
		parse[fmt.Sprintf("network_data %d", i)] = func(string) (*Config, error) { return ParseNetworkData([]byte(s), fuzzMACs) }
	}
	for i, s := range hostileENI {
		parse[fmt.Sprintf("eni %d", i)] = func(string) (*Config, error) { return ParseENI([]byte(s)) }
	}
	for i, s := range hostileKlibc {
		parse[fmt.Sprintf("klibc %d", i)] = func(string) (*Config, error) {
			return ParseKlibc([]KlibcFile{{Path: "/run/net-eth0.conf", Data: []byte(s)}}, nil)
		}
	}
	for name, p := range parse {
		cfg, err := p(name)
		if err != nil {
			// network_data.json whose MAC names no NIC fails as in 26.x;
			// the message (logged) quotes the value.
			if strings.Contains(err.Error(), "\n") || !strings.HasPrefix(name, "network_data") {
				t.Errorf("%s: %v", name, err)
			}
			continue
		}
		for _, r := range Renderers {
			out, err := Render(r.Name, cfg)
			if err != nil {
				t.Errorf("%s: %s: %v", name, r.Name, err)
				continue
			}
			for _, path := range out.Paths() {
				if data := out.Files[path].Data; strings.Contains(string(data), "pwn") {
					t.Errorf("%s: %s: %s holds a hostile value:\n%s", name, r.Name, path, data)
				}
			}
		}
	}
}

// TestScalarString: str() where netconfig's text is str(), and the two
// cases it deliberately is not (null, floats).
func TestScalarString(t *testing.T) {
	for _, tc := range []struct {
		v    any
		want string
	}{
		{"eth0", "eth0"}, {true, "True"}, {false, "False"}, {1500, "1500"}, {int64(-3), "-3"}, {uint64(1) << 63, "9223372036854775808"},
		{nil, ""}, {1.0, "1"}, {0.5, "0.5"}, {1e21, "1e+21"},
	} {
		if got := scalarString(tc.v); got != tc.want {
			t.Errorf("scalarString(%#v) = %q, want %q", tc.v, got, tc.want)
		}
	}
}
