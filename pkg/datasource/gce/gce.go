// Package gce is cloud-init's GCE datasource: the Google Compute Engine
// metadata server.
//
// Contract (DataSourceGCE):
//   - Only on GCE: DMI product_name "Google Compute Engine" (or "Google"),
//     or a product_serial starting "GoogleCloud-"; elsewhere ErrNotFound
//     without a request.
//   - Needs the network: ErrNeedNetwork while Env.NetworkUp is false.
//   - Each base URL (`metadata_url`/`metadata_urls`, default
//     DefaultMetadataURL then DefaultMetadataIPURL, for an initramfs without
//     DNS) in turn, every request with Metadata-Flavor: Google and every
//     reply required to carry it back: instance/id, instance/zone,
//     instance/hostname (all required: a 404 means not GCE),
//     instance/attributes/?recursive=true and
//     project/attributes/?recursive=true (404: none).
//   - user-data and user-data-encoding (base64) from the instance
//     attributes; ssh keys from instance `ssh-keys`/legacy `sshKeys` and,
//     unless blocked by `block-project-ssh-keys: true` or legacy instance
//     `sshKeys`, the project's; only `<default user>:` and `cloudinit:` keys
//     that have not expired are kept.
//   - Data: platform, cloud_name "gce"; zone → availability zone and region;
//     the short hostname. No network config (cloud-init falls back to DHCP
//     on the first NIC).
//   - The whole Get is bounded by Env.Budget (default DefaultBudget).
package gce

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
	"github.com/cloudroot/cloudroot/pkg/datasource"
)

// Where the metadata server answers: cloud-init's URL, and the same server
// by address for when the initramfs has no resolver.
const (
	DefaultMetadataURL   = "http://metadata.google.internal/computeMetadata/v1/"
	DefaultMetadataIPURL = "http://169.254.169.254/computeMetadata/v1/"
)

// DefaultBudget bounds one Get when Env.Budget is 0.
const DefaultBudget = 20 * time.Second

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
		Tests:         "golden trees served by httptest (instance+project keys with expiry, blocked project keys, no attributes); Metadata-Flavor checked both ways; absent, slow, 500 and unflavoured servers; fuzzed attributes and ssh-keys parsers",
	}
}

// OnGCE is cloud-init's platform_reports_gce.
func OnGCE(d bootenv.DMI) bool {
	return d.ProductName == "Google Compute Engine" || d.ProductName == "Google" || strings.HasPrefix(d.ProductSerial, "GoogleCloud-")
}

func (s *Source) urls(env datasource.Env) []string {
	if u := env.MetadataURLs(s.Name()); len(u) > 0 {
		return u
	}
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
	ctx, cancel := env.WithBudget(ctx, DefaultBudget)
	defer cancel()
	start := time.Now()
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	c := newClient(env.HTTP)
	var errs []error
	for _, base := range s.urls(env) {
		in, err := read(ctx, c, base)
		if err != nil {
			errs = append(errs, fmt.Errorf("gce: %s: %w", base, err))
			if errors.Is(err, errAbsent) {
				continue
			}
			return nil, errors.Join(errs...)
		}
		in.DefaultUser, in.Now = env.DefaultUser, now()
		d, err := Build(in)
		if err != nil {
			return nil, fmt.Errorf("gce: %s: %w", base, err)
		}
		log.Info("found", "url", base, "duration", time.Since(start))
		return d, nil
	}
	return nil, fmt.Errorf("gce: no metadata server answered (%w): %w", datasource.ErrNotFound, errors.Join(errs...))
}
