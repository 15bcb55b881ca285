// Package scaleway is cloud-init's Scaleway datasource: the instance
// metadata API, which answers only requests from a privileged source
// port.
//
// Contract (DataSourceScaleway):
//   - Detection is pkg/identify's (DMI sys_vendor Scaleway, the cmdline
//     word or /var/run/scaleway); Get only reads.
//   - Needs the network: ErrNeedNetwork while Env.NetworkUp is false.
//   - Under `metadata_url` (default DefaultMetadataURL): GET
//     /conf?format=json (one JSON object), /user_data/cloud-init and
//     /vendor_data/cloud-init (404: none; 429 and 5xx are retried). A
//     service that does not answer, or answers 404 for the metadata, is
//     ErrNotFound; any other failure (403, 5xx, not JSON, no id) is an
//     error naming the URL.
//   - Every connection is made from a local port in the source-port range
//     (`source_ports: [low, high]`, else Source.Ports, else DefaultPorts,
//     1-1023, cloud-init's range): the API refuses unprivileged ports.
//     Binding ports below 1024 needs root (CAP_NET_BIND_SERVICE): in the
//     initramfs cloudroot runs as PID 1, as root, so they are available.
//     Ports in use are skipped; a port that cannot be bound for lack of
//     privilege is an error. Env.HTTP is therefore not used: the source
//     builds its own proxy-less client with that dialer.
//   - Data: id → instance-id, hostname → local-hostname, public keys from
//     ssh_public_keys[].key and AUTHORIZED_KEY=… tags (underscores are
//     spaces), location.zone_id → availability zone (region: the zone
//     without its last "-N"); the document is handed on unconverted under
//     NetworkKey (public_ip, ipv6, private_ip) for the network config.
//   - The three are fetched in parallel; several `metadata_urls` are
//     raced, the first to answer winning. `max_wait`, `timeout` and
//     `retries` configure the budget, the per-request timeout and the
//     retries (datasource.Env.IMDS).
//   - The whole Get is bounded by `max_wait`, else Env.Budget, else
//     DefaultBudget.
package scaleway

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/cloudroot/cloudroot/pkg/datasource"
)

// DefaultMetadataURL is cloud-init's first metadata_urls entry.
const DefaultMetadataURL = "http://169.254.42.42"

// Paths under the base URL.
const (
	MetadataPath   = "conf?format=json"
	UserDataPath   = "user_data/cloud-init"
	VendorDataPath = "vendor_data/cloud-init"
)

// DefaultPorts is cloud-init's source-port range: the privileged ports.
var DefaultPorts = PortRange{Low: 1, High: 1023}

// Defaults when neither the configuration (`max_wait`, `timeout`,
// `retries`) nor Env.Budget says otherwise: DefaultBudget bounds one Get,
// DefaultTimeout each request, and a request failing for want of an answer
// is retried DefaultRetries times.
const (
	DefaultBudget  = 15 * time.Second
	DefaultTimeout = 2 * time.Second
	DefaultRetries = 2
)

// NetworkKey is the key of Data.NetworkConfig holding the metadata
// document (decoded JSON) for the network config.
const NetworkKey = "scaleway_metadata"

// Source is the Scaleway datasource. The zero value uses the defaults.
type Source struct {
	// URL overrides DefaultMetadataURL (configuration still wins).
	URL string
	// Ports overrides DefaultPorts when valid (configuration still wins).
	Ports PortRange
}

var _ datasource.Source = (*Source)(nil)

// Name implements datasource.Source.
func (*Source) Name() string { return "Scaleway" }

// Doc implements datasource.Documented.
func (*Source) Doc() datasource.Doc {
	return datasource.Doc{
		Network:       true,
		Reads:         "`metadata_url` (default " + DefaultMetadataURL + ") `/" + MetadataPath + "`, `/" + UserDataPath + "`, `/" + VendorDataPath + "`, from a source port in `source_ports` (default " + DefaultPorts.String() + ": root, as PID 1 in the initramfs, may bind them)",
		NetworkConfig: "the metadata document (public_ip, ipv6, private_ip) handed on under `" + NetworkKey + "`",
		Tests:         "golden trees served by httptest (instance with keys, tags and data; minimal without data) with the source port checked against a configured unprivileged range; busy ports skipped; absent, slow, 404, 403, 500 and non-JSON services; fuzzed document parser",
	}
}

func (s *Source) config(env datasource.Env) (string, PortRange) {
	base := DefaultMetadataURL
	if u := env.MetadataURLs(s.Name()); len(u) > 0 {
		base = u[0]
	} else if s.URL != "" {
		base = s.URL
	}
	ports := DefaultPorts
	if s.Ports.valid() {
		ports = s.Ports
	}
	if l, ok := env.SourceConfig(s.Name())["source_ports"].([]any); ok && len(l) == 2 {
		p := PortRange{Low: toInt(l[0]), High: toInt(l[1])}
		if p.valid() {
			ports = p
		}
	}
	return base, ports
}

func toInt(v any) int {
	switch t := v.(type) {
	case int:
		return t
	case float64:
		return int(t)
	case string:
		n, _ := strconv.Atoi(t)
		return n
	}
	return 0
}

// Get implements datasource.Source.
func (s *Source) Get(ctx context.Context, env datasource.Env) (*datasource.Data, error) {
	if !env.NetworkUp {
		return nil, fmt.Errorf("scaleway: %w", datasource.ErrNeedNetwork)
	}
	log := env.Logger(s.Name())
	base, ports := s.config(env)
	c, err := env.IMDS(s.Name(), datasource.IMDSDefaults{
		BaseURLs: []string{base}, Budget: DefaultBudget, Timeout: DefaultTimeout, Retries: DefaultRetries,
	})
	if err != nil {
		return nil, fmt.Errorf("scaleway: %w", err)
	}
	c.HTTP = ports.Client() // the source port matters: Env.HTTP cannot be used
	ctx, cancel := c.WithBudget(ctx)
	defer cancel()
	start := time.Now()
	in, err := read(ctx, c)
	if err != nil {
		return nil, fmt.Errorf("scaleway: %w", err)
	}
	d, err := Build(in)
	if err != nil {
		return nil, fmt.Errorf("scaleway: %s: %w", in.URL, err)
	}
	log.Info("found", "url", in.URL, "ports", ports.String(), "duration", time.Since(start))
	return d, nil
}
