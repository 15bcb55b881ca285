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
//   - Data: instance-id, local-hostname, public-keys, region,
//     availability-zone, vendor_data; `network-config` (a network config
//     v1 document) is the network configuration as is — it is what
//     netconfig.ConvertHetzner would return.
//   - The whole Get is bounded by Env.Budget (default DefaultBudget).
package hetzner

import (
	"context"
	"fmt"
	"time"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/internal/fetch"
)

// cloud-init's metadata_url and userdata_url.
const (
	DefaultBaseURL     = "http://169.254.169.254/hetzner/v1/"
	DefaultMetadataURL = DefaultBaseURL + "metadata"
	DefaultUserdataURL = DefaultBaseURL + "userdata"
)

// DefaultBudget bounds one Get when Env.Budget is 0.
const DefaultBudget = 10 * time.Second

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
		NetworkConfig: "metadata `network-config` (v1) as is",
		Tests:         "golden trees served by httptest (private networks and base64 user-data, minimal server); absent, slow, 404, 500, bad YAML and serial mismatch; fuzzed metadata parser",
	}
}

func (s *Source) urls(env datasource.Env) (md, ud string) {
	cfg := env.SourceConfig(s.Name())
	md, _ = cfg["metadata_url"].(string)
	ud, _ = cfg["userdata_url"].(string)
	if md == "" {
		md = s.MetadataURL
	}
	if md == "" {
		md = DefaultMetadataURL
	}
	if ud == "" {
		ud = s.UserdataURL
	}
	if ud == "" {
		ud = DefaultUserdataURL
	}
	return md, ud
}

// Get implements datasource.Source.
func (s *Source) Get(ctx context.Context, env datasource.Env) (*datasource.Data, error) {
	if !env.NetworkUp {
		return nil, fmt.Errorf("hetzner: %w", datasource.ErrNeedNetwork)
	}
	log := env.Logger(s.Name())
	ctx, cancel := env.WithBudget(ctx, DefaultBudget)
	defer cancel()
	start := time.Now()
	mdURL, udURL := s.urls(env)
	in, err := read(ctx, &fetch.Client{HTTP: env.HTTP}, mdURL, udURL)
	if err != nil {
		return nil, fmt.Errorf("hetzner: %w", err)
	}
	in.Serial = env.DMI.ProductSerial
	d, err := Build(in)
	if err != nil {
		return nil, fmt.Errorf("hetzner: %s: %w", mdURL, err)
	}
	log.Info("found", "url", mdURL, "duration", time.Since(start))
	return d, nil
}
