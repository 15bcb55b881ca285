// Package maas is cloud-init's MAAS datasource: the MAAS metadata service,
// read with OAuth 1.0 PLAINTEXT-signed requests, or a copy of it in the
// seed directory var/lib/cloud/seed/maas of the target root.
//
// Contract (DataSourceMAAS + url_helper.OauthUrlHelper):
//   - The seed directory comes first and needs no network. It is used when
//     it exists and is not empty; it holds meta-data/instance-id,
//     meta-data/local-hostname (both required), meta-data/public-keys,
//     meta-data/vendor-data and user-data (optional). A seed missing a
//     required file is an error (ErrMalformed), as in cloud-init.
//   - Otherwise `metadata_url` (under `datasource: MAAS:`) is required; with
//     none the source is ErrNotFound, and `max_wait: 0` also means "do not
//     look". The credentials `consumer_key`, `token_key`, `token_secret`
//     are all set or all unset (unset: requests are not signed);
//     `consumer_secret` may be empty. Anything else is a configuration
//     error naming the key.
//   - Needs the network for the URL: ErrNeedNetwork while Env.NetworkUp is
//     false.
//   - Every request carries a fresh `Authorization: OAuth ...` header
//     (Header: oauthlib's PLAINTEXT signature, random nonce, timestamp).
//     A 401 or 403 answer with a Date header sets the clock skew to the
//     server's clock; the request is retried once with the corrected
//     timestamp, and later requests use it too.
//   - GET <metadata_url>/2012-03-01/meta-data/instance-id is the version
//     check: no answer or 404 is ErrNotFound, a refusal after the skew
//     retry is an error. Then local-hostname (required), public-keys,
//     vendor-data and user-data (404: none). Other failures are errors
//     naming the URL.
//   - Data: name "MAAS", platform and cloud_name "maas", dsmode net,
//     subplatform "seed-dir (<seed dir or metadata_url>)" (cloud-init
//     writes "seed-dir" for both). meta-data holds instance-id,
//     local-hostname and public-keys as text; vendor-data is loaded as YAML
//     and reduced by convert_vendordata (its `cloud-init` key). MAAS gives
//     no network configuration.
//   - Bounded by `max_wait` (seconds), else Env.Budget, else
//     DefaultBudget; each request by `timeout`, else DefaultTimeout.
//   - Not done: cloud-init keeps the skew in /run/oauth_skew.json across
//     boots; cloudroot keeps it for one Get.
package maas

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/cloudroot/cloudroot/pkg/datasource"
)

// SeedDir is the local seed in the target root.
const SeedDir = "/var/lib/cloud/seed/maas"

// Version is the metadata API version cloud-init reads (MD_VERSION).
const Version = "2012-03-01"

// Defaults: cloud-init's max_wait (120 s) and per-request timeout (50 s).
const (
	DefaultBudget  = 120 * time.Second
	DefaultTimeout = 50 * time.Second
)

// Source is the MAAS datasource. The zero value uses the defaults.
type Source struct {
	// now and nonce replace the clock and the nonce generator (tests).
	now   func() time.Time
	nonce func(time.Time) string
}

var _ datasource.Source = (*Source)(nil)

// Name implements datasource.Source.
func (*Source) Name() string { return "MAAS" }

// Doc implements datasource.Documented.
func (*Source) Doc() datasource.Doc {
	return datasource.Doc{
		Network:       true,
		Reads:         "seed `" + SeedDir + "` (no network), else `metadata_url` with OAuth 1.0 PLAINTEXT-signed requests (`consumer_key`, `token_key`, `token_secret`, `consumer_secret`; clock skew learnt from a 401/403 Date header): `" + Version + "/meta-data/{instance-id,local-hostname,public-keys,vendor-data}`, `" + Version + "/user-data`",
		NetworkConfig: "none (MAAS configures the network from the kernel command line or the initramfs)",
		Tests:         "golden seeds served by an httptest server that checks every OAuth header and refuses a skewed clock once, and read from the seed directory; golden Authorization headers from oauthlib; absent, 404, slow, refused, missing files and keys, bad vendor-data; fuzzed header builder/parser and seed parser",
	}
}

