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
	"context"
	"fmt"
	"time"

	"github.com/cloudroot/cloudroot/pkg/datasource"
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

// defaultURL is the metadata URL when the configuration names none.
func (s *Source) defaultURL() string {
	if s.URL != "" {
		return s.URL
	}
	return DefaultMetadataURL
}

// Get implements datasource.Source.
func (s *Source) Get(ctx context.Context, env datasource.Env) (*datasource.Data, error) {
	if !env.NetworkUp {
		return nil, fmt.Errorf("nwcs: %w", datasource.ErrNeedNetwork)
	}
	log := env.Logger(s.Name())
	c, err := env.IMDS(s.Name(), datasource.IMDSDefaults{
		BaseURLs: []string{s.defaultURL()}, Budget: DefaultBudget, Timeout: DefaultTimeout, Retries: DefaultRetries,
	})
	if err != nil {
		return nil, fmt.Errorf("nwcs: %w", err)
	}
	ctx, cancel := c.WithBudget(ctx)
	defer cancel()
	start := time.Now()
	url, b, err := read(ctx, c)
	if err != nil {
		return nil, fmt.Errorf("nwcs: %w", err)
	}
	d, err := Build(url, b)
	if err != nil {
		return nil, fmt.Errorf("nwcs: %s: %w", url, err)
	}
	log.Info("found", "url", url, "duration", time.Since(start))
	return d, nil
}
