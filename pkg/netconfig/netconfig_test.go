package netconfig

import (
	"errors"
	"net/netip"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want error
	}{
		{"empty", "", ErrNoConfig},
		{"scalar", "hello", ErrNoConfig},
		{"no version", "config: []", ErrUnsupportedVersion},
		{"version 3", "version: 3\nconfig: []", ErrUnsupportedVersion},
		{"network null", "network:", ErrNoConfig},
		{"v1 without config", "version: 1", ErrNoConfig},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.in), nil)
			if !errors.Is(err, tc.want) {
				t.Errorf("err = %v, want %v", err, tc.want)
			}
		})
	}
	if _, err := Parse([]byte("version: [1"), nil); err == nil {
		t.Error("bad yaml parsed")
	}
}

func TestDisabled(t *testing.T) {
	for _, in := range []string{"config: disabled", "network: {config: disabled}", "network:\n  version: 2\n  config: disabled\n"} {
		cfg, err := Parse([]byte(in), nil)
		if err != nil || !cfg.Disabled {
			t.Fatalf("%q: cfg %+v err %v", in, cfg, err)
		}
		out, err := Render(RendererNetplan, cfg)
		if err != nil || len(out.Files) != 0 {
			t.Errorf("%q: disabled config rendered %v, %v", in, out.Paths(), err)
		}
	}
}

func TestRenderUnknown(t *testing.T) {
	if _, err := Render("wicked", &Config{}); !errors.Is(err, ErrUnknownRenderer) {
		t.Errorf("err = %v", err)
	}
}

