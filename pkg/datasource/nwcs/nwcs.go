// Package nwcs is cloud-init's NWCS datasource: the NWCS metadata
// service's single JSON document.
//
// Contract (DataSourceNWCS):
//   - Detection is pkg/identify's (DMI sys_vendor NWCS); Get only reads.
//   - Needs the network: ErrNeedNetwork while Env.NetworkUp is false.
//   - GET `metadata_url` (default DefaultMetadataURL): one JSON object. A
//     service that does not answer, or answers 404, is ErrNotFound; any
//     other failure (5xx, not JSON, no instance-id) is an error naming the
//     URL.
//   - Data: instance-id, hostname → local-hostname, public-keys,
//     userdata → user-data and vendordata → vendor-data as given (a
//     non-string value is kept as its JSON text); the other keys are the
//     meta-data. `network` (network config version 1, as cloud-init uses
//     it) is handed on unconverted under NetworkKey.
//   - `max_wait`, `timeout` and `retries` configure the budget, the
//     per-request timeout and the retries (datasource.Env.IMDS); several
//     `metadata_urls` are raced, the first to answer winning.
//   - The whole Get is bounded by `max_wait`, else Env.Budget, else
//     DefaultBudget.
package nwcs

import (
	"cmp"
	"context"
	"time"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/internal/jsondoc"
)

// DefaultMetadataURL is cloud-init's metadata_url.
const DefaultMetadataURL = "http://169.254.169.254/api/v1/metadata"

// Defaults when neither the configuration (`max_wait`, `timeout`,
// `retries`) nor Env.Budget says otherwise: DefaultBudget bounds one Get,
// DefaultTimeout each request, and a request failing for want of an answer
// is retried DefaultRetries times.
const (
	DefaultBudget  = 10 * time.Second
	DefaultTimeout = 2 * time.Second
	DefaultRetries = 2
)

// NetworkKey is the key of Data.NetworkConfig holding the document's
// `network` value (network config version 1) as served.
const NetworkKey = "nwcs_network"

// Source is the NWCS datasource. The zero value uses the defaults.
type Source struct {
	// URL overrides DefaultMetadataURL (configuration still wins).
	URL string
}

var _ datasource.Source = (*Source)(nil)

// Name implements datasource.Source.
func (*Source) Name() string { return "NWCS" }

// Doc implements datasource.Documented.
func (*Source) Doc() datasource.Doc {
	return datasource.Doc{
		Network:       true,
		Reads:         "`metadata_url` (default " + DefaultMetadataURL + "): instance-id, hostname, public-keys, userdata, vendordata, network",
		NetworkConfig: "`network` (version 1) handed on as served under `" + NetworkKey + "`",
		Tests:         "golden documents served by httptest (full instance with network and vendordata, minimal); absent, slow, 404, 500 and non-JSON services; fuzzed document parser",
	}
}

// Get implements datasource.Source: jsondoc.Source's contract.
func (s *Source) Get(ctx context.Context, env datasource.Env) (*datasource.Data, error) {
	return jsondoc.Source{
		Name: s.Name(), Tag: "nwcs", URL: cmp.Or(s.URL, DefaultMetadataURL),
		Budget: DefaultBudget, Timeout: DefaultTimeout, Retries: DefaultRetries,
		Build: func(url string, b []byte, env datasource.Env) (*datasource.Data, error) {
			return Build(url, b)
		},
	}.Get(ctx, env)
}
