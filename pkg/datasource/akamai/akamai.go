// Package akamai is cloud-init's Akamai datasource: the Akamai (Linode)
// metadata service with its token.
//
// Contract (DataSourceAkamai, init stage):
//   - Detection is pkg/identify's (DMI sys_vendor Linode or Akamai); Get
//     only reads.
//   - Needs the network: ErrNeedNetwork while Env.NetworkUp is false.
//   - The allowed base URLs, IPv6 first as cloud-init orders them
//     (`base_urls.ipv6`, default DefaultIPv6URL, unless `allow_ipv6: false`;
//     `base_urls.ipv4`, default DefaultIPv4URL, unless `allow_ipv4:
//     false`), are raced (imds.Race: staggered, the first to answer wins;
//     an unreachable one never holds up the other). At each: PUT
//     `paths.token` (/v1/token) with Metadata-Token-Expiry-Seconds: 300;
//     then, in parallel, GET `paths.metadata` (/v1/instance, JSON) with
//     Accept: application/json and the Metadata-Token, and GET
//     `paths.userdata` (/v1/user-data) with the token, base64-decoded (kept
//     as is when it is not base64).
//   - A base URL that does not answer, or answers the token request with
//     404, is skipped; when none answers, ErrNotFound (cloud-init would
//     keep only the local instance id). Any other failure is an error
//     naming the URL.
//   - Data: the instance document as meta-data, its id → instance-id (the
//     DMI serial when missing), region. No hostname, keys or network
//     config (cloud-init falls back to DHCP on the first NIC).
//   - `max_wait`, `timeout` and `retries` configure the budget, the
//     per-request timeout and the retries (datasource.Env.IMDS); the whole
//     Get is bounded by `max_wait`, else Env.Budget, else DefaultBudget.
package akamai

import (
	"context"
	"fmt"
	"time"

	"github.com/cloudroot/cloudroot/pkg/datasource"
)

// cloud-init's base_urls.
const (
	DefaultIPv4URL = "http://169.254.169.254"
	DefaultIPv6URL = "http://[fd00:a9fe:a9fe::1]"
)

// cloud-init's paths.
const (
	DefaultTokenPath    = "/v1/token"
	DefaultMetadataPath = "/v1/instance"
	DefaultUserdataPath = "/v1/user-data"
)

// Token headers.
const (
	TokenHeader       = "Metadata-Token"
	TokenExpiryHeader = "Metadata-Token-Expiry-Seconds"
	// TokenExpiry is the lifetime cloud-init asks for, in seconds.
	TokenExpiry = "300"
)

// Defaults when neither the configuration (`max_wait`, `timeout`,
// `retries`) nor Env.Budget says otherwise: DefaultBudget bounds one Get,
// DefaultTimeout each request, and a request failing for want of an answer
// is retried DefaultRetries times.
const (
	DefaultBudget  = 15 * time.Second
	DefaultTimeout = 2 * time.Second
	DefaultRetries = 2
)

// Source is the Akamai datasource. The zero value uses the defaults.
type Source struct {
	// URLs overrides the base URLs (configuration still wins).
	URLs []string
}

var _ datasource.Source = (*Source)(nil)

// Name implements datasource.Source.
func (*Source) Name() string { return "Akamai" }

// Doc implements datasource.Documented.
func (*Source) Doc() datasource.Doc {
	return datasource.Doc{
		Network:       true,
		Reads:         "`base_urls` ipv6 (default " + DefaultIPv6URL + ") then ipv4 (default " + DefaultIPv4URL + "), as `allow_ipv6`/`allow_ipv4` permit: PUT `" + DefaultTokenPath + "` with `" + TokenExpiryHeader + ": " + TokenExpiry + "`, then with `" + TokenHeader + "`: `" + DefaultMetadataPath + "` (JSON) and `" + DefaultUserdataPath + "` (base64)",
		NetworkConfig: "none (fallback: DHCP on the first NIC)",
		Tests:         "golden trees served by httptest (full instance with base64 user-data, no user-data and no id); token checked on every request; IPv6 base absent then IPv4; absent, slow, token 404 and 500, bad JSON; fuzzed instance and user-data parsers",
	}
}

// paths are the configured paths.
type paths struct{ token, metadata, userdata string }

func str(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

func (s *Source) config(env datasource.Env) ([]string, paths) {
	cfg := env.SourceConfig(s.Name())
	p := paths{DefaultTokenPath, DefaultMetadataPath, DefaultUserdataPath}
	if pm, ok := cfg["paths"].(map[string]any); ok {
		for k, dst := range map[string]*string{"token": &p.token, "metadata": &p.metadata, "userdata": &p.userdata} {
			if v := str(pm, k); v != "" {
				*dst = v
			}
		}
	}
	if u := env.MetadataURLs(s.Name()); len(u) > 0 {
		return u, p
	}
	bm, _ := cfg["base_urls"].(map[string]any)
	if bm == nil && len(s.URLs) > 0 {
		return s.URLs, p
	}
	v4, v6 := DefaultIPv4URL, DefaultIPv6URL
	if u := str(bm, "ipv4"); u != "" {
		v4 = u
	}
	if u := str(bm, "ipv6"); u != "" {
		v6 = u
	}
	var out []string
	if b, ok := cfg["allow_ipv6"].(bool); !ok || b {
		out = append(out, v6)
	}
	if b, ok := cfg["allow_ipv4"].(bool); !ok || b {
		out = append(out, v4)
	}
	return out, p
}

// Get implements datasource.Source.
func (s *Source) Get(ctx context.Context, env datasource.Env) (*datasource.Data, error) {
	if !env.NetworkUp {
		return nil, fmt.Errorf("akamai: %w", datasource.ErrNeedNetwork)
	}
	log := env.Logger(s.Name())
	bases, p := s.config(env)
	if len(bases) == 0 {
		return nil, fmt.Errorf("akamai: allow_ipv4 and allow_ipv6 are both false (%w)", datasource.ErrNotFound)
	}
	c, err := env.IMDS(s.Name(), datasource.IMDSDefaults{
		BaseURLs: bases, Budget: DefaultBudget, Timeout: DefaultTimeout, Retries: DefaultRetries,
	})
	if err != nil {
		return nil, fmt.Errorf("akamai: %w", err)
	}
	c.BaseURLs = bases // base_urls and allow_ipv4/6 are applied by config
	ctx, cancel := c.WithBudget(ctx)
	defer cancel()
	start := time.Now()
	in, err := read(ctx, c, p)
	if err != nil {
		return nil, fmt.Errorf("akamai: %w", err)
	}
	in.Serial = env.DMI.ProductSerial
	d, err := Build(in)
	if err != nil {
		return nil, fmt.Errorf("akamai: %s: %w", in.URL, err)
	}
	log.Info("found", "url", in.URL, "duration", time.Since(start))
	return d, nil
}
