package stages

// The ephemeral network of the local stage, as cloud-init's
// EphemeralDHCPv4: brought up only when something needs it (a network
// datasource, an #include, a netboot image), once, and released when the
// stage is done — before switch_root in the initramfs, at the end of the
// in-root local stage in a booted root whose own network is not up yet.
// The bring-up itself is the caller's (pkg/netup's DHCP, or the
// initramfs's ip=/BOOTIF forms); EphemeralNet keeps the once-only outcome,
// the HTTP client over it, the lease as datasources see it, and the
// teardown.

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"sync"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/imds"
	"github.com/cloudroot/cloudroot/pkg/netup"
	"github.com/cloudroot/cloudroot/pkg/userdata"
)

// EphemeralNet is a Network brought up on first use and released by Down.
type EphemeralNet struct {
	// Bring brings the network up (called at most once).
	Bring func(ctx context.Context) (*netup.Lease, error)
	// Log gets the up, failure and release lines (nil: discarded).
	Log *slog.Logger

	mu     sync.Mutex
	tried  bool
	lease  *netup.Lease
	err    error
	client *http.Client
}

var _ Network = (*EphemeralNet)(nil)

// DHCPOptions are the options of the in-root ephemeral DHCP: every NIC
// tried in order, the metadata address routed on-link, and the booted
// system's /etc/resolv.conf left alone (cloud-init's EphemeralDHCPv4 does
// not write it either).
func DHCPOptions(log *slog.Logger) netup.Options {
	return netup.Options{
		LinkLocalRoutes: []netip.Prefix{netip.MustParsePrefix(imds.DefaultAddr + "/32")},
		Logger:          log,
	}
}

func (n *EphemeralNet) log() *slog.Logger {
	if n.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return n.Log
}

// Up brings the network up once; later calls return the first outcome.
func (n *EphemeralNet) Up(ctx context.Context) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.tried {
		return n.err
	}
	n.tried = true
	lease, err := n.Bring(ctx)
	if err == nil && lease == nil {
		err = fmt.Errorf("no lease")
	}
	if err != nil {
		n.err = fmt.Errorf("ephemeral network: %w", err)
		n.log().Warn("ephemeral network did not come up", "err", err)
		return n.err
	}
	n.lease = lease
	n.client = &http.Client{Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}
	n.log().Info("ephemeral network up", "iface", lease.Iface, "address", lease.Addr.String())
	return nil
}

// Client is the HTTP client over the ephemeral network (nil before Up).
func (n *EphemeralNet) Client() *http.Client {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.client
}

// Current is the lease while the network is up (nil otherwise).
func (n *EphemeralNet) Current() *netup.Lease {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.lease
}

// Lease is the DHCP lease as datasources see it (nil when the network is
// static or not up).
func (n *EphemeralNet) Lease() *datasource.Lease { return DatasourceLease(n.Current()) }

// DatasourceLease is a DHCP lease as datasources see it (nil for none or
// a static configuration).
func DatasourceLease(l *netup.Lease) *datasource.Lease {
	if l == nil || l.Proto == netup.ProtoStatic {
		return nil
	}
	return &datasource.Lease{
		Iface:    l.Iface,
		Addr:     l.Addr,
		Router:   l.Router,
		ServerID: l.ServerID,
		Options:  l.Options,
		Hostname: l.Hostname,
		Domain:   l.Domain,
		DNS:      l.DNS,
		NTP:      l.NTP,
	}
}

// Fetch retrieves an #include URL, bringing the network up on first use.
func (n *EphemeralNet) Fetch(ctx context.Context, url string) ([]byte, error) {
	if err := n.Up(ctx); err != nil {
		return nil, err
	}
	return userdata.HTTPFetcher(n.Client(), userdata.DefaultMaxSize, userdata.DefaultIncludeRetries)(ctx, url)
}

// Down releases the lease and removes everything the bring-up added.
// The network may not be brought up again afterwards.
func (n *EphemeralNet) Down(ctx context.Context) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.lease == nil {
		return
	}
	if n.client != nil {
		n.client.CloseIdleConnections()
	}
	if err := n.lease.Release(ctx); err != nil {
		n.log().Debug("DHCP release", "err", err)
	}
	if err := n.lease.Down(); err != nil {
		n.log().Warn("ephemeral network teardown", "err", err)
	} else {
		n.log().Info("ephemeral network released", "iface", n.lease.Iface)
	}
	n.lease = nil
}
