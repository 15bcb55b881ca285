//go:build linux

package main

import (
	"context"
	"fmt"
	"net/netip"
	"sync"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/imds"
	"github.com/cloudroot/cloudroot/pkg/netup"
	"github.com/cloudroot/cloudroot/pkg/stages"
	"github.com/cloudroot/cloudroot/pkg/state"
)

// ephemeralNet is the network the initramfs brings up only when something
// needs it (a network datasource, an #include), and releases before
// switch_root so the real system starts clean: stages.EphemeralNet (the
// agent's in-root local stage uses the same), brought up with the
// initramfs's ip= and BOOTIF= forms.
type ephemeralNet struct {
	*stages.EphemeralNet
	b *boot
	// ra watches the NIC for router advertisements while it is up, for the
	// fallback configuration's IPv6.
	mu sync.Mutex
	ra *raWatch
}

// newEphemeralNet is the initramfs's ephemeral network for b.
func newEphemeralNet(b *boot) *ephemeralNet {
	n := &ephemeralNet{b: b}
	n.EphemeralNet = &stages.EphemeralNet{Bring: n.bring, Log: b.log}
	return n
}

// up brings the network up once; later calls return the first outcome.
func (n *ephemeralNet) up(ctx context.Context) error { return n.Up(ctx) }

// bring is the bring-up: DHCP on the BOOTIF= NIC or every NIC, or ip=.
func (n *ephemeralNet) bring(ctx context.Context) (*netup.Lease, error) {
	start := uptime()
	opts := netup.Options{
		LinkLocalRoutes: []netip.Prefix{netip.MustParsePrefix(imds.DefaultAddr + "/32")},
		ResolvConf:      "/etc/resolv.conf",
		Logger:          n.b.log,
	}
	// BOOTIF= (pxelinux, iPXE) names the NIC the machine booted from: it
	// is the one brought up, unless ip= names a device itself.
	if iface, ok := n.b.bootIface(ctx); ok {
		opts.Interfaces = []string{iface}
	}
	var lease *netup.Lease
	var err error
	dhcpWait := dhcpBudget(netup.DefaultCarrierTimeout, netup.DefaultDHCPTimeout, netup.DefaultDHCPRetries)
	if v, ok := n.b.cmdline.Get("ip"); ok {
		cfg, perr := netup.ParseIPArg(v)
		switch {
		case perr != nil:
			err = fmt.Errorf("ip=%s: %w", v, perr)
		default:
			ifaces := opts.Interfaces
			if cfg.Device != "" && cfg.Device != "all" {
				ifaces = []string{cfg.Device}
			}
			if cfg.ClientIP.IsValid() {
				n.b.log.Info(dhcpLine(ifaces, true, netup.DefaultCarrierTimeout))
			} else {
				n.b.log.Info(dhcpLine(ifaces, false, dhcpWait))
			}
			// Static applies a static address and hands the DHCP forms
			// (with their device and hostname) to Up.
			lease, err = netup.Static(ctx, cfg, opts)
		}
		if err == nil {
			// ip= is the system's own configuration: leave klibc's state
			// files, which cloud-init reads as its initramfs network source.
			if _, werr := lease.WriteKlibcState("/run"); werr != nil {
				n.b.log.Warn("writing klibc network state", "err", werr)
			}
		}
	} else {
		n.b.log.Info(dhcpLine(opts.Interfaces, false, dhcpWait))
		lease, err = netup.Up(ctx, opts)
	}
	n.b.st.Timings = append(n.b.st.Timings, state.Timing{Stage: "network-up", Start: start, Duration: uptime() - start})
	if err != nil {
		return nil, err
	}
	n.mu.Lock()
	n.ra = startRAWatch(lease.Iface, raListen)
	n.mu.Unlock()
	return lease, nil
}

// ipv6 annotates links with what the router advertisements seen on the
// ephemeral NIC offered (nothing when the network never came up).
func (n *ephemeralNet) ipv6(links []bootenv.NetLink) {
	n.mu.Lock()
	w := n.ra
	n.mu.Unlock()
	if w == nil {
		return
	}
	offer, err := w.result()
	if err != nil {
		n.b.log.Info("no router advertisement information", "iface", w.iface, "err", err)
		return
	}
	n.b.log.Info("IPv6 offered on the link", "iface", w.iface, "ipv6", offer.String())
	for i := range links {
		if links[i].Name == w.iface {
			links[i].IPv6 = offer
		}
	}
}

// dsLease is the DHCP lease as datasources see it (nil when the network
// is static or not up).
func (n *ephemeralNet) dsLease() *datasource.Lease { return n.Lease() }

// down releases the lease and removes everything up added.
func (n *ephemeralNet) down(ctx context.Context) { n.Down(ctx) }

// fetch retrieves an #include URL, bringing the network up on first use.
func (n *ephemeralNet) fetch(ctx context.Context, url string) ([]byte, error) {
	return n.Fetch(ctx, url)
}

var _ stages.Network = (*ephemeralNet)(nil)
