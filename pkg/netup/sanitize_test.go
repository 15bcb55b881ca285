package netup

import (
	"net"
	"slices"
	"strings"
	"testing"

	"github.com/cloudroot/cloudroot/pkg/netconfig"
	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/rfc1035label"
)

// TestHostileDHCPNames: search domains (option 119), domain and host name
// a DHCP server sends that are not RFC 1123 names reach neither the
// initramfs's resolv.conf, nor the klibc state file, nor the network
// config rendered from that file for the target; valid ones do.
func TestHostileDHCPNames(t *testing.T) {
	ack, err := dhcpv4.New(
		dhcpv4.WithMessageType(dhcpv4.MessageTypeAck),
		dhcpv4.WithYourIP(net.IPv4(10, 0, 0, 50)),
		dhcpv4.WithOption(dhcpv4.OptSubnetMask(net.CIDRMask(24, 32))),
		dhcpv4.WithOption(dhcpv4.OptDNS(net.IPv4(10, 0, 0, 53))),
		dhcpv4.WithOption(dhcpv4.OptDomainSearch(&rfc1035label.Labels{Labels: []string{
			"good.example", "a$(touch /pwn)", "b\nnameserver 6.6.6.6 pwn", "c'pwn", "under_pwn.example",
		}})),
		dhcpv4.WithOption(dhcpv4.OptDomainName("d\"pwn")),
		dhcpv4.WithOption(dhcpv4.OptHostName("vm1\n127.0.0.1 pwn")),
		dhcpv4.WithOption(dhcpv4.OptRootPath("/srv\nDOMAINSEARCH=pwn")),
	)
	if err != nil {
		t.Fatal(err)
	}
	ack, err = dhcpv4.FromBytes(ack.ToBytes()) // as received
	if err != nil {
		t.Fatal(err)
	}
	l, err := leaseFromACK("eth0", HardwareAddr{0x52, 0x54, 0, 0x12, 0x34, 0x56}, ack)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(l.Search, []string{"good.example"}) || l.Domain != "" || l.Hostname != "" || l.RootPath != "" {
		t.Errorf("lease search %q domain %q hostname %q root path %q", l.Search, l.Domain, l.Hostname, l.RootPath)
	}
	if len(l.Dropped) != 7 {
		t.Errorf("dropped %d values, want 7: %q", len(l.Dropped), l.Dropped)
	}
	files := map[string]string{
		"resolv.conf":    string(renderResolvConf(l)),
		"net-eth0.conf":  string(FormatKlibc(l)),
		"net6-eth0.conf": string(FormatKlibc6(l)),
	}
	cfg, err := netconfig.ParseKlibc([]netconfig.KlibcFile{{Path: "net-eth0.conf", Data: []byte(files["net-eth0.conf"])}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range netconfig.Renderers {
		out, err := r.Render(cfg)
		if err != nil {
			t.Fatalf("%s: %v", r.Name, err)
		}
		for p, data := range out.Contents() {
			files[r.Name+":"+p] = string(data)
		}
	}
	for p, data := range files {
		if strings.Contains(data, "pwn") {
			t.Errorf("%s holds a hostile value:\n%s", p, data)
		}
	}
	if !strings.Contains(files["resolv.conf"], "search good.example\n") {
		t.Errorf("resolv.conf lost the valid search domain:\n%s", files["resolv.conf"])
	}
}

// TestIPConfigHostname: the host name field of ip= (from a PXE server's
// configuration, perhaps) is held to the same rule.
func TestIPConfigHostname(t *testing.T) {
	l := leaseFromIPConfig(IPConfig{Hostname: "vm1\nDOMAINSEARCH='pwn'"}, "eth0", nil)
	if l.Hostname != "" || len(l.Dropped) != 1 || !strings.HasPrefix(l.Dropped[0], "host name (ip= field 5)") {
		t.Errorf("hostname %q dropped %q", l.Hostname, l.Dropped)
	}
	if l := leaseFromIPConfig(IPConfig{Hostname: "vm1"}, "eth0", nil); l.Hostname != "vm1" {
		t.Errorf("valid hostname dropped: %q", l.Hostname)
	}
}
