//go:build linux

package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
	"github.com/cloudroot/cloudroot/pkg/cloudcfg"
	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/builtin"
	"github.com/cloudroot/cloudroot/pkg/distro"
	"github.com/cloudroot/cloudroot/pkg/imds"
	"github.com/cloudroot/cloudroot/pkg/netup"
	"github.com/cloudroot/cloudroot/pkg/stages"
	"github.com/cloudroot/cloudroot/pkg/state"
	"github.com/cloudroot/cloudroot/pkg/target"
	"github.com/cloudroot/cloudroot/pkg/userdata"
)

// datasourceBudget bounds each datasource's work before the network is
// up (local media, seed directories). Network datasources follow the
// search's imds.Policy instead (searchPolicy): a detection window each,
// so an absent metadata service costs seconds, not minutes, and one
// deadline for the whole search.
const datasourceBudget = 5 * time.Second

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

// findDatasource tries the detected datasources in order (local ones
// first need nothing; a network one gets the ephemeral network on demand).
func (b *boot) findDatasource(ctx context.Context, t *target.Root, list []string, n *ephemeralNet) (*datasource.Data, error) {
	reg := builtin.Registry()
	// detect has reported the names this build does not provide.
	sel, _ := reg.Select(list)
	base, _ := cloudcfg.Load(cloudcfg.LoadOptions{Files: b.sysFiles, Cmdline: b.cmdline.String()})
	dsCfg, _ := base.Config["datasource"].(map[string]any)
	dsCfg = b.cmdlineSourceConfig(dsCfg)
	pol, perrs := searchPolicy(b.cmdline)
	for _, e := range perrs {
		b.log.Warn("datasource search policy", "err", e)
		b.status.Get(state.StageInitLocal).AddRecoverable("WARNING", e.Error())
	}
	b.log.Info("datasource search", "policy", pol.String())
	env := datasource.Env{
		Devices: b.devs,
		Cmdline: b.cmdline,
		DMI:     bootenv.ReadDMI(""),
		Config:  dsCfg,
		System:  base.System,
		Budget:  datasourceBudget,
		Policy:  &pol,
		Log:     b.log,
	}
	// One deadline for the whole search, every network datasource
	// together; the None fallback and the cache are outside it.
	sctx, cancel := context.WithTimeoutCause(ctx, pol.Deadline, imds.ErrDeadline)
	defer cancel()
	if r, err := os.OpenRoot(t.Dir()); err == nil {
		env.Root = r.FS()
	}
	env.DefaultUser = defaultUserName(base.Config, distro.Detect(t.ReadFile))

	// cloud-init's _restore_from_checked_cache: reuse the previous boot's
	// answer when manual_cache_clean trusts it or its source's local check
	// says it still describes this machine.
	mode, why := stages.CacheModeFor(t, base.Config)
	if why != "" {
		b.log.Info(why)
	}
	cached, cerr := stages.ReadDatasourceCache(t)
	if cerr != nil {
		b.log.Warn("ignoring the datasource cache", "err", cerr)
	}
	restored := stages.RestoreDatasource(cached, mode, reg, env)
	b.log.Info(restored.Description)
	if src, ok := stages.RefreshSource(restored, mode, reg); ok {
		// The platform may have changed this instance's metadata since
		// the last boot: ask again, keep the cache if it does not answer.
		iid := restored.Data.InstanceID()
		d, err := b.searchDatasources(sctx, datasource.Registry{src}, list, env, n, iid)
		switch {
		case err != nil:
			b.log.Warn("refreshing the restored datasource failed: using the cache", "datasource", src.Name(), "err", err)
		case d.InstanceID() != iid:
			b.log.Warn("the refreshed datasource names another instance: using the cache", "datasource", src.Name(), "cached", iid, "answered", d.InstanceID())
		default:
			b.log.Info("refreshed the restored datasource on boot", "datasource", d.Description())
			return d, nil
		}
	}
	if restored.Data != nil {
		b.st.Restored = restored.Description
		return restored.Data, nil
	}

	// The fallback (None) is not searched with the others: when they all
	// fail, a cached answer whose source allows it comes first, as in
	// cloud-init, whose local search never includes None.
	var fallback datasource.Source
	if i := slices.IndexFunc(sel, datasource.IsFallback); i >= 0 {
		fallback, sel = sel[i], slices.Delete(slices.Clone(sel), i, i+1)
	}
	d, err := b.searchDatasources(sctx, sel, list, env, n, stages.PreviousInstanceID(t))
	if err != nil && errors.Is(context.Cause(sctx), imds.ErrDeadline) {
		b.log.Warn("the datasource search ran out of time", "deadline", pol.Deadline)
		err = fmt.Errorf("%w (%s): %w", imds.ErrDeadline, pol.Deadline, err)
	}
	if err != nil && fallback != nil {
		if fb := stages.FallbackToCache(cached, mode, reg); fb != nil {
			b.log.Info("restored fallback datasource from checked cache", "datasource", fb.Description())
			b.st.Restored = "restored fallback datasource from checked cache: " + fb.Description()
			return fb, nil
		}
		// Sources that failed are warnings now, as cloud-init logs them
		// (the boot goes on with the fallback): status says "degraded".
		for _, e := range unwrapJoined(err) {
			if !errors.Is(e, datasource.ErrNotFound) {
				b.status.Get(state.StageInitLocal).AddRecoverable("WARNING", e.Error())
			}
		}
		b.log.Warn("no datasource found: using the None fallback", "tried", err)
		d, err = fallback.Get(ctx, env)
	}
	return d, err
}

