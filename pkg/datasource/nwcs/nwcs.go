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
//   - The whole Get is bounded by Env.Budget (default DefaultBudget).
package nwcs

import (
	"context"
	"fmt"
	"time"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/internal/fetch"
)

// DefaultMetadataURL is cloud-init's metadata_url.
const DefaultMetadataURL = "http://169.254.169.254/api/v1/metadata"

// DefaultBudget bounds one Get when Env.Budget is 0.
const DefaultBudget = 10 * time.Second

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

func (s *Source) url(env datasource.Env) string {
	if u := env.MetadataURLs(s.Name()); len(u) > 0 {
		return u[0]
	}
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
	ctx, cancel := env.WithBudget(ctx, DefaultBudget)
	defer cancel()
	start := time.Now()
	url := s.url(env)
	b, err := read(ctx, &fetch.Client{HTTP: env.HTTP}, url)
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
