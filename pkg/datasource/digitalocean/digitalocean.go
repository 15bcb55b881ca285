// Package digitalocean is cloud-init's DigitalOcean datasource: the droplet
// metadata service's single JSON document.
//
// Contract (DataSourceDigitalOcean):
//   - Detection is pkg/identify's (DMI sys_vendor DigitalOcean); Get only
//     reads.
//   - Needs the network: ErrNeedNetwork while Env.NetworkUp is false.
//   - GET `metadata_url` (default DefaultMetadataURL): one JSON object. A
//     service that does not answer, or answers 404, is ErrNotFound; any
//     other failure (5xx, not JSON, no droplet_id) is an error naming the
//     URL.
//   - Data: droplet_id → instance-id, hostname → local-hostname,
//     public_keys → public keys, region → availability zone (no region, as
//     in cloud-init),
//     user_data and vendor_data as given; the whole document (its
//     interfaces and dns) is handed on unconverted under NetworkKey for
//     netconfig.ConvertDigitalOcean.
//   - `max_wait`, `timeout` and `retries` configure the budget, the
//     per-request timeout and the retries (datasource.Env.IMDS); several
//     `metadata_urls` are raced, the first to answer winning.
//   - The whole Get is bounded by `max_wait`, else Env.Budget, else
//     DefaultBudget.
package digitalocean

import (
	"cmp"
	"context"
	"time"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/internal/jsondoc"
)

// DefaultMetadataURL is cloud-init's metadata_url.
const DefaultMetadataURL = "http://169.254.169.254/metadata/v1.json"

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
// document (decoded JSON, with `interfaces` and `dns`) for
// netconfig.ConvertDigitalOcean.
const NetworkKey = "digitalocean_metadata"

// Source is the DigitalOcean datasource. The zero value uses the defaults.
type Source struct {
	// URL overrides DefaultMetadataURL (configuration still wins).
	URL string
}

var _ datasource.Source = (*Source)(nil)

// Name implements datasource.Source.
func (*Source) Name() string { return "DigitalOcean" }

// Doc implements datasource.Documented.
func (*Source) Doc() datasource.Doc {
	return datasource.Doc{
		Network:       true,
		Reads:         "`metadata_url` (default " + DefaultMetadataURL + "): droplet_id, hostname, public_keys, region, user_data, vendor_data, interfaces, dns",
		NetworkConfig: "`interfaces` and `dns` handed on under `" + NetworkKey + "` for netconfig.ConvertDigitalOcean",
		Tests:         "golden trees served by httptest (public+private interfaces with anchor IPs, minimal droplet); absent, slow, 404, 500 and non-JSON services; fuzzed document parser",
	}
}

// Get implements datasource.Source: jsondoc.Source's contract.
func (s *Source) Get(ctx context.Context, env datasource.Env) (*datasource.Data, error) {
	return jsondoc.Source{
		Name: s.Name(), Tag: "digitalocean", URL: cmp.Or(s.URL, DefaultMetadataURL),
		Budget: DefaultBudget, Timeout: DefaultTimeout, Retries: DefaultRetries,
		Build: func(url string, b []byte, env datasource.Env) (*datasource.Data, error) {
			return Build(url, b)
		},
	}.Get(ctx, env)
}
