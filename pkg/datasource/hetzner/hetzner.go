// Package hetzner is cloud-init's Hetzner datasource: the Hetzner Cloud
// metadata service.
//
// Contract (DataSourceHetzner):
//   - Detection is pkg/identify's (DMI sys_vendor Hetzner); Get only reads.
//   - Needs the network: ErrNeedNetwork while Env.NetworkUp is false.
//   - GET `metadata_url` (default DefaultMetadataURL): a YAML mapping with
//     instance-id and hostname (both required); `<metadata_url>/private-networks`
//     (YAML list; 404: none); `userdata_url` (default DefaultUserdataURL;
//     404: none), base64-decoded when it is strictly base64 (Hetzner has
//     no binary user-data). A service that does not answer, or answers 404
//     for the metadata, is ErrNotFound; anything else is an error naming
//     the URL.
//   - When DMI gives a system serial, it must equal the instance-id, as
//     cloud-init checks.
//   - Data: instance-id, local-hostname, public-keys, vendor_data (region
//     and availability-zone stay in meta-data only: cloud-init reports no
//     v1 region or zone for Hetzner); `network-config` (a network config
//     v1 document) with each private network appended as a DHCPv4 NIC
//     named by its MAC is the network configuration
//     (netconfig.HetznerNetworkConfig, what netconfig.ConvertHetzner
//     parses).
//   - The metadata and its private-networks are fetched in parallel; several
//     `metadata_urls` are raced, the first to answer winning. `max_wait`,
//     `timeout` and `retries` configure the budget, the per-request timeout
//     and the retries (datasource.Env.IMDS).
//   - The whole Get is bounded by `max_wait`, else Env.Budget, else
//     DefaultBudget.
package hetzner

import (
	"context"
	"fmt"
	"time"

	"github.com/cloudroot/cloudroot/pkg/datasource"
)

// cloud-init's metadata_url and userdata_url.
const (
	DefaultBaseURL     = "http://169.254.169.254/hetzner/v1/"
	DefaultMetadataURL = DefaultBaseURL + "metadata"
	DefaultUserdataURL = DefaultBaseURL + "userdata"
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

// Source is the Hetzner datasource. The zero value uses the defaults.
type Source struct {
	// MetadataURL and UserdataURL override the defaults (configuration
	// still wins).
	MetadataURL, UserdataURL string
}

var _ datasource.Source = (*Source)(nil)

// Name implements datasource.Source.
func (*Source) Name() string { return "Hetzner" }

// Doc implements datasource.Documented.
func (*Source) Doc() datasource.Doc {
	return datasource.Doc{
		Network:       true,
		Reads:         "`metadata_url` (default " + DefaultMetadataURL + ", YAML: instance-id, hostname, public-keys, region, availability-zone, vendor_data, network-config) and its `/private-networks`; `userdata_url` (default " + DefaultUserdataURL + ", base64-decoded when strictly base64); instance-id checked against the DMI serial",
		NetworkConfig: "metadata `network-config` (v1), each `private-networks` entry appended as a DHCPv4 NIC named by its MAC (as 26.x)",
		Tests:         "golden trees served by httptest (private networks and base64 user-data, minimal server); absent, slow, 404, 500, bad YAML and serial mismatch; fuzzed metadata parser",
	}
}

// defaultMetadataURL is the metadata URL when the configuration names
// none.
func (s *Source) defaultMetadataURL() string {
	if s.MetadataURL != "" {
		return s.MetadataURL
	}
	return DefaultMetadataURL
}

// userdataURL is `userdata_url`, else the override, else the default.
func (s *Source) userdataURL(env datasource.Env) string {
	if ud, _ := env.SourceConfig(s.Name())["userdata_url"].(string); ud != "" {
		return ud
	}
	if s.UserdataURL != "" {
		return s.UserdataURL
	}
	return DefaultUserdataURL
}

// Get implements datasource.Source.
func (s *Source) Get(ctx context.Context, env datasource.Env) (*datasource.Data, error) {
	ctx, cancel, c, err := env.Service(ctx, s.Name(), "hetzner", datasource.IMDSDefaults{
		BaseURLs: []string{s.defaultMetadataURL()}, Budget: DefaultBudget, Timeout: DefaultTimeout, Retries: DefaultRetries,
	})
	defer cancel()
	if err != nil {
		return nil, err
	}
	log := env.Logger(s.Name())
	start := time.Now()
	in, err := read(ctx, c, c.WithBaseURL(s.userdataURL(env)))
	if err != nil {
		return nil, fmt.Errorf("hetzner: %w", err)
	}
	mdURL := in.URL
	in.Serial = env.DMI.ProductSerial
	d, err := Build(in)
	if err != nil {
		return nil, fmt.Errorf("hetzner: %s: %w", mdURL, err)
	}
	log.Info("found", "url", mdURL, "duration", time.Since(start))
	return d, nil
}
