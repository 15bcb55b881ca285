package stages

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
	"github.com/cloudroot/cloudroot/pkg/distro"
	"github.com/cloudroot/cloudroot/pkg/netconfig"
)

// TestFallbackNamesAndIPv6: on a target whose udev renames interfaces the
// fallback uses the predictable name; without udev (or net.ifnames=0) the
// kernel's; IPv6 follows what the link offered and never becomes a bare
// `inet6 dhcp` without a DHCPv6 offer.
func TestFallbackNamesAndIPv6(t *testing.T) {
	for _, tt := range []struct {
		name    string
		udev    bool
		cmdline string
		offer   netconfig.IPv6Offer
		want    []string
		not     []string
	}{
		{name: "debian with udev", udev: true,
			want: []string{"auto enp0s2\niface enp0s2 inet dhcp\n", "iface enp0s2 inet6 auto\n", `NAME="enp0s2"`},
			not:  []string{"eth0", "inet6 dhcp"}},
		{name: "net.ifnames=0", udev: true, cmdline: "net.ifnames=0",
			want: []string{"iface eth0 inet dhcp\n"}, not: []string{"enp0s2"}},
		{name: "no udev", want: []string{"iface eth0 inet dhcp\n", "iface eth0 inet6 auto\n"}, not: []string{"enp0s2"}},
		{name: "router offers DHCPv6", udev: true, offer: netconfig.IPv6Managed,
			want: []string{"iface enp0s2 inet6 dhcp\n"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tr := newRoot(t, &fakeRunner{})
			files := map[string]string{"sbin/ifup": "", "sbin/ifdown": "", "sbin/ifquery": "", "etc/network/interfaces": "source /etc/network/interfaces.d/*\n"}
			if tt.udev {
				files["lib/udev/rules.d/80-net-setup-link.rules"] = "IMPORT{builtin}=\"net_setup_link\"\n"
				files["lib/systemd/network/99-default.link"] = "[Match]\nOriginalName=*\n[Link]\nNamePolicy=keep kernel database onboard slot path\n"
			}
			for p, s := range files {
				hp := filepath.Join(tr.Dir(), p)
				os.MkdirAll(filepath.Dir(hp), 0o755)
				if err := os.WriteFile(hp, []byte(s), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			links := []bootenv.NetLink{{Name: "eth0", MAC: "52:54:00:12:34:56", Carrier: true,
				Names: bootenv.NetNames{Path: "enp0s2", MAC: "enx525400123456"}, IPv6: tt.offer}}
			res, err := ApplyNetwork(tr, nil, distro.Info{ID: "debian", Family: "debian"}, tt.cmdline, nil, map[string]any{}, nil, links, true, DSNetwork{}, "i-1")
			if err != nil {
				t.Fatal(err)
			}
			if res.Source != "fallback" || res.Renderer != netconfig.RendererENI {
				t.Fatalf("source %s renderer %s", res.Source, res.Renderer)
			}
			var all strings.Builder
			for _, p := range res.Files {
				b, _ := tr.ReadFile(p)
				all.Write(b)
			}
			for _, w := range tt.want {
				if !strings.Contains(all.String(), w) {
					t.Errorf("missing %q in:\n%s", w, all.String())
				}
			}
			for _, n := range tt.not {
				if strings.Contains(all.String(), n) {
					t.Errorf("unexpected %q in:\n%s", n, all.String())
				}
			}
		})
	}
}