func TestModes(t *testing.T) {
	cfg, err := Parse([]byte("version: 2\nethernets: {eth0: {dhcp4: true}}\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]map[string]string{
		RendererNetplan:        {NetplanPath: "-rw-------"},
		RendererNetworkManager: {NMConnectionsDir + "cloud-init-eth0.nmconnection": "-rw-------", NMConfPath: "-rw-------"},
		RendererENI:            {ENIPath: "-rw-r--r--", UdevRulesPath: "-rw-r--r--"},
	}
	for r, files := range want {
		out, err := Render(r, cfg)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for p, f := range out.Files {
			got[p] = f.Mode.String()
		}
		if diff := cmp.Diff(files, got); diff != "" {
			t.Errorf("%s modes (-want +got):\n%s", r, diff)
		}
		if len(out.Contents()) != len(out.Files) {
			t.Errorf("Contents lost files")
		}
	}
	out, _ := Render(RendererENI, cfg)
	for p, f := range out.Files {
		if f.IfMissing {
			t.Errorf("%s: eni writes no if-missing file (the target's /etc/network/interfaces is the image's)", p)
		}
	}
}

func TestV2Model(t *testing.T) {
	in := `
network:
  version: 2
  ethernets:
    nic:
      match: {macaddress: "AA:BB:CC:00:00:01", driver: virtio_net}
      addresses: [10.0.0.2/24, "fd00::2/64", 10.0.0.3/24]
      gateway4: 10.0.0.1
      gateway6: fd00::1
      nameservers: {addresses: [10.0.0.53], search: [x.example]}
      routes: [{to: 10.9.0.0/16, via: 10.0.0.9, metric: 7, table: 5, on-link: true}]
      dhcp4-overrides: {use-dns: false}
`
	cfg, err := Parse([]byte(in), MACs{"aa:bb:cc:00:00:01": "ens7"})
	if err != nil {
		t.Fatal(err)
	}
	i := cfg.Interface("ens7")
	if i == nil {
		t.Fatalf("interface not renamed by MAC: %+v", cfg.Interfaces)
	}
	want := []Subnet{
		{Type: SubnetStatic, Address: netip.MustParsePrefix("10.0.0.2/24"), Gateway: netip.MustParseAddr("10.0.0.1"),
			DNS:    DNS{Nameservers: []string{"10.0.0.53"}, Search: []string{"x.example"}},
			Routes: []Route{{To: netip.MustParsePrefix("10.9.0.0/16"), Via: netip.MustParseAddr("10.0.0.9"), Metric: intPtr(7), Table: 5, OnLink: true}}},
		{Type: SubnetStatic, Address: netip.MustParsePrefix("fd00::2/64"), Gateway: netip.MustParseAddr("fd00::1")},
		{Type: SubnetStatic, Address: netip.MustParsePrefix("10.0.0.3/24")},
	}
	if diff := cmp.Diff(want, i.Subnets, cmp.Comparer(func(a, b netip.Prefix) bool { return a == b }), cmp.Comparer(func(a, b netip.Addr) bool { return a == b })); diff != "" {
		t.Errorf("subnets (-want +got):\n%s", diff)
	}
	if i.Driver != "virtio_net" || i.Rename || i.DHCP4 == nil || *i.DHCP4.UseDNS {
		t.Errorf("interface %+v", i)
	}
	if diff := cmp.Diff([]string(nil), cfg.DNS.Nameservers); diff != "" { // v2 nameservers are the interface's only
		t.Errorf("global dns: %s", diff)
	}
	if !cfg.UseIPv6() || cfg.HasDefaultRoute() {
		t.Errorf("UseIPv6 %v HasDefaultRoute %v", cfg.UseIPv6(), cfg.HasDefaultRoute())
	}
}

func TestAddrPrefix(t *testing.T) {
	tests := []struct {
		addr, mask string
		prefix     any
		want       string
		err        bool
	}{
		{"10.0.0.1", "", nil, "10.0.0.1/24", false},
		{"10.0.0.1", "255.255.0.0", nil, "10.0.0.1/16", false},
		{"10.0.0.1/255.255.255.128", "", nil, "10.0.0.1/25", false},
		{"10.0.0.1", "", 8, "10.0.0.1/8", false},
		{"10.0.0.1", "", "20", "10.0.0.1/20", false},
		{"2001:db8::1", "", nil, "2001:db8::1/64", false},
		{"2001:db8::1", "ffff:ffff:ffff::", nil, "2001:db8::1/48", false},
		{"2001:db8::1/ffff:ffff::", "", nil, "2001:db8::1/32", false},
		{"10.0.0.1", "255.0.255.0", nil, "", true},
		{"10.0.0.1/33", "", nil, "", true},
		{"10.0.0.1", "ffff::", nil, "", true},
		{"nope", "", nil, "", true},
		{"", "", nil, "", true},
	}
	for _, tc := range tests {
		got, err := parseAddrPrefix(tc.addr, tc.mask, tc.prefix)
		if (err != nil) != tc.err || (err == nil && got.String() != tc.want) {
			t.Errorf("parseAddrPrefix(%q, %q, %v) = %v, %v; want %s err=%v", tc.addr, tc.mask, tc.prefix, got, err, tc.want, tc.err)
		}
	}
	for bits, want := range map[int]string{0: "0.0.0.0", 8: "255.0.0.0", 23: "255.255.254.0", 32: "255.255.255.255"} {
		if got := ipv4Mask(bits); got != want {
			t.Errorf("ipv4Mask(%d) = %s", bits, got)
		}
	}
}

func TestNaturalSort(t *testing.T) {
	in := []string{"eth0", "ens3", "ens10", "ens12", "ens8", "ens0", "Ens5", "enp0s10", "enp0s3"}
	sort.Slice(in, func(i, j int) bool { return naturalLess(in[i], in[j]) })
	want := []string{"enp0s3", "enp0s10", "ens0", "ens3", "Ens5", "ens8", "ens10", "ens12", "eth0"}
	if diff := cmp.Diff(want, in); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestFallback(t *testing.T) {
	links := []Link{
		{Name: "lo", MAC: "00:00:00:00:00:00", Carrier: true},
		{Name: "ens10", MAC: "52:54:00:00:00:10", Carrier: true},
		{Name: "ens3", MAC: "52:54:00:00:00:03", Carrier: true},
		{Name: "eth0", MAC: "52:54:00:00:00:01", OperState: "down"},
		{Name: "veth12", MAC: "52:54:00:00:00:12", Carrier: true},
		{Name: "br0", MAC: "52:54:00:00:00:13", Carrier: true, Bridge: true},
		{Name: "bond0", MAC: "52:54:00:00:00:14", Carrier: true, Bond: true},
		{Name: "ens4", MAC: "52:54:00:00:00:04", Carrier: true, Member: true},
		{Name: "ens5", MAC: "", Carrier: true},
		{Name: "ens6", MAC: "52:54:00:00:00:06", OperState: "up"},
		{Name: "ens2", MAC: "52:54:00:00:00:02", Dormant: true},
	}
	if diff := cmp.Diff([]string{"ens3", "ens10", "eth0", "ens2"}, FallbackNICs(links)); diff != "" {
		t.Errorf("FallbackNICs (-want +got):\n%s", diff)
	}
	// eth0 with carrier wins.
	links[3].Carrier = true
	cfg := Fallback(links)
	if cfg == nil {
		t.Fatal("no fallback")
	}
	out, err := Render(RendererNetplan, cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := Header + `network:
    ethernets:
        eth0:
            accept-ra: true
            dhcp4: true
            match:
                macaddress: '52:54:00:00:00:01'
            set-name: eth0
    version: 2
`
	if diff := cmp.Diff(want, string(out.Files[NetplanPath].Data)); diff != "" {
		t.Errorf("netplan (-want +got):\n%s", diff)
	}
	if Fallback([]Link{{Name: "lo", MAC: "00:00:00:00:00:00"}}) != nil {
		t.Error("fallback without NICs")
	}
	fo := Fallback([]Link{{Name: "eth1", MAC: "52:54:00:00:00:09", Carrier: true, NetFailoverMaster: true}})
	if fo.Interfaces[0].Match.Name != "eth1" || fo.Interfaces[0].Match.MACAddress != "" {
		t.Errorf("net_failover master not matched by name: %+v", fo.Interfaces[0])
	}
}

func TestSelect(t *testing.T) {
	files := func(paths ...string) func(string) bool {
		return func(p string) bool {
			for _, x := range paths {
				if ok, _ := filepath.Match(p, x); ok {
					return true
				}
			}
			return false
		}
	}
	eni := []string{"/sbin/ifup", "/sbin/ifdown", "/sbin/ifquery", "/etc/network/interfaces"}
	netplan := []string{"/usr/sbin/netplan"}
	networkd := []string{"/usr/lib/systemd/systemd-networkd"}
	nm := []string{"/etc/NetworkManager/NetworkManager.conf", "/usr/bin/nmcli", "/usr/lib/systemd/systemd",
		"/etc/systemd/system/multi-user.target.wants/NetworkManager.service"}
	ifcfgRH := []string{"/usr/lib64/NetworkManager/1.42.2-1.el9/libnm-settings-plugin-ifcfg-rh.so"}
	tests := []struct {
		name       string
		id         string
		like       []string
		files      []string
		configured []string
		want       string
	}{
		{"debian cloud image", "debian", nil, append(eni, networkd...), nil, RendererENI},
		{"debian with netplan", "debian", nil, append(append(eni, networkd...), netplan...), nil, RendererNetplan},
		{"debian networkd only", "debian", nil, networkd, nil, RendererNetworkd},
		{"debian 13 cloud image (netplan.io, no ifupdown)", "debian", nil, append(netplan, networkd...), nil, RendererNetplan},
		{"ubuntu", "ubuntu", []string{"debian"}, append(netplan, networkd...), nil, RendererNetplan},
		{"ubuntu nothing", "ubuntu", nil, networkd, nil, ""},
		{"rhel9 nm", "rhel", []string{"fedora"}, append(nm, ifcfgRH...), nil, RendererNetworkManager},
		{"rocky ifcfg only", "rocky", nil, ifcfgRH, nil, RendererSysconfig},
		{"centos7 network-scripts", "centos", nil, []string{"/sbin/ifup", "/sbin/ifdown", "/etc/sysconfig/network-scripts/network-functions"}, nil, RendererSysconfig},
		{"fedora", "fedora", nil, append(nm, networkd...), nil, RendererNetworkManager},
		{"nm disabled", "fedora", nil, append(nm[:3:3], networkd...), nil, RendererNetworkd},
		{"alpine", "alpine", nil, eni, nil, RendererENI},
		{"photon", "photon", nil, append(eni, networkd...), nil, RendererNetworkd},
		{"unknown like rhel", "myos", []string{"rhel", "centos"}, append(nm, ifcfgRH...), nil, RendererNetworkManager},
		{"unknown default", "myos", nil, append(eni, netplan...), nil, RendererENI},
		{"sysconfig not on debian", "debian", nil, ifcfgRH, []string{RendererSysconfig}, ""},
		{"configured", "debian", nil, append(eni, networkd...), []string{RendererNetworkd, RendererENI}, RendererNetworkd},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Select(tc.id, tc.like, files(tc.files...), tc.configured); got != tc.want {
				t.Errorf("Select = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestDumpYAML(t *testing.T) {
	v := map[string]any{
		"b": []any{"x", map[string]any{"k": 1, "j": true}, []any{"n"}},
		"a": map[string]any{"mac": "52:54:00:12:34:56", "hex": "52:54:00:ab:cd:ef", "on": "on", "num": "0755",
			"f": 1.5, "null": nil, "empty": "", "colon": "a: b", "hash": "a #b", "q": "it's", "dash": "- x", "ok": "-x",
			"ver": "10.0", "ip": "10.0.0.1", "nl": "a\nb", "e": map[string]any{}, "l": []any{}},
	}
	want := `a:
    colon: 'a: b'
    dash: '- x'
    e: {}
    empty: ''
    f: 1.5
    hash: 'a #b'
    hex: 52:54:00:ab:cd:ef
    ip: 10.0.0.1
    l: []
    mac: '52:54:00:12:34:56'
    nl: "a\nb"
    'null': null
    num: '0755'
    ok: -x
    'on': 'on'
    q: it's
    ver: '10.0'
b:
- x
-   j: true
    k: 1
-   - n
`
	got := dumpYAML(v)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	// What we write, we read back the same.
	back, err := decodeYAML([]byte(got))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(plain(any(toOmap(v))), plain(back)); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}

// plain turns decoded YAML into comparable maps.
func plain(v any) any {
	switch x := v.(type) {
	case *omap:
		m := map[string]any{}
		for _, k := range x.keys {
			m[k] = plain(x.m[k])
		}
		return m
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = plain(e)
		}
		return out
	}
	return v
}

func toOmap(v any) any {
	switch x := v.(type) {
	case map[string]any:
		o := newOmap()
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			o.set(k, toOmap(x[k]))
		}
		return o
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = toOmap(e)
		}
		return out
	}
	return v
}

func TestYAML11(t *testing.T) {
	v, err := decodeYAML([]byte("a: yes\nb: Off\nc: 0x1f\nd: 010\ne: ~\nf: 1_000\ng: '1'\nh: 52:54:00:12:34:56\ni: .inf\nj: 1.5e+3\nk: &x {z: 1}\nl: *x\nm:\n  <<: *x\n  y: 2\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"a": true, "b": false, "c": 31, "d": 8, "e": nil, "f": 1000, "g": "1",
		"h": 41135085296 /* base 60: PyYAML reads an unquoted all-digit MAC so */, "j": 1500.0, "k": map[string]any{"z": 1}, "l": map[string]any{"z": 1},
		"m": map[string]any{"z": 1, "y": 2}}
	got := plain(v).(map[string]any)
	delete(got, "i")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	bomb := "a: &a [x,x,x,x,x,x,x,x,x,x]\n"
	for i := 'b'; i <= 'k'; i++ {
		bomb += string(i) + ": &" + string(i) + " [" + strings.Repeat("*"+string(i-1)+",", 9) + "*" + string(i-1) + "]\n"
	}
	if _, err := decodeYAML([]byte(bomb)); err == nil {
		t.Error("alias bomb decoded")
	}
}

func TestUUID5(t *testing.T) {
	// Values cloud-init 22.4.2 wrote for these connection ids.
	for id, want := range map[string]string{
		"eth0": "1dd9a779-d327-56e1-8454-c65e2556c12c",
		"eth1": "3c50eb47-7260-5a6d-801d-bd4f587d6b58",
	} {
		if got := uuid5(nmNamespace, id); got != want {
			t.Errorf("uuid5(%s) = %s, want %s", id, got, want)
		}
	}
}
