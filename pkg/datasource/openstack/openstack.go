// Package openstack is cloud-init's OpenStack datasource: the Nova metadata
// service over HTTP. Its parser (parse.go) is shared with configdrive,
// which reads the same tree from a disk.
//
// Contract (DataSourceOpenStack + helpers/openstack.py):
//   - Needs the network: ErrNeedNetwork while Env.NetworkUp is false.
//   - Each base URL (`metadata_urls`, default DefaultMetadataURL) in turn:
//     GET openstack (the version listing). No answer or 404 there means no
//     OpenStack service at that URL; none anywhere is ErrNotFound.
//   - The version read is the newest cloud-init knows that is listed, else
//     "latest" (PickVersion). From it: meta_data.json (required), user_data,
//     vendor_data.json, vendor_data2.json, network_data.json (optional: 404
//     or unreadable means absent), the `files` and `network_config` contents
//     under openstack/, and the EC2-compatible latest/meta-data/ tree
//     (best effort; its instance-id stands in when meta_data.json has no
//     uuid).
//   - Data as Build makes it; platform and cloud_name "openstack",
//     subplatform "metadata (<url>)".
//   - The whole Get is bounded by Env.Budget (default DefaultBudget).
package openstack

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/internal/fetch"
)

// DefaultMetadataURL is where cloud-init looks for the Nova metadata
// service (it also tries fe80::a9fe:a9fe on each link, which needs an
// interface name: configure it in metadata_urls).
const DefaultMetadataURL = "http://169.254.169.254"

// DefaultBudget bounds one Get when Env.Budget is 0.
const DefaultBudget = 20 * time.Second

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
		Tests:         "golden trees served by httptest (dated version, latest only, EC2 instance-id fallback); absent, slow, 500 and non-OpenStack services; fuzzed meta_data.json, vendor data and network_data parsers",
	}
}

func (s *Source) urls(env datasource.Env) []string {
	if u := env.MetadataURLs(s.Name()); len(u) > 0 {
		return u
	}
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
	ctx, cancel := env.WithBudget(ctx, DefaultBudget)
	defer cancel()
	start := time.Now()
	c := &fetch.Client{HTTP: env.HTTP}
	var errs []error
	for _, base := range s.urls(env) {
		in, err := readHTTP(ctx, c, base, log)
		if err != nil {
			errs = append(errs, fmt.Errorf("openstack: %s: %w", base, err))
			if errors.Is(err, errAbsent) {
				continue
			}
			return nil, errors.Join(errs...)
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
	return nil, fmt.Errorf("openstack: no metadata service answered (%w): %w", datasource.ErrNotFound, errors.Join(errs...))
}
