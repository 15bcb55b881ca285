// Package akamai is cloud-init's Akamai datasource: the Akamai (Linode)
// metadata service with its token.
//
// Contract (DataSourceAkamai, init stage):
//   - Detection is pkg/identify's (DMI sys_vendor Linode or Akamai); Get
//     only reads.
//   - Needs the network: ErrNeedNetwork while Env.NetworkUp is false.
//   - For each allowed base URL, IPv6 first as cloud-init orders them
//     (`base_urls.ipv6`, default DefaultIPv6URL, unless `allow_ipv6: false`;
//     `base_urls.ipv4`, default DefaultIPv4URL, unless `allow_ipv4:
//     false`): PUT `paths.token` (/v1/token) with
//     Metadata-Token-Expiry-Seconds: 300; GET `paths.metadata`
//     (/v1/instance, JSON) with Accept: application/json and the
//     Metadata-Token; GET `paths.userdata` (/v1/user-data) with the token,
//     base64-decoded (kept as is when it is not base64).
//   - A base URL that does not answer, or answers the token request with
//     404, is skipped; when none answers, ErrNotFound (cloud-init would
//     keep only the local instance id). Any other failure is an error
//     naming the URL.
//   - Data: the instance document as meta-data, its id → instance-id (the
//     DMI serial when missing), region. No hostname, keys or network
//     config (cloud-init falls back to DHCP on the first NIC).
//   - The whole Get is bounded by Env.Budget (default DefaultBudget).
package akamai

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/internal/fetch"
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

// DefaultBudget bounds one Get when Env.Budget is 0.
const DefaultBudget = 15 * time.Second

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
	ctx, cancel := env.WithBudget(ctx, DefaultBudget)
	defer cancel()
	start := time.Now()
	bases, p := s.config(env)
	c := &fetch.Client{HTTP: env.HTTP}
	var errs []error
	for _, base := range bases {
		in, err := read(ctx, c, base, p)
		if err != nil {
			errs = append(errs, fmt.Errorf("akamai: %s: %w", base, err))
			if errors.Is(err, errAbsent) {
				continue
			}
			return nil, errors.Join(errs...)
		}
		in.Serial = env.DMI.ProductSerial
		d, err := Build(in)
		if err != nil {
			return nil, fmt.Errorf("akamai: %s: %w", in.URL, err)
		}
		log.Info("found", "url", base, "duration", time.Since(start))
		return d, nil
	}
	return nil, fmt.Errorf("akamai: no metadata service answered (%w): %w", datasource.ErrNotFound, errors.Join(errs...))
}
