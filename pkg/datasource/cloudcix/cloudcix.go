// Package cloudcix is cloud-init's CloudCIX datasource: a JSON metadata
// document and the raw user-data.
//
// Contract (DataSourceCloudCIX):
//   - Detection is pkg/identify's (DMI product_name CloudCIX); Get only
//     reads.
//   - Needs the network: ErrNeedNetwork while Env.NetworkUp is false.
//   - Under `metadata_url` (default DefaultBaseURL): GET metadata, one
//     JSON object, and userdata, raw. A service that does not answer, or
//     answers 404 for metadata, is ErrNotFound; any other failure (5xx,
//     not JSON, no instance-id, a failing userdata) is an error naming the
//     URL. A 404 for userdata means none (cloud-init fails the source).
//   - Data: the document is the meta-data (instance-id, local-hostname or
//     hostname, public-keys); `network`, when present, is the network
//     configuration as is (a v2 document).
//   - metadata and userdata are fetched in parallel; several
//     `metadata_urls` are raced, the first to answer both winning.
//     `max_wait`, `timeout` and `retries` configure the budget, the
//     per-request timeout and the retries (datasource.Env.IMDS).
//   - The whole Get is bounded by `max_wait`, else Env.Budget, else
//     DefaultBudget.
package cloudcix

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/cloudroot/cloudroot/pkg/datasource"

	"github.com/cloudroot/cloudroot/pkg/imds"
)

// DefaultBaseURL is cloud-init's base_url.
const DefaultBaseURL = "http://169.254.169.254/v1"

// Paths under the base URL.
const (
	MetadataPath = "metadata"
	UserdataPath = "userdata"
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

// Source is the CloudCIX datasource. The zero value uses the defaults.
type Source struct {
	// URL overrides DefaultBaseURL (configuration still wins).
	URL string
}

var _ datasource.Source = (*Source)(nil)

// Name implements datasource.Source.
func (*Source) Name() string { return "CloudCIX" }

// Doc implements datasource.Documented.
func (*Source) Doc() datasource.Doc {
	return datasource.Doc{
		Network:       true,
		Reads:         "`metadata_url` (default " + DefaultBaseURL + ") `/" + MetadataPath + "` (JSON: instance-id, hostname, public-keys, network) and `/" + UserdataPath + "` (raw)",
		NetworkConfig: "`network`, when present, used as is (a network config v2 document)",
		Tests:         "golden trees served by httptest (instance with network and user-data, minimal without user-data); absent, slow, 404, 500, non-JSON and failing-userdata services; fuzzed document parser",
	}
}

// Get implements datasource.Source.
func (s *Source) Get(ctx context.Context, env datasource.Env) (*datasource.Data, error) {
	ctx, cancel, c, err := env.Service(ctx, s.Name(), "cloudcix", datasource.IMDSDefaults{
		BaseURLs: []string{cmp.Or(s.URL, DefaultBaseURL)}, Budget: DefaultBudget, Timeout: DefaultTimeout, Retries: DefaultRetries,
	})
	defer cancel()
	if err != nil {
		return nil, err
	}
	log := env.Logger(s.Name())
	start := time.Now()
	f, err := read(ctx, c)
	if err != nil {
		return nil, fmt.Errorf("cloudcix: %w", err)
	}
	base, mdURL := f.base, imds.Join(f.base, MetadataPath)
	d, err := Build(mdURL, f.metadata, f.userdata)
	if err != nil {
		return nil, fmt.Errorf("cloudcix: %s: %w", mdURL, err)
	}
	log.Info("found", "url", base, "duration", time.Since(start))
	return d, nil
}