// maxWaitZero: cloud-init's `max_wait: 0` turns the URL off.
func maxWaitZero(cfg map[string]any) bool {
	switch v := cfg["max_wait"].(type) {
	case int:
		return v == 0
	case int64:
		return v == 0
	case float64:
		return v == 0
	case string:
		f, err := strconv.ParseFloat(v, 64)
		return err == nil && f == 0
	}
	return false
}

// Get implements datasource.Source.
func (s *Source) Get(ctx context.Context, env datasource.Env) (*datasource.Data, error) {
	log := env.Logger(s.Name())
	start := time.Now()
	if env.Root != nil {
		in, ok, err := readSeedDir(env.Root)
		if err != nil {
			return nil, fmt.Errorf("maas: %w", err)
		}
		if ok {
			d, err := Build(in, log)
			if err != nil {
				log.Warn("malformed seed", "path", SeedDir, "error", err)
				return nil, fmt.Errorf("maas: %w", err)
			}
			log.Info("found", "path", SeedDir, "duration", time.Since(start))
			return withIDHash(d, env.SourceConfig(s.Name())), nil
		}
	}
	cfg := env.SourceConfig(s.Name())
	base, _ := cfg["metadata_url"].(string)
	if base == "" {
		return nil, fmt.Errorf("maas: no seed in %s and no metadata_url configured: %w", SeedDir, datasource.ErrNotFound)
	}
	creds, err := CredentialsFromConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("maas: datasource %s: %w", s.Name(), err)
	}
	if maxWaitZero(cfg) {
		return nil, fmt.Errorf("maas: max_wait is 0, not reading %s: %w", base, datasource.ErrNotFound)
	}
	if !env.NetworkUp {
		return nil, fmt.Errorf("maas: %w", datasource.ErrNeedNetwork)
	}
	c, err := env.IMDS(s.Name(), datasource.IMDSDefaults{
		BaseURLs: []string{base}, Timeout: DefaultTimeout, Budget: DefaultBudget,
	})
	if err != nil {
		return nil, fmt.Errorf("maas: %w", err)
	}
	c.BaseURLs = []string{base}
	r := &reader{c: c, log: log}
	if creds.Enabled() {
		r.signer = &signer{creds: creds, now: s.now, nonce: s.nonce, log: log}
		if r.signer.now == nil {
			r.signer.now = time.Now
		}
		if r.signer.nonce == nil {
			r.signer.nonce = randomNonce
		}
		c.Token, c.TokenHeader, c.Check = r.signer.token, "Authorization", r.signer.observe
	}
	ctx, cancel := c.WithBudget(ctx)
	defer cancel()
	defer c.CloseIdleConnections()
	in, err := readURL(ctx, r, base, Version)
	if err != nil {
		return nil, fmt.Errorf("maas: %w", err)
	}
	d, err := Build(in, log)
	if err != nil {
		return nil, fmt.Errorf("maas: %w", err)
	}
	log.Info("found", "url", base, "duration", time.Since(start))
	return withIDHash(d, cfg), nil
}

// withIDHash keeps the credentials' hash in ds.id_hash for CheckInstanceID.
func withIDHash(d *datasource.Data, cfg map[string]any) *datasource.Data {
	if d.DS == nil {
		d.DS = map[string]any{}
	}
	d.DS["id_hash"] = IDHash(cfg)
	return d
}

var _ datasource.InstanceChecker = (*Source)(nil)

// CheckInstanceID implements datasource.InstanceChecker as cloud-init's
// DataSourceMAAS does: MAAS has no local instance-id, so the machine is the
// same instance while its OAuth credentials (consumer_key, token_key,
// token_secret) are the ones the data was read with.
func (s *Source) CheckInstanceID(env datasource.Env, cached *datasource.Data) bool {
	kept, _ := cached.DS["id_hash"].(string)
	return kept != "" && kept == IDHash(env.SourceConfig(s.Name()))
}