// unwrapJoined splits an errors.Join into its errors.
func unwrapJoined(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// searchDatasources tries sel in order, bringing the network up for the
// first source that asks for it.
func (b *boot) searchDatasources(ctx context.Context, sel datasource.Registry, list []string, env datasource.Env, n *ephemeralNet, prevIID string) (*datasource.Data, error) {
	var errs []error
	var tried []string
	for _, src := range sel {
		if ctx.Err() != nil {
			errs = append(errs, fmt.Errorf("%s: not asked: %w", src.Name(), context.Cause(ctx)))
			continue
		}
		tried = append(tried, src.Name())
		ev := b.localEv.StartSearch("local", src.Name())
		// A network source asked before the network is up answers at
		// once (ErrNeedNetwork): its line comes after the DHCP line.
		doc, documented := src.(datasource.Documented)
		switch {
		case env.NetworkUp:
			b.log.Info(datasourceLine(src.Name(), true, env.Window(src.Name(), 0), timeLeft(ctx)))
		case !documented || !doc.Doc().Network:
			b.log.Info(datasourceLine(src.Name(), false, 0, 0))
		}
		d, err := src.Get(ctx, env)
		if errors.Is(err, datasource.ErrNeedNetwork) {
			if nerr := n.up(ctx); nerr != nil {
				errs = append(errs, fmt.Errorf("%s: %w", src.Name(), nerr))
				continue
			}
			env.NetworkUp = true
			env.HTTP = n.client
			env.Lease = n.dsLease()
			b.log.Info(datasourceLine(src.Name(), true, env.Window(src.Name(), 0), timeLeft(ctx)))
			d, err = src.Get(ctx, env)
		}
		switch {
		case err == nil:
			ev.Found("local", src.Name())
		case !errors.Is(err, datasource.ErrNotFound):
			ev.Fail()
		}
		ev.Finish()
		rep, reports := src.(datasource.Reporter)
		switch {
		case err == nil && reports && d.InstanceID() != prevIID:
			// First boot of this instance: tell the platform (Azure's
			// wireserver), over the network the answer came on.
			if rerr := rep.ReportReady(ctx, env, d); rerr != nil {
				b.log.Warn("report ready failed", "datasource", src.Name(), "err", rerr)
				b.status.Get(state.StageInitLocal).AddRecoverable("WARNING", fmt.Sprintf("%s: report ready: %v", src.Name(), rerr))
			} else {
				b.log.Info("reported ready", "datasource", src.Name())
			}
		case err != nil && reports && env.NetworkUp && !errors.Is(err, datasource.ErrNotFound):
			if rerr := rep.ReportFailure(ctx, env, err.Error()); rerr != nil {
				b.log.Warn("report failure failed", "datasource", src.Name(), "err", rerr)
			}
		}
		switch {
		case err == nil:
			// Sources that failed before this one are warnings now, as
			// cloud-init logs them: status says "degraded done".
			for _, e := range errs {
				b.status.Get(state.StageInitLocal).AddRecoverable("WARNING", e.Error())
			}
			return d, nil
		case errors.Is(err, datasource.ErrNotFound):
			b.log.Info("datasource not found", "datasource", src.Name(), "err", err)
		default:
			b.log.Warn("datasource failed", "datasource", src.Name(), "err", err)
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if len(sel) == 0 {
		return nil, fmt.Errorf("none of datasource_list [%s] is provided by this build: %w", strings.Join(list, ", "), datasource.ErrNotFound)
	}
	return nil, fmt.Errorf("tried %s: %w", strings.Join(tried, ", "), datasource.ErrNotFound)
}

// timeLeft is what is left before ctx's deadline (0: none).
func timeLeft(ctx context.Context) time.Duration {
	if dl, ok := ctx.Deadline(); ok {
		return max(time.Until(dl), time.Millisecond)
	}
	return 0
}

// defaultUserName is system_info.default_user.name, else the distro's.
func defaultUserName(cfg map[string]any, d distro.Info) string {
	if si, ok := cfg["system_info"].(map[string]any); ok {
		if du, ok := si["default_user"].(map[string]any); ok {
			if n, ok := du["name"].(string); ok && n != "" {
				return n
			}
		}
	}
	n, _ := d.DefaultUser()["name"].(string)
	return n
}
