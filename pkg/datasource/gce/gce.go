// Package gce is cloud-init's GCE datasource: the Google Compute Engine
// metadata server.
//
// Contract (DataSourceGCE):
//   - Only on GCE: DMI product_name "Google Compute Engine" (or "Google"),
//     or a product_serial starting "GoogleCloud-"; elsewhere ErrNotFound
//     without a request.
//   - Needs the network: ErrNeedNetwork while Env.NetworkUp is false.
//   - The base URLs (`metadata_url`/`metadata_urls`, default
//     DefaultMetadataURL then DefaultMetadataIPURL, for an initramfs without
//     DNS) are raced (imds.Race: staggered, the first complete answer wins;
//     an unreachable URL never holds up the others). Every request carries
//     Metadata-Flavor: Google and every reply must carry it back. From each
//     URL, in parallel: instance/id, instance/zone, instance/hostname (all
//     required: a 404 means not GCE), instance/attributes/?recursive=true
//     and project/attributes/?recursive=true (404: none).
//   - `max_wait`, `timeout` and `retries` configure the budget, the
//     per-request timeout and the retries (datasource.Env.IMDS).
//   - user-data and user-data-encoding (base64) from the instance
//     attributes; ssh keys from instance `ssh-keys`/legacy `sshKeys` and,
//     unless blocked by `block-project-ssh-keys: true` or legacy instance
//     `sshKeys`, the project's; only `<default user>:` and `cloudinit:` keys
//     that have not expired are kept.
//   - Data: platform, cloud_name "gce"; zone → availability zone and region;
//     the short hostname. No network config (cloud-init falls back to DHCP
//     on the first NIC).
//   - The whole Get is bounded by `max_wait`, else Env.Budget, else
//     DefaultBudget.
package gce

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/imds"
)

// Where the metadata server answers: cloud-init's URL, and the same server
// by address for when the initramfs has no resolver.
const (
	DefaultMetadataURL   = "http://metadata.google.internal/computeMetadata/v1/"
	DefaultMetadataIPURL = "http://169.254.169.254/computeMetadata/v1/"
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

// Source is the GCE datasource. The zero value uses the defaults.
type Source struct {
	// URLs overrides the default URLs (configuration still wins).
	URLs []string
	// Now is the clock ssh-key expiry is checked against; nil: time.Now.
	Now func() time.Time
}

var _ datasource.Source = (*Source)(nil)

// Name implements datasource.Source.
func (*Source) Name() string { return "GCE" }

// Doc implements datasource.Documented.
func (*Source) Doc() datasource.Doc {
	return datasource.Doc{
		Network:       true,
		Reads:         "metadata server at `metadata_url` (default " + DefaultMetadataURL + ", then " + DefaultMetadataIPURL + ") with `Metadata-Flavor: Google`: `instance/{id,zone,hostname}`, `instance/attributes/?recursive=true` (user-data, user-data-encoding, ssh-keys, block-project-ssh-keys), `project/attributes/?recursive=true` (ssh-keys)",
		NetworkConfig: "none (fallback: DHCP on the first NIC)",
		Tests:         "golden trees served by httptest (instance+project keys with expiry, blocked project keys, no attributes); Metadata-Flavor checked both ways; absent, slow, 500 and unflavoured servers; a refused or black-holed first URL with the second answering, nothing answering (both URLs tried within the budget); `max_wait`, `timeout`, `retries` honoured; keys fetched in parallel; fuzzed attributes and ssh-keys parsers; QEMU boot against `imds serve --cloud gce` identified by -smbios (TestGCEIMDS)",
	}
}

// OnGCE is cloud-init's platform_reports_gce.
func OnGCE(d bootenv.DMI) bool {
	return d.ProductName == "Google Compute Engine" || d.ProductName == "Google" || strings.HasPrefix(d.ProductSerial, "GoogleCloud-")
}

// defaultURLs are the base URLs when the configuration names none.
func (s *Source) defaultURLs() []string {
	if len(s.URLs) > 0 {
		return s.URLs
	}
	return []string{DefaultMetadataURL, DefaultMetadataIPURL}
}

// Get implements datasource.Source.
func (s *Source) Get(ctx context.Context, env datasource.Env) (*datasource.Data, error) {
	if !OnGCE(env.DMI) {
		return nil, fmt.Errorf("gce: DMI does not report Google Compute Engine: %w", datasource.ErrNotFound)
	}
	if !env.NetworkUp {
		return nil, fmt.Errorf("gce: %w", datasource.ErrNeedNetwork)
	}
	log := env.Logger(s.Name())
	c, err := env.IMDS(s.Name(), datasource.IMDSDefaults{
		BaseURLs: s.defaultURLs(), Headers: http.Header{FlavorHeader: {Flavor}},
		Budget: DefaultBudget, Timeout: DefaultTimeout, Retries: DefaultRetries,
	})
	if err != nil {
		return nil, fmt.Errorf("gce: %w", err)
	}
	c.Check = flavored
	ctx, cancel := c.WithBudget(ctx)
	defer cancel()
	start := time.Now()
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	_, in, err := imds.Race(ctx, c, read)
	if err != nil {
		var re *imds.RaceError
		if errors.As(err, &re) && re.Every(func(err error) bool { return errors.Is(err, errAbsent) }) {
			return nil, fmt.Errorf("gce: no metadata server answered (%w): %w", datasource.ErrNotFound, err)
		}
		return nil, fmt.Errorf("gce: %w", err)
	}
	in.DefaultUser, in.Now = env.DefaultUser, now()
	d, err := Build(in)
	if err != nil {
		return nil, fmt.Errorf("gce: %s: %w", in.Base, err)
	}
	log.Info("found", "url", in.Base, "duration", time.Since(start))
	return d, nil
}
