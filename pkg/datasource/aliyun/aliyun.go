// Package aliyun is cloud-init's AliYun datasource: Alibaba Cloud ECS's
// EC2-style metadata service.
//
// Contract (DataSourceAliYun):
//   - Detection is pkg/identify's (DMI product_name Alibaba Cloud ECS or
//     an AliYun seed); Get only reads.
//   - Needs the network: ErrNeedNetwork while Env.NetworkUp is false.
//   - `metadata_urls` (default DefaultMetadataURL) are raced as cloud-init's
//     Ec2 helpers do (imds.Race: staggered, the first to answer wins; an
//     unreachable URL never holds up the others), each with its own
//     session: PUT latest/api/token with
//     X-aliyun-ecs-metadata-token-ttl-seconds (the security-enhanced mode,
//     IMDSv2-like); the token goes in X-aliyun-ecs-metadata-token on every
//     GET. A 4xx to the PUT means normal mode: plain GETs.
//   - Reads <APIVersion>/meta-data/ (crawled as cloud-init's ec2 helper
//     does, each level in parallel), then <APIVersion>/user-data and
//     <APIVersion>/vendor-data together (404: none). A service that does not answer, or answers 404 for the tree,
//     is ErrNotFound; any other failure is an error naming the URL. The
//     tree must give an instance-id.
//   - Data: instance-id; hostname → local-hostname; public-keys in any of
//     the forms cloud-init's parse_public_keys takes (string, list, or a
//     dict with openssh-key); region-id and zone-id stay in meta-data (no
//     v1 region or zone, as in cloud-init). No network config (cloud-init
//     falls back to DHCP).
//   - `max_wait`, `timeout` and `retries` configure the budget, the
//     per-request timeout and the retries (datasource.Env.IMDS); the whole
//     Get is bounded by `max_wait`, else Env.Budget, else DefaultBudget.
package aliyun

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/cloudroot/cloudroot/pkg/datasource"
)

// DefaultMetadataURL is cloud-init's metadata_urls.
const DefaultMetadataURL = "http://100.100.100.200"

// APIVersion is cloud-init's min_metadata_version (no newer one is
// probed: extended_metadata_versions is empty).
const APIVersion = "2016-01-01"

// Security-enhanced mode (token) headers.
const (
	TokenHeader    = "X-aliyun-ecs-metadata-token"
	TokenTTLHeader = "X-aliyun-ecs-metadata-token-ttl-seconds"
	// TokenTTL is the lifetime asked for, in seconds.
	TokenTTL = "21600"
	// TokenPath is where the token is PUT for.
	TokenPath = "latest/api/token"
)

// Defaults when neither the configuration (`max_wait`, `timeout`,
// `retries`) nor Env.Budget says otherwise: DefaultBudget bounds one Get,
// DefaultTimeout each request, and a request failing for want of an answer
// is retried DefaultRetries times.
const (
	DefaultBudget  = 20 * time.Second
	DefaultTimeout = 2 * time.Second
	DefaultRetries = 2
)

// Source is the AliYun datasource. The zero value uses the defaults.
type Source struct {
	// URL overrides DefaultMetadataURL (configuration still wins).
	URL string
}

var _ datasource.Source = (*Source)(nil)

// Name implements datasource.Source.
func (*Source) Name() string { return "AliYun" }

// Doc implements datasource.Documented.
func (*Source) Doc() datasource.Doc {
	return datasource.Doc{
		Network:       true,
		Reads:         "`metadata_urls` (default " + DefaultMetadataURL + "): token from PUT `/" + TokenPath + "` (`" + TokenTTLHeader + "`, sent back as `" + TokenHeader + "`; 4xx: no token), `/" + APIVersion + "/meta-data/` tree, `/" + APIVersion + "/user-data`, `/" + APIVersion + "/vendor-data`",
		NetworkConfig: "none (fallback: DHCP on the first NIC)",
		Tests:         "golden trees served by httptest (token mode with dict public-keys, normal mode without user-data); token header checked on every GET; absent, slow, 404, 500 and token-500 services; fuzzed Build",
	}
}

// Get implements datasource.Source.
func (s *Source) Get(ctx context.Context, env datasource.Env) (*datasource.Data, error) {
	ctx, cancel, c, err := env.Service(ctx, s.Name(), "aliyun", datasource.IMDSDefaults{
		BaseURLs: []string{cmp.Or(s.URL, DefaultMetadataURL)}, Budget: DefaultBudget, Timeout: DefaultTimeout, Retries: DefaultRetries,
	})
	defer cancel()
	if err != nil {
		return nil, err
	}
	log := env.Logger(s.Name())
	start := time.Now()
	in, err := read(ctx, c)
	if err != nil {
		return nil, fmt.Errorf("aliyun: %w", err)
	}
	d, err := Build(in)
	if err != nil {
		return nil, fmt.Errorf("aliyun: %s: %w", in.URL, err)
	}
	log.Info("found", "url", in.URL, "token", in.Token, "duration", time.Since(start))
	return d, nil
}
