// Package upcloud is cloud-init's UpCloud datasource: the server metadata
// service's JSON document.
//
// Contract (DataSourceUpCloud):
//   - Detection is pkg/identify's (DMI sys_vendor UpCloud); Get only reads.
//   - Needs the network: ErrNeedNetwork while Env.NetworkUp is false.
//   - GET `metadata_url` (default DefaultMetadataURL): one JSON object. A
//     service that does not answer, or answers 404, is ErrNotFound; any
//     other failure (5xx, not JSON, no instance id) is an error naming the
//     URL.
//   - Data: instance_id → instance-id (the DMI product UUID when missing,
//     as cloud-init's system_uuid), hostname → local-hostname,
//     public_keys, region → availability zone ("default" when missing),
//     user_data and vendor_data as given; `network` (interfaces, dns) is
//     handed on unconverted under NetworkKey for netconfig.ConvertUpCloud.
//   - `max_wait`, `timeout` and `retries` configure the budget, the
//     per-request timeout and the retries (datasource.Env.IMDS); several
//     `metadata_urls` are raced, the first to answer winning.
//   - The whole Get is bounded by `max_wait`, else Env.Budget, else
//     DefaultBudget.
package upcloud

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

// NetworkKey is the key of Data.NetworkConfig holding the document's
// `network` value (decoded JSON: interfaces, dns) for
// netconfig.ConvertUpCloud.
const NetworkKey = "upcloud_network"

// Source is the UpCloud datasource. The zero value uses the defaults.
type Source struct {
	// URL overrides DefaultMetadataURL (configuration still wins).
	URL string
}

var _ datasource.Source = (*Source)(nil)

// Name implements datasource.Source.
func (*Source) Name() string { return "UpCloud" }

// Doc implements datasource.Documented.
func (*Source) Doc() datasource.Doc {
	return datasource.Doc{
		Network:       true,
		Reads:         "`metadata_url` (default " + DefaultMetadataURL + "): instance_id (else the DMI product UUID), hostname, public_keys, region, user_data, vendor_data, network",
		NetworkConfig: "`network` handed on under `" + NetworkKey + "` for netconfig.ConvertUpCloud",
		Tests:         "golden trees served by httptest (public+utility+private interfaces with DHCP and static addresses, minimal server without instance_id); absent, slow, 404, 500 and non-JSON services; fuzzed document parser",
	}
}

// Get implements datasource.Source: jsondoc.Source's contract.
func (s *Source) Get(ctx context.Context, env datasource.Env) (*datasource.Data, error) {
	return jsondoc.Source{
		Name: s.Name(), Tag: "upcloud", URL: cmp.Or(s.URL, DefaultMetadataURL),
		Budget: DefaultBudget, Timeout: DefaultTimeout, Retries: DefaultRetries,
		Build: func(url string, b []byte, env datasource.Env) (*datasource.Data, error) {
			return Build(url, b, env.DMI.ProductUUID)
		},
	}.Get(ctx, env)
}
