package netup

import (
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cloudroot/cloudroot/pkg/netconfig"
	"github.com/google/go-cmp/cmp"
)

var lease6 = &Lease{
	Iface:   "ens3",
	Proto:   ProtoDHCP6,
	Addr6:   netip.MustParsePrefix("2001:db8::50/128"),
	DNS6:    []netip.Addr{netip.MustParseAddr("2001:db8::53"), netip.MustParseAddr("2001:db8::54")},
	Search6: []string{"a.example", "b'c.example"},
}

func TestFormatKlibc6(t *testing.T) {
	want := `DEVICE6='ens3'
IPV6PROTO='dhcp6'
IPV6ADDR='2001:db8::50'
IPV6NETMASK='128'
IPV6DNS0='2001:db8::53'
IPV6DOMAINSEARCH='a.example b'\''c.example'
`
	if diff := cmp.Diff(want, string(FormatKlibc6(lease6))); diff != "" {
		t.Errorf("FormatKlibc6 (-want +got):\n%s", diff)
	}
}

// What netup writes for a DHCPv6 lease reads back through pkg/netconfig's
// klibc parser (cloud-init's INITRAMFS source) as a dhcp6 subnet.
func TestKlibc6RoundTrip(t *testing.T) {
	data := FormatKlibc6(lease6)
	vars, warnings, err := netconfig.ParseKlibcVars(data)
	if err != nil || len(warnings) > 0 {
		t.Fatalf("ParseKlibcVars: %v %v\n%s", err, warnings, data)
	}
	for k, want := range map[string]string{"DEVICE6": "ens3", "IPV6PROTO": "dhcp6", "IPV6ADDR": "2001:db8::50",
		"IPV6NETMASK": "128", "IPV6DNS0": "2001:db8::53", "IPV6DOMAINSEARCH": "a.example b'c.example"} {
		if vars[k] != want {
			t.Errorf("%s = %q, want %q", k, vars[k], want)
		}
	}
	cfg, err := netconfig.ParseKlibc([]netconfig.KlibcFile{{Path: "net6-ens3.conf", Data: data}}, map[string]string{"ens3": "52:54:00:aa:bb:cc"})
	if err != nil {
		t.Fatalf("ParseKlibc: %v\n%s", err, data)
	}
	if len(cfg.Interfaces) != 1 || len(cfg.Interfaces[0].Subnets) != 1 {
		t.Fatalf("got %+v", cfg.Interfaces)
	}
	if i := cfg.Interfaces[0]; i.Name != "ens3" || i.MAC != "52:54:00:aa:bb:cc" {
		t.Errorf("interface %s %s", i.Name, i.MAC)
	}
	s := cfg.Interfaces[0].Subnets[0]
	if s.Type != netconfig.SubnetDHCP6 || !slices.Equal(s.DNS.Nameservers, []string{"2001:db8::53"}) {
		t.Errorf("subnet %+v, want dhcp6 with nameserver 2001:db8::53", s)
	}
	// Like cloud-init, the parser takes dns_search from DOMAINSEARCH only,
	// so IPV6DOMAINSEARCH is not carried over.
	if len(s.DNS.Search) != 0 {
		t.Errorf("search %v", s.DNS.Search)
	}

	// A dual-stack lease: both files, both subnets on one interface.
	dual := *lease6
	dual.Proto = ProtoDHCP
	dual.Addr = netip.MustParsePrefix("10.0.0.50/24")
	dir := t.TempDir()
	p, err := dual.WriteKlibcState(dir)
	if err != nil || p != filepath.Join(dir, "net-ens3.conf") {
		t.Fatalf("WriteKlibcState = %s, %v", p, err)
	}
	var files []netconfig.KlibcFile
	for _, name := range []string{"net-ens3.conf", "net6-ens3.conf"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, netconfig.KlibcFile{Path: name, Data: b})
	}
	cfg, err = netconfig.ParseKlibc(files, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Interfaces) != 1 || len(cfg.Interfaces[0].Subnets) != 2 ||
		cfg.Interfaces[0].Subnets[0].Type != netconfig.SubnetDHCP || cfg.Interfaces[0].Subnets[1].Type != netconfig.SubnetDHCP6 {
		t.Errorf("dual-stack: %+v", cfg.Interfaces)
	}

	// DHCPv6 only: no net-<iface>.conf (it would claim IPv4 DHCP).
	dir = t.TempDir()
	if p, err := lease6.WriteKlibcState(dir); err != nil || p != filepath.Join(dir, "net6-ens3.conf") {
		t.Fatalf("WriteKlibcState = %s, %v", p, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "net-ens3.conf")); !os.IsNotExist(err) {
		t.Errorf("net-ens3.conf written for a DHCPv6-only lease: %v", err)
	}
}

func TestResolvConfDualStack(t *testing.T) {
	l := &Lease{Iface: "eth0", DNS: []netip.Addr{netip.MustParseAddr("10.0.0.53")}, Search: []string{"a.example"}}
	l.merge6(lease6)
	got := string(renderResolvConf(l))
	for _, want := range []string{"search a.example b'c.example\n", "nameserver 10.0.0.53\nnameserver 2001:db8::53\nnameserver 2001:db8::54\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("resolv.conf lacks %q:\n%s", want, got)
		}
	}
}

func TestDUIDText(t *testing.T) {
	var d DUID
	if err := d.UnmarshalText([]byte("00:03:00:01:52:54:00:99:00:01")); err != nil || d.String() != "00:03:00:01:52:54:00:99:00:01" {
		t.Errorf("DUID %s, %v", d, err)
	}
	if err := d.UnmarshalText([]byte("zz")); err == nil {
		t.Error("bad hex accepted")
	}
	if err := d.UnmarshalText(nil); err != nil || d != nil {
		t.Errorf("empty: %v %v", d, err)
	}
	for _, f := range []Family{FamilyV4, FamilyV6, FamilyBoth, 9} {
		if f.String() == "" {
			t.Errorf("Family(%d) has no name", f)
		}
	}
}
