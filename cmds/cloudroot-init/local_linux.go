//go:build linux

package main

import (
	"context"
	"fmt"
	"net/http"
	"net/netip"
	"sync"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/imds"
	"github.com/cloudroot/cloudroot/pkg/netup"
	"github.com/cloudroot/cloudroot/pkg/stages"
	"github.com/cloudroot/cloudroot/pkg/state"
	"github.com/cloudroot/cloudroot/pkg/userdata"
)

// ephemeralNet is the network the initramfs brings up only when something
// needs it (a network datasource, an #include), and releases before
// switch_root so the real system starts clean.
type ephemeralNet struct {
	mu     sync.Mutex
	tried  bool
	lease  *netup.Lease
	err    error
	client *http.Client
	b      *boot
	// ra watches the NIC for router advertisements while it is up, for the
	// fallback configuration's IPv6.
	ra *raWatch
}

// up brings the network up once; later calls return the first outcome.
func (n *ephemeralNet) up(ctx context.Context) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.tried {
		return n.err
	}
	n.tried = true
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
		n.err = fmt.Errorf("ephemeral network: %w", err)
		n.b.log.Warn("ephemeral network did not come up", "err", err)
		return n.err
	}
	n.lease = lease
	n.ra = startRAWatch(lease.Iface, raListen)
	n.client = &http.Client{Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}
	n.b.log.Info("ephemeral network up", "iface", lease.Iface, "address", lease.Addr.String())
	return nil
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
func (n *ephemeralNet) dsLease() *datasource.Lease {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.lease == nil || n.lease.Proto == netup.ProtoStatic {
		return nil
	}
	return &datasource.Lease{
		Iface:    n.lease.Iface,
		Addr:     n.lease.Addr,
		Router:   n.lease.Router,
		ServerID: n.lease.ServerID,
		Options:  n.lease.Options,
		Hostname: n.lease.Hostname,
		Domain:   n.lease.Domain,
		DNS:      n.lease.DNS,
		NTP:      n.lease.NTP,
	}
}

// down releases the lease and removes everything up added.
func (n *ephemeralNet) down(ctx context.Context) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.lease == nil {
		return
	}
	if n.client != nil {
		n.client.CloseIdleConnections()
	}
	if err := n.lease.Release(ctx); err != nil {
		n.b.log.Debug("DHCP release", "err", err)
	}
	if err := n.lease.Down(); err != nil {
		n.b.log.Warn("ephemeral network teardown", "err", err)
	} else {
		n.b.log.Info("ephemeral network released", "iface", n.lease.Iface)
	}
	n.lease = nil
}

// fetch retrieves an #include URL, bringing the network up on first use.
func (n *ephemeralNet) fetch(ctx context.Context, url string) ([]byte, error) {
	if err := n.up(ctx); err != nil {
		return nil, err
	}
	return userdata.HTTPFetcher(n.client, userdata.DefaultMaxSize, userdata.DefaultIncludeRetries)(ctx, url)
}

// Up, Client, Lease and Fetch are the network as pkg/stages asks for it.
func (n *ephemeralNet) Up(ctx context.Context) error { return n.up(ctx) }

// Client is the HTTP client over the ephemeral network (after Up).
func (n *ephemeralNet) Client() *http.Client {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.client
}

// Lease is the DHCP lease as datasources see it.
func (n *ephemeralNet) Lease() *datasource.Lease { return n.dsLease() }

// Fetch retrieves an #include URL, bringing the network up on first use.
func (n *ephemeralNet) Fetch(ctx context.Context, url string) ([]byte, error) {
	return n.fetch(ctx, url)
}

var _ stages.Network = (*ephemeralNet)(nil)
