// Package cloudstack is cloud-init's CloudStack datasource: the virtual
// router's EC2-style metadata tree plus its password server.
//
// Contract (DataSourceCloudStack):
//   - Detection is pkg/identify's (DMI product_name CloudStack*); Get only
//     reads.
//   - Needs the network: ErrNeedNetwork while Env.NetworkUp is false.
//   - The metadata service is `metadata_urls` (or `metadata_url`) from the
//     configuration (datasource: {CloudStack: {metadata_url:
//     http://<router>/}}), else Source.URL; else the virtual router found
//     as cloud-init's get_vr_address does, first answer wins:
//     (a) the DNS name DataServerName ("data-server.", resolved through
//     Source.Resolver, at most DNSTimeout and the source's detection
//     window, Env.Window: max_wait, else the boot's Policy.Probe), (b) the DHCP
//     server identifier (option 54) of Env.Lease, (c) the default gateway
//     (Env.Lease.Router). The service is then
//     http://<router>[:MetadataPort]/. No router at all is ErrNotFound,
//     naming what was tried; no DNS lookup is made when a URL is
//     configured.
//   - Requests go through pkg/imds, built by Env.IMDS (max_wait, timeout,
//     retries; one budget for all of them, default DefaultBudget; under
//     the boot's Env.Policy its detection window, per-request timeout and
//     deadline). First
//     <base>/latest/meta-data/instance-id is waited for (cloud-init's
//     wait_for_metadata_service); with several configured URLs the one
//     that answers is used for the rest. Then the meta-data tree under
//     <base>/latest/meta-data/ (instance-id, local-hostname, public-keys,
//     availability-zone, ...), crawled as cloud-init's ec2 helper does,
//     and <base>/latest/user-data (404: none). A router that does not
//     answer within the budget, or answers 404 for instance-id, is
//     ErrNotFound; any other failure is an error naming the URL. The tree
//     must give an instance-id.
//   - The password server is on the same host, port `password_server_port`
//     (default DefaultPasswordPort, Source.PasswordPort), path /: GET with
//     DomU_Request: send_my_password; a password other than "",
//     "saved_password" and "bad_request" is acknowledged with DomU_Request:
//     saved_password and becomes configuration (password, ssh_pwauth:
//     true, chpasswd.expire: false). A password server that fails (or
//     answers bad_request) is logged and skipped, as cloud-init does; the
//     password itself is never logged.
//   - Data: instance-id, local-hostname, public-keys, availability-zone.
//     No network config (cloud-init falls back to DHCP on the first NIC).
package cloudstack

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"time"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/internal/pwserver"
)

// DataServerName is the DNS name of the virtual router (cloud-init's
// get_data_server; written fully qualified so no search domain is
// appended). APIVersion is the tree's version. DefaultMetadataPort and
// DefaultPasswordPort are the router's metadata and password ports.
const (
	DataServerName      = "data-server."
	APIVersion          = "latest"
	DefaultMetadataPort = 80
	DefaultPasswordPort = 8080
)

// DefaultBudget bounds one Get (and the router's discovery) when neither
// Env.Policy, Env.Budget nor max_wait does;
// DNSTimeout bounds the data-server lookup.
const (
	DefaultBudget = 15 * time.Second
	DNSTimeout    = 2 * time.Second
)

// Password server protocol.
const (
	RequestHeader = pwserver.RequestHeader
	SendPassword  = pwserver.SendPassword
	SavedPassword = pwserver.SavedPassword
)

// Resolver resolves the data-server name; *net.Resolver is one.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Source is the CloudStack datasource. The zero value uses the defaults.
type Source struct {
	// URL, when set, is the metadata service's base URL: no virtual router
	// is looked for (configuration still wins).
	URL string
	// Resolver resolves DataServerName; nil means net.DefaultResolver.
	Resolver Resolver
	// MetadataPort is the metadata service's port on a discovered router
	// (DefaultMetadataPort when 0).
	MetadataPort int
	// PasswordPort overrides DefaultPasswordPort (configuration still
	// wins).
	PasswordPort int
}

var _ datasource.Source = (*Source)(nil)

// Name implements datasource.Source.
func (*Source) Name() string { return "CloudStack" }

// Doc implements datasource.Documented.
func (*Source) Doc() datasource.Doc {
	return datasource.Doc{
		Network: true,
		Reads: "the seed dir `/var/lib/cloud/seed/cs` (meta-data + user-data, no network) first; else the virtual router (`metadata_url`/`metadata_urls`, else the DNS name `" + DataServerName +
			"`, else the DHCP lease's server identifier, else its router): `/" + APIVersion +
			"/meta-data/instance-id` waited for, the `/" + APIVersion + "/meta-data/` tree (instance-id, local-hostname, public-keys, availability-zone) and `/" +
			APIVersion + "/user-data`; password server on the router's port `password_server_port` (default " +
			strconv.Itoa(DefaultPasswordPort) + ") with `DomU_Request: send_my_password`, acknowledged with `saved_password`",
		NetworkConfig: "none (fallback: DHCP on the first NIC)",
		Tests: "golden trees served by httptest on 127.0.0.1 (new password acknowledged, password already saved, no user-data); " +
			"router found through an injected resolver, the lease's server identifier and its router, and precedence of each; " +
			"under the boot's timing policy a slow resolver and router read, a silent resolver and a hanging router ended within the detection window; " +
			"no router, absent, slow, 404, 500 and broken services, failing and bad_request password servers; fuzzed password reply",
	}
}

