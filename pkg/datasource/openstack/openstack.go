// Package openstack is cloud-init's OpenStack datasource: the Nova metadata
// service over HTTP. Its parser (parse.go) is shared with configdrive,
// which reads the same tree from a disk.
//
// Contract (DataSourceOpenStack + helpers/openstack.py):
//   - Needs the network: ErrNeedNetwork while Env.NetworkUp is false.
//   - The base URLs (`metadata_urls`, default DefaultMetadataURL) are
//     raced for GET openstack (the version listing), as cloud-init's
//     wait_for_url with connect_synchronously=False (imds.Client.Probe:
//     staggered, the first 200 wins). No answer or 404 there means no
//     OpenStack service at that URL; none anywhere is ErrNotFound. An
//     unreachable URL never holds up the others.
//   - `max_wait`, `timeout` and `retries` configure the budget, the
//     per-request timeout and the retries (datasource.Env.IMDS).
//   - The version read is the newest cloud-init knows that is listed, else
//     "latest" (PickVersion). From it, in parallel: meta_data.json
//     (required), user_data, vendor_data.json, vendor_data2.json,
//     network_data.json (optional: 404 or unreadable means absent); then
//     the `files` and `network_config` contents under openstack/, and the
//     EC2-compatible latest/meta-data/ tree (best effort; its instance-id
//     stands in when meta_data.json has no uuid).
//   - Data as Build makes it; platform and cloud_name "openstack",
//     subplatform "metadata (<url>)".
//   - The whole Get is bounded by `max_wait`, else Env.Budget, else
//     DefaultBudget; under the boot's Env.Policy (the initramfs) by the
//     caller's context instead (the search's deadline), `max_wait` being
//     the detection window and the Policy's read timeout replacing
//     DefaultTimeout (datasource.Env.IMDS).
package openstack

import (
	"context"
	"fmt"
	"time"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/imds"
)

// DefaultMetadataURL is where cloud-init looks for the Nova metadata
// service (it also tries fe80::a9fe:a9fe on each link, which needs an
// interface name: configure it in metadata_urls).
const DefaultMetadataURL = "http://169.254.169.254"

// Defaults when neither the configuration (`max_wait`, `timeout`,
// `retries`) nor Env.Budget says otherwise: DefaultBudget bounds one Get,
// DefaultTimeout each request, and a request failing for want of an answer
// (refused, timed out) is retried DefaultRetries times, and one the
// service answered (5xx) or any failure once it has answered
// DefaultReadRetries times (datasource.Env.Patient). DefaultReadRetries is
// cloud-init's, from DataSource.url_retries (5), which
// DataSourceOpenStack's reads use: a boot reads ~30 paths, and with 3 attempts each
// a service failing 10% of requests leaves ~3% of a fleet unprovisioned
// (pkg/imdsserve's TestFleetEC2); with 6 it is ~3 in 100,000. An absent
// service is still given up on after DefaultRetries.
const (
	DefaultBudget      = 20 * time.Second
	DefaultTimeout     = 2 * time.Second
	DefaultRetries     = 2
	DefaultReadRetries = 5
)

// Source is the OpenStack datasource. The zero value uses the defaults.
type Source struct {
	// URLs overrides DefaultMetadataURL (configuration still wins).
	URLs []string
}

var _ datasource.Source = (*Source)(nil)

// Name implements datasource.Source.
func (*Source) Name() string { return "OpenStack" }

// Doc implements datasource.Documented.
func (*Source) Doc() datasource.Doc {
	return datasource.Doc{
		Network:       true,
		Reads:         "metadata service at `metadata_urls` (default " + DefaultMetadataURL + "): `openstack/` version listing, newest known version's `meta_data.json`, `user_data`, `vendor_data.json`, `vendor_data2.json`, `network_data.json`, `files` contents; EC2-compatible `latest/meta-data/` (instance-id fallback)",
		NetworkConfig: "`network_data.json` handed on raw (`openstack_network_data`) for pkg/netconfig",
		Tests:         "golden trees served by httptest (dated version, latest only, EC2 instance-id fallback); absent, slow, 500 and non-OpenStack services; a refused, black-holed or non-OpenStack first URL with a later one answering, nothing answering (every URL tried within the budget); `max_wait`, `timeout`, `retries` honoured; files fetched in parallel; fuzzed meta_data.json, vendor data and network_data parsers; QEMU boot against `imds serve --cloud openstack` (TestOpenStackIMDS)",
	}
}

// defaultURLs are the base URLs when the configuration names none.
func (s *Source) defaultURLs() []string {
	if len(s.URLs) > 0 {
		return s.URLs
	}
	return []string{DefaultMetadataURL}
}

// Get implements datasource.Source.
func (s *Source) Get(ctx context.Context, env datasource.Env) (*datasource.Data, error) {
	if !env.NetworkUp {
		return nil, fmt.Errorf("openstack: %w", datasource.ErrNeedNetwork)
	}
	log := env.Logger(s.Name())
	c, err := env.IMDS(s.Name(), datasource.IMDSDefaults{
		BaseURLs: s.defaultURLs(), Budget: DefaultBudget, Timeout: DefaultTimeout, Retries: DefaultRetries,
	})
	if err != nil {
		return nil, fmt.Errorf("openstack: %w", err)
	}
	patient := env.Patient(s.Name(), c, DefaultRetries, DefaultReadRetries)
	ctx, cancel := c.WithBudget(ctx)
	defer cancel()
	start := time.Now()
	base, listing, err := c.Probe(ctx, ListingPath)
	if err != nil {
		if imds.Absent(err) { // no answer, or 404 for the listing, everywhere
			return nil, fmt.Errorf("openstack: no metadata service answered (%w): %w", datasource.ErrNotFound, err)
		}
		return nil, fmt.Errorf("openstack: %w", err)
	}
	rc := c.WithBaseURL(base)
	if patient {
		// The service is there: any failure is retried
		// DefaultReadRetries times, as cloud-init's reads are.
		rc.Retry = nil
	}
	in, err := readHTTP(ctx, rc, listing, log)
	if err != nil {
		return nil, fmt.Errorf("openstack: %s: %w", base, err)
	}
	d, err := Build(in)
	if err != nil {
		return nil, fmt.Errorf("openstack: %w", err)
	}
	d.Name, d.Platform, d.CloudName = "OpenStack", "openstack", "openstack"
	d.Subplatform = "metadata (" + base + ")"
	log.Info("found", "url", base, "version", in.Version, "duration", time.Since(start))
	return d, nil
}
