package netup

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func a(s string) netip.Addr { return netip.MustParseAddr(s) }

var ipArgCases = []struct {
	name    string
	in      string
	want    IPConfig
	dhcp    bool
	static  bool
	off     bool
	prefix  string
	wantErr string
}{
	{name: "dhcp", in: "dhcp", want: IPConfig{Autoconf: "dhcp"}, dhcp: true},
	{name: "on", in: "on", want: IPConfig{Autoconf: "on"}, dhcp: true},
	{name: "off", in: "off", want: IPConfig{Autoconf: "off"}, off: true},
	{name: "none", in: "none", want: IPConfig{Autoconf: "none"}, off: true},
	{name: "device dhcp", in: "eth0:dhcp", want: IPConfig{Device: "eth0", Autoconf: "dhcp"}, dhcp: true},
	{name: "device dhcp6 (dracut, not v4)", in: "ens3:dhcp6", want: IPConfig{Device: "ens3", Autoconf: "dhcp6"}},
	{
		name: "full static",
		in:   "10.0.0.2:10.0.0.9:10.0.0.1:255.255.255.0:host1:eth0:off:10.0.0.53:10.0.0.54:10.0.0.123",
		want: IPConfig{
			ClientIP: a("10.0.0.2"), ServerIP: a("10.0.0.9"), Gateway: a("10.0.0.1"), Netmask: a("255.255.255.0"),
			Hostname: "host1", Device: "eth0", Autoconf: "off",
			DNS: []netip.Addr{a("10.0.0.53"), a("10.0.0.54")}, NTP: a("10.0.0.123"),
		},
		static: true, prefix: "10.0.0.2/24",
	},
	{
		name:   "static, autoconf omitted, prefix-length mask",
		in:     "192.168.1.5::192.168.1.1:24::enp1s0",
		want:   IPConfig{ClientIP: a("192.168.1.5"), Gateway: a("192.168.1.1"), Netmask: a("255.255.255.0"), Device: "enp1s0"},
		static: true, prefix: "192.168.1.5/24",
	},
	{
		name:   "static without mask is classful",
		in:     "172.16.4.4:::::eth1:none",
		want:   IPConfig{ClientIP: a("172.16.4.4"), Device: "eth1", Autoconf: "none"},
		static: true, prefix: "172.16.4.4/16",
	},
	{
		name: "dhcp with hostname on all devices",
		in:   "::::myhost::dhcp",
		want: IPConfig{Hostname: "myhost", Autoconf: "dhcp"},
		dhcp: true,
	},
	{
		name: "client ip with autoconf dhcp stays dhcp",
		in:   "10.1.1.1::::::dhcp",
		want: IPConfig{ClientIP: a("10.1.1.1"), Autoconf: "dhcp"},
		dhcp: true, prefix: "10.1.1.1/8",
	},
	{
		name: "only dns1 given",
		in:   ":::::eth0:dhcp::8.8.8.8",
		want: IPConfig{Device: "eth0", Autoconf: "dhcp", DNS: []netip.Addr{a("8.8.8.8")}},
		dhcp: true,
	},
	{name: "device only, autoconf defaults to any", in: ":::::eth0", want: IPConfig{Device: "eth0"}, dhcp: true},
	{name: "empty", in: "", wantErr: "empty"},
	{name: "unknown word", in: "eth0", wantErr: "unknown autoconf"},
	{name: "bad client ip", in: "10.0.0.300::::::off", wantErr: "client-ip"},
	{name: "ipv6 client ip", in: "[2001:db8::2]::[2001:db8::1]:64::eth0:none", wantErr: "IPv6"},
	{name: "bad netmask", in: "10.0.0.2:::255.0.255.0::eth0:off", wantErr: "contiguous"},
	{name: "netmask out of range", in: "10.0.0.2:::33::eth0:off", wantErr: "out of range"},
	{name: "bad autoconf", in: "10.0.0.2::::::magic", wantErr: "unknown method"},
	{name: "too many fields", in: "10.0.0.2::::::off:::1.2.3.4:1500", wantErr: "at most 10"},
	{name: "long device", in: ":::::averyveryverylongname:dhcp", wantErr: "longer than 15"},
	{name: "long hostname", in: "::::" + strings.Repeat("h", 65) + "::dhcp", wantErr: "hostname"},
}

func TestParseIPArg(t *testing.T) {
	for _, tc := range ipArgCases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseIPArg(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("ParseIPArg(%q) error = %v, want containing %q", tc.in, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseIPArg(%q): %v", tc.in, err)
			}
			if diff := cmp.Diff(tc.want, got, cmp.Comparer(func(x, y netip.Addr) bool { return x == y })); diff != "" {
				t.Errorf("ParseIPArg(%q) (-want +got):\n%s", tc.in, diff)
			}
			if got.DHCP() != tc.dhcp || got.Static() != tc.static || got.Disabled() != tc.off {
				t.Errorf("DHCP/Static/Disabled = %v/%v/%v, want %v/%v/%v", got.DHCP(), got.Static(), got.Disabled(), tc.dhcp, tc.static, tc.off)
			}
			if p := got.Prefix(); tc.prefix != "" && p.String() != tc.prefix {
				t.Errorf("Prefix() = %s, want %s", p, tc.prefix)
			}
			again, err := ParseIPArg(got.String())
			if err != nil {
				t.Fatalf("ParseIPArg(String() = %q): %v", got.String(), err)
			}
			if diff := cmp.Diff(got, again, cmp.Comparer(func(x, y netip.Addr) bool { return x == y })); diff != "" {
				t.Errorf("round trip through %q (-first +second):\n%s", got.String(), diff)
			}
		})
	}
}

func FuzzParseIPArg(f *testing.F) {
	for _, tc := range ipArgCases {
		f.Add(tc.in)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseIPArg(s)
		if err != nil {
			return
		}
		_ = c.Prefix()
		out := c.String()
		again, err := ParseIPArg(out)
		if err != nil {
			t.Fatalf("ParseIPArg(%q) ok, but its String() %q does not parse: %v", s, out, err)
		}
		if diff := cmp.Diff(c, again, cmp.Comparer(func(x, y netip.Addr) bool { return x == y })); diff != "" {
			t.Fatalf("round trip %q -> %q (-first +second):\n%s", s, out, diff)
		}
	})
}