// ErrNoRouter: no virtual router address could be found.
var ErrNoRouter = errors.New("no virtual router found")

// Router is the virtual router's address and how it was found.
type Router struct {
	Addr netip.Addr
	// Via is "dns", "dhcp-server-identifier" or "default-gateway".
	Via string
}

// FindRouter is cloud-init's get_vr_address: the data-server DNS name,
// else the lease's DHCP server identifier, else its router. The error
// (wrapping ErrNoRouter) says what was tried.
func (s *Source) FindRouter(ctx context.Context, lease *datasource.Lease) (Router, error) {
	res := s.Resolver
	if res == nil {
		res = net.DefaultResolver
	}
	dctx, cancel := context.WithTimeout(ctx, DNSTimeout)
	addrs, err := res.LookupNetIP(dctx, "ip", DataServerName)
	cancel()
	if err == nil {
		if a, ok := pickAddr(addrs); ok {
			return Router{Addr: a, Via: "dns"}, nil
		}
		err = errors.New("no usable address in the answer")
	}
	errs := []error{fmt.Errorf("resolving %s: %w", DataServerName, err)}
	if lease == nil {
		errs = append(errs, errors.New("no DHCP lease (the network is static or not from DHCP)"))
		return Router{}, fmt.Errorf("%w: %w", ErrNoRouter, errors.Join(errs...))
	}
	if usable(lease.ServerID) {
		return Router{Addr: lease.ServerID.Unmap(), Via: "dhcp-server-identifier"}, nil
	}
	if usable(lease.Router) {
		return Router{Addr: lease.Router.Unmap(), Via: "default-gateway"}, nil
	}
	errs = append(errs, fmt.Errorf("the DHCP lease on %s has neither a server identifier nor a router", lease.Iface))
	return Router{}, fmt.Errorf("%w: %w", ErrNoRouter, errors.Join(errs...))
}

// pickAddr is the first usable IPv4 answer, else the first usable one.
func pickAddr(addrs []netip.Addr) (netip.Addr, bool) {
	for _, a := range addrs {
		if a = a.Unmap(); a.Is4() && usable(a) {
			return a, true
		}
	}
	for _, a := range addrs {
		if usable(a) {
			return a.Unmap(), true
		}
	}
	return netip.Addr{}, false
}

func usable(a netip.Addr) bool { return a.IsValid() && !a.IsUnspecified() }

// RouterURL is the metadata service's base URL on router at port.
func RouterURL(router netip.Addr, port int) string {
	if port <= 0 || port == DefaultMetadataPort {
		if router.Is6() {
			return "http://[" + router.String() + "]/"
		}
		return "http://" + router.String() + "/"
	}
	return "http://" + netip.AddrPortFrom(router, uint16(port)).String() + "/"
}

// bases are the metadata base URLs: the configured ones, Source.URL, or
// the discovered router.
func (s *Source) bases(ctx context.Context, env datasource.Env) ([]string, error) {
	if u := env.MetadataURLs(s.Name()); len(u) > 0 {
		return u, nil
	}
	if s.URL != "" {
		return []string{s.URL}, nil
	}
	// Finding the router is part of looking for the service: it has the
	// source's detection window (max_wait, else the Policy's Probe).
	ctx, cancel := context.WithTimeout(ctx, env.Window(s.Name(), DefaultBudget))
	defer cancel()
	r, err := s.FindRouter(ctx, env.Lease)
	if err != nil {
		return nil, err
	}
	env.Logger(s.Name()).Info("virtual router", "addr", r.Addr.String(), "via", r.Via)
	return []string{RouterURL(r.Addr, s.MetadataPort)}, nil
}

// Get implements datasource.Source.
func (s *Source) Get(ctx context.Context, env datasource.Env) (*datasource.Data, error) {
	if d, ok, err := readSeed(env.Root); err != nil {
		return nil, fmt.Errorf("cloudstack: %w", err)
	} else if ok {
		env.Logger(s.Name()).Info("using seeded data", "path", SeedDir)
		return d, nil
	}
	if !env.NetworkUp {
		return nil, fmt.Errorf("cloudstack: %w", datasource.ErrNeedNetwork)
	}
	log := env.Logger(s.Name())
	start := time.Now()
	bases, err := s.bases(ctx, env)
	if err != nil {
		return nil, fmt.Errorf("cloudstack: %w: %w", datasource.ErrNotFound, err)
	}
	c, err := env.IMDS(s.Name(), datasource.IMDSDefaults{BaseURLs: bases, Budget: DefaultBudget})
	if err != nil {
		return nil, fmt.Errorf("cloudstack: %w", err)
	}
	ctx, cancel := c.WithBudget(ctx)
	defer cancel()
	in, err := read(ctx, c)
	if err != nil {
		return nil, fmt.Errorf("cloudstack: %w", err)
	}
	port := pwserver.Port(env.SourceConfig(s.Name()), s.PasswordPort, DefaultPasswordPort)
	pwURL, err := PasswordURL(in.Base, port)
	if err == nil {
		in.Password, err = pwserver.Password(ctx, c, pwURL)
	}
	if err != nil {
		log.Warn("password server failed; no password set", "url", pwURL, "error", err)
	}
	d, err := Build(in)
	if err != nil {
		return nil, fmt.Errorf("cloudstack: %s: %w", in.URL, err)
	}
	log.Info("found", "url", in.Base, "duration", time.Since(start))
	return d, nil
}
