package netconfig

import (
	"strings"
	"testing"
)

func TestParseRouterAdvert(t *testing.T) {
	ra := func(flags byte) []byte {
		b := make([]byte, 16)
		b[0], b[4], b[5] = 134, 64, flags
		return b
	}
	for _, tt := range []struct {
		name string
		b    []byte
		want IPv6Offer
		err  bool
	}{
		{"no flags", ra(0), IPv6SLAAC, false},
		{"O", ra(0x40), IPv6Stateless, false},
		{"M", ra(0x80), IPv6Managed, false},
		{"M and O", ra(0xc0), IPv6Managed, false},
		{"router solicitation", []byte{133, 0, 0, 0, 0, 0, 0, 0}, IPv6Unknown, true},
		{"short", ra(0)[:8], IPv6Unknown, true},
	} {
		got, err := ParseRouterAdvert(tt.b)
		if got != tt.want || (err != nil) != tt.err {
			t.Errorf("%s: %v, %v; want %v (error %v)", tt.name, got, err, tt.want, tt.err)
		}
	}
}

func FuzzParseRouterAdvert(f *testing.F) {
	f.Add([]byte{134, 0, 0, 0, 64, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{134, 0, 0, 0, 64, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 4, 64, 0xc0})
	f.Add([]byte{133})
	f.Fuzz(func(t *testing.T, b []byte) {
		o, err := ParseRouterAdvert(b)
		if err != nil && o != IPv6Unknown {
			t.Errorf("error %v with offer %v", err, o)
		}
		if err == nil && (o < IPv6SLAAC || o > IPv6Managed) {
			t.Errorf("offer %v", o)
		}
	})
}

// TestFallbackIPv6 renders the fallback for each IPv6 offer with every
// renderer: nothing that waits for a DHCPv6 server unless the link
// announced one.
func TestFallbackIPv6(t *testing.T) {
	link := Link{Name: "enp0s2", MAC: "52:54:00:12:34:56", Carrier: true}
	type want struct{ renderer, has, not string }
	for _, tt := range []struct {
		offer IPv6Offer
		wants []want
	}{
		{IPv6Unknown, []want{
			{RendererENI, "iface enp0s2 inet6 auto\n", "inet6 dhcp"},
			{RendererNetplan, "accept-ra: true", "dhcp6"},
			// networkd (as cloud-init 26.x renders it) writes nothing for
			// SLAAC: with IPv6AcceptRA unset the kernel accepts router
			// advertisements on a non-forwarding link.
			{RendererNetworkd, "DHCP=ipv4\n", "DHCP=yes"},
		}},
		{IPv6SLAAC, []want{
			{RendererENI, "inet6 auto", "inet6 dhcp"},
		}},
		{IPv6Stateless, []want{
			// The ENI renderer, as cloud-init's, gives an alias stanza no
			// attributes: no "dhcp 1", so ifupdown does SLAAC only.
			{RendererENI, "iface enp0s2 inet6 auto\n", "inet6 dhcp"},
			{RendererNetplan, "dhcp6: true", "accept-ra"},
		}},
		{IPv6Managed, []want{
			{RendererENI, "iface enp0s2 inet6 dhcp\n", "inet6 auto"},
			{RendererNetplan, "dhcp6: true", "accept-ra"},
			{RendererNetworkd, "DHCP=yes", ""},
		}},
	} {
		l := link
		l.IPv6 = tt.offer
		cfg := Fallback([]Link{l})
		if cfg == nil {
			t.Fatalf("%v: no fallback", tt.offer)
		}
		for _, w := range tt.wants {
			out, err := Render(w.renderer, cfg)
			if err != nil {
				t.Fatalf("%v %s: %v", tt.offer, w.renderer, err)
			}
			var all strings.Builder
			for _, p := range out.Paths() {
				all.Write(out.Files[p].Data)
			}
			if !strings.Contains(all.String(), w.has) || (w.not != "" && strings.Contains(all.String(), w.not)) {
				t.Errorf("%v %s: want %q and not %q in:\n%s", tt.offer, w.renderer, w.has, w.not, all.String())
			}
		}
	}
}
