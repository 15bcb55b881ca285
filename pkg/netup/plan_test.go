package netup

import (
	"net"
	"net/netip"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func p(s string) netip.Prefix { return netip.MustParsePrefix(s) }

func TestPlanRoutes(t *testing.T) {
	md := []netip.Prefix{p("169.254.169.254/32")}
	tests := []struct {
		name      string
		lease     Lease
		linkLocal []netip.Prefix
		want      []Route
	}{
		{
			name:  "router in subnet: default route only",
			lease: Lease{Addr: p("10.0.0.50/24"), Router: a("10.0.0.1")},
			want:  []Route{{Dst: p("0.0.0.0/0"), Gateway: a("10.0.0.1")}},
		},
		{
			name:  "router outside subnet gets an on-link host route first (GCE /32 leases)",
			lease: Lease{Addr: p("10.128.0.5/32"), Router: a("10.128.0.1")},
			want: []Route{
				{Dst: p("10.128.0.1/32")},
				{Dst: p("0.0.0.0/0"), Gateway: a("10.128.0.1")},
			},
		},
		{
			name: "option 121 overrides the router option (RFC 3442)",
			lease: Lease{Addr: p("10.0.0.50/24"), Router: a("10.0.0.254"), Routes: []Route{
				{Dst: p("10.0.0.0/24")},
				{Dst: p("169.254.169.254/32"), Gateway: a("10.0.0.2")},
				{Dst: p("0.0.0.0/0"), Gateway: a("10.0.0.1")},
			}},
			linkLocal: md,
			want: []Route{
				{Dst: p("169.254.169.254/32"), Gateway: a("10.0.0.2")},
				{Dst: p("0.0.0.0/0"), Gateway: a("10.0.0.1")},
			},
		},
		{
			name:      "no router (slirp restrict=on): only the metadata route",
			lease:     Lease{Addr: p("169.254.2.15/16")},
			linkLocal: md,
			want:      []Route{{Dst: p("169.254.169.254/32")}},
		},
		{
			name:      "metadata route on-link beside the default route",
			lease:     Lease{Addr: p("10.0.0.50/24"), Router: a("10.0.0.1")},
			linkLocal: append(md, netip.Prefix{}, p("fd00:ec2::254/128")),
			want: []Route{
				{Dst: p("0.0.0.0/0"), Gateway: a("10.0.0.1")},
				{Dst: p("169.254.169.254/32")},
			},
		},
		{
			name:  "unspecified router ignored",
			lease: Lease{Addr: p("10.0.0.50/24"), Router: a("0.0.0.0")},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := planRoutes(&tc.lease, tc.linkLocal)
			if diff := cmp.Diff(tc.want, got, cmp.Comparer(func(x, y netip.Addr) bool { return x == y }),
				cmp.Comparer(func(x, y netip.Prefix) bool { return x == y })); diff != "" {
				t.Errorf("planRoutes (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSelectLinks(t *testing.T) {
	mac := net.HardwareAddr{2, 0, 0, 0, 0, 1}
	links := []linkInfo{
		{Name: "lo", Type: "device", Encap: "loopback", Loopback: true},
		{Name: "eth10", Type: "device", Encap: "ether", HWAddr: mac},
		{Name: "eth2", Type: "device", Encap: "ether", HWAddr: mac},
		{Name: "eth1", Type: "device", Encap: "ether", HWAddr: mac, Carrier: true},
		{Name: "docker0", Type: "bridge", Encap: "ether", HWAddr: mac, Carrier: true},
		{Name: "veth9", Type: "veth", Encap: "ether", HWAddr: mac},
		{Name: "wg0", Type: "wireguard", Encap: "none"},
	}
	names := func(ls []linkInfo) string {
		var n []string
		for _, l := range ls {
			n = append(n, l.Name)
		}
		return strings.Join(n, ",")
	}
	tests := []struct {
		patterns []string
		want     string
	}{
		{nil, "eth1,eth2,eth10"},
		{[]string{"veth*"}, "veth9"},
		{[]string{"eth2", "docker0"}, "docker0,eth2"},
		{[]string{"lo", "l*"}, ""},
		{[]string{"[", "eth10"}, "eth10"},
	}
	for _, tc := range tests {
		if got := names(selectLinks(links, tc.patterns)); got != tc.want {
			t.Errorf("selectLinks(%q) = %q, want %q", tc.patterns, got, tc.want)
		}
	}
}

func TestNaturalCompare(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"eth2", "eth10", -1}, {"eth10", "eth2", 1}, {"eth0", "eth0", 0},
		{"ens3", "eth0", -1}, {"eth", "eth0", -1}, {"eth01", "eth1", -1},
	} {
		if got := naturalCompare(tc.a, tc.b); got != tc.want {
			t.Errorf("naturalCompare(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestRenderResolvConf(t *testing.T) {
	l := &Lease{Iface: "eth0", DNS: []netip.Addr{a("10.0.0.53"), a("10.0.0.54")}, Domain: "example.internal"}
	want := "# ephemeral, written by cloudroot netup for eth0; removed before switch_root\n" +
		"search example.internal\nnameserver 10.0.0.53\nnameserver 10.0.0.54\n"
	if diff := cmp.Diff(want, string(renderResolvConf(l))); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestLeaseFromIPConfig(t *testing.T) {
	c, err := ParseIPArg("10.0.0.2:10.0.0.9:10.0.0.1:255.255.255.0:host1:eth0:off:10.0.0.53::10.0.0.123")
	if err != nil {
		t.Fatal(err)
	}
	got := leaseFromIPConfig(c, "eth0", nil)
	want := &Lease{Iface: "eth0", Proto: ProtoStatic, Addr: p("10.0.0.2/24"), Router: a("10.0.0.1"),
		DNS: []netip.Addr{a("10.0.0.53")}, Hostname: "host1", NextServer: a("10.0.0.9"), NTP: []netip.Addr{a("10.0.0.123")}}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(Lease{}), cmp.Comparer(func(x, y netip.Addr) bool { return x == y }),
		cmp.Comparer(func(x, y netip.Prefix) bool { return x == y })); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if got.Netmask() != a("255.255.255.0") || broadcastOf(got.Addr) != a("10.0.0.255") {
		t.Errorf("netmask %s broadcast %s", got.Netmask(), broadcastOf(got.Addr))
	}
}
