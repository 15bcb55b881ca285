// Package vultr is cloud-init's Vultr datasource: the metadata service's
// v1.json document.
//
// Contract (DataSourceVultr):
//   - Detection is pkg/identify's (DMI sys_vendor Vultr, the `vultr`
//     command-line word, /etc/vultr); Get only reads.
//   - Needs the network: ErrNeedNetwork while Env.NetworkUp is false.
//   - GET <url>/v1.json (`url`, or `metadata_url`, default DefaultURL) with
//     Metadata-Token: cloudinit and the User-Agent cloud-init sends
//     (`user-agent` configures it): Vultr builds vendor-data for the OS it
//     names. A service that does not answer, or answers 404, is
//     ErrNotFound; any other failure (5xx, not JSON, no instance id) is an
//     error naming the URL.
//   - Data: instance-v2-id (older services: instanceid) → instance-id,
//     hostname → local-hostname ("guest" when empty), public-keys,
//     region.countrycode (else regioncode) lower-cased → region;
//     user-data ("" is none); vendor-data as cloud-init's
//     convert_vendordata takes it: text as is, a list as one part per
//     item (a mapping item is a cloud-config), so cloud-init merges the
//     cloud-configs; an object's `cloud-init` value likewise.
//   - Network: `cloud_interfaces`, when given with every physical entry
//     named, is the network config as is; otherwise the document (its
//     `interfaces`) is handed on under NetworkKey for
//     netconfig.ConvertVultr (cloud-init names cloud_interfaces' entries
//     by MAC, which needs the machine's links).
//   - `max_wait`, `timeout` and `retries` configure the budget, the
//     per-request timeout and the retries (datasource.Env.IMDS); several
//     `metadata_urls` are raced, the first to answer winning.
//   - The whole Get is bounded by `max_wait`, else Env.Budget, else
//     DefaultBudget.
package vultr

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/cloudroot/cloudroot/pkg/datasource"
)

// DefaultURL is cloud-init's `url`: v1.json is fetched below it.
const DefaultURL = "http://169.254.169.254"

// DefaultUserAgent is sent when `user-agent` is not configured, in
// cloud-init's "Cloud-Init/<version> - OS: <system> Variant: <variant>"
// form.
const DefaultUserAgent = "Cloud-Init/cloudroot - OS: Linux Variant: linux"

// TokenHeader and Token are sent on every request, as cloud-init does.
const (
	TokenHeader = "Metadata-Token"
	Token       = "cloudinit"
)

// Defaults when neither the configuration (`max_wait`, `timeout`,
// `retries`) nor Env.Budget says otherwise: DefaultBudget bounds one Get,
// DefaultTimeout each request, and a request failing for want of an answer
// is retried DefaultRetries times.
const (
	DefaultBudget  = 10 * time.Second
	DefaultTimeout = 2 * time.Second
	DefaultRetries = 2
)

// NetworkKey is the key of Data.NetworkConfig holding the metadata
// document (decoded JSON, with `interfaces`) for netconfig.ConvertVultr.
const NetworkKey = "vultr_metadata"

// Source is the Vultr datasource. The zero value uses the defaults.
type Source struct {
	// URL overrides DefaultURL (configuration still wins).
	URL string
	// UserAgent overrides DefaultUserAgent (configuration still wins).
	UserAgent string
}

var _ datasource.Source = (*Source)(nil)

// Name implements datasource.Source.
func (*Source) Name() string { return "Vultr" }

// Doc implements datasource.Documented.
func (*Source) Doc() datasource.Doc {
	return datasource.Doc{
		Network:       true,
		Reads:         "`url` (default " + DefaultURL + ") `/v1.json` with `Metadata-Token: cloudinit` and a cloud-init User-Agent (`user-agent`): instance-v2-id/instanceid, hostname, public-keys, region, user-data, vendor-data (list items as separate parts), interfaces, cloud_interfaces",
		NetworkConfig: "`cloud_interfaces` as is when its entries are named; else `interfaces` handed on under `" + NetworkKey + "` for netconfig.ConvertVultr",
		Tests:         "golden trees served by httptest (current v1.json with vendor-data list, legacy instanceid with cloud_interfaces); headers checked; absent, slow, 404, 500 and non-JSON services; fuzzed document parser",
	}
}

// config is the base URL set by `url` ("" when not set) and the
// User-Agent.
func (s *Source) config(env datasource.Env) (url, agent string) {
	cfg := env.SourceConfig(s.Name())
	url, _ = cfg["url"].(string)
	agent, _ = cfg["user-agent"].(string)
	if agent == "" {
		agent = s.UserAgent
	}
	if agent == "" {
		agent = DefaultUserAgent
	}
	return url, agent
}

// Get implements datasource.Source.
func (s *Source) Get(ctx context.Context, env datasource.Env) (*datasource.Data, error) {
	if !env.NetworkUp {
		return nil, fmt.Errorf("vultr: %w", datasource.ErrNeedNetwork)
	}
	log := env.Logger(s.Name())
	base, agent := s.config(env)
	c, err := env.IMDS(s.Name(), datasource.IMDSDefaults{
		BaseURLs: []string{cmp.Or(s.URL, DefaultURL)}, Headers: http.Header{TokenHeader: {Token}, "User-Agent": {agent}},
		Budget: DefaultBudget, Timeout: DefaultTimeout, Retries: DefaultRetries,
	})
	if err != nil {
		return nil, fmt.Errorf("vultr: %w", err)
	}
	if base != "" {
		c.BaseURLs = []string{base} // `url` wins over metadata_url(s)
	}
	ctx, cancel := c.WithBudget(ctx)
	defer cancel()
	start := time.Now()
	url, b, err := read(ctx, c)
	if err != nil {
		return nil, fmt.Errorf("vultr: %w", err)
	}
	d, err := Build(url, b)
	if err != nil {
		return nil, fmt.Errorf("vultr: %s: %w", url, err)
	}
	log.Info("found", "url", url, "duration", time.Since(start))
	return d, nil
}
