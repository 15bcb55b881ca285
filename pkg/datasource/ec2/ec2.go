// Package ec2 is cloud-init's Ec2 datasource: the EC2 instance metadata
// service (IMDS) on AWS and EC2-compatible clouds.
//
// Contract (DataSourceEc2 + helpers/ec2.py):
//   - Needs the network: ErrNeedNetwork while Env.NetworkUp is false.
//   - The cloud comes from DMI (Platform): "aws", "brightbox", "zstack",
//     "e24cloud", "outscale", else "unknown". With `datasource: {Ec2:
//     {strict_id: true}}` an unknown platform is ErrNotFound without any
//     request (ds-identify writes that setting).
//   - The base URLs (`metadata_urls`, default DefaultMetadataURL,
//     DefaultMetadataURLv6) are raced as cloud-init's wait_for_url does with
//     connect_synchronously=False (imds.Race: staggered, first good answer
//     wins), each with its own session: PUT latest/api/token with
//     X-aws-ec2-metadata-token-ttl-seconds: 21600, then
//     X-aws-ec2-metadata-token on every GET. A 4xx to the PUT means IMDSv1:
//     fatal on AWS, plain GETs elsewhere. Then the API version: the first
//     of 2021-03-23, 2018-09-24, 2016-09-02, 2009-04-04 whose
//     meta-data/instance-id answers 200. A URL that does not answer never
//     holds up the others; none answering at all is ErrNotFound, any answer
//     but the right one an error.
//   - `max_wait`, `timeout` and `retries` configure the budget, the
//     per-request timeout and the retries (datasource.Env.IMDS).
//   - Reads <ver>/meta-data/ (crawled: "x/" lines are directories,
//     public-keys' "0=name" lines point at 0/openssh-key), <ver>/user-data
//     (404: none; strict base64 is decoded, as cloud-init's maybe_b64decode)
//     and on AWS <ver>/dynamic/instance-identity/ (document: region,
//     availabilityZone, accountId). Each level of a crawl is fetched in
//     parallel.
//   - Data: platform "ec2", cloud_name the platform; region and zone from
//     the identity document on AWS, placement/availability-zone elsewhere;
//     a missing region is the zone minus its last character on every
//     platform, as cloud-init derives it; network/interfaces/macs/ kept
//     under NetworkKeyEc2 for pkg/netconfig.
//   - The whole Get is bounded by `max_wait`, else Env.Budget, else
//     DefaultBudget; under the boot's Env.Policy (the initramfs) by the
//     caller's context instead (the search's deadline), `max_wait` being
//     the detection window and the Policy's read timeout replacing
//     DefaultTimeout (datasource.Env.IMDS).
package ec2

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/imds"
)

// Where cloud-init looks for the IMDS, in this order, unless configured.
const (
	DefaultMetadataURL   = "http://169.254.169.254"
	DefaultMetadataURLv6 = "http://[fd00:ec2::254]"
)

// Defaults when neither the configuration (`max_wait`, `timeout`,
// `retries`) nor Env.Budget says otherwise: DefaultBudget bounds one Get,
// DefaultTimeout each request, and a request failing for want of an answer
// (refused, timed out) is retried DefaultRetries times, and one the
// service answered (5xx) or any failure once it has answered
// DefaultReadRetries times (datasource.Env.Patient). DefaultReadRetries is
// cloud-init's, from helpers/ec2.py's crawl (get_instance_metadata, _userdata,
// _identity: retries=5): a boot reads ~30 paths, and with 3 attempts each
// a service failing 10% of requests leaves ~3% of a fleet unprovisioned
// (pkg/imdsserve's TestFleetEC2); with 6 it is ~3 in 100,000. An absent
// service is still given up on after DefaultRetries.
const (
	DefaultBudget      = 20 * time.Second
	DefaultTimeout     = 2 * time.Second
	DefaultRetries     = 2
	DefaultReadRetries = 5
)

// Source is the Ec2 datasource. The zero value uses the defaults.
type Source struct {
	// URLs overrides DefaultMetadataURLs (configuration still wins).
	URLs []string
}

var _ datasource.Source = (*Source)(nil)

// Name implements datasource.Source.
func (*Source) Name() string { return "Ec2" }

// Doc implements datasource.Documented.
func (*Source) Doc() datasource.Doc {
	return datasource.Doc{
		Network:       true,
		Reads:         "IMDS at `metadata_urls` (default " + DefaultMetadataURL + ", " + DefaultMetadataURLv6 + "): IMDSv2 token (IMDSv1 fallback off AWS), API version probe 2021-03-23 → 2009-04-04, `meta-data/` crawl, `user-data`, AWS `dynamic/instance-identity/document`",
		NetworkConfig: "`meta-data/network/interfaces/macs/` handed on raw (`ec2_macs`) for pkg/netconfig",
		Tests:         "golden trees served by httptest (AWS IMDSv2, IMDSv1-only EC2-like, aws-china, 404 user-data); token and header checks; absent, slow and 500 services; a refused or black-holed first URL with the second answering, nothing answering (both URLs tried within the budget); `max_wait`, `timeout`, `retries` honoured; fuzzed listing and leaf parsers; QEMU boot against `imds serve --cloud ec2` (TestEc2IMDS, TestUnreachableIMDS); a user-data redirect to another host refused, in a QEMU boot too (TestEc2RedirectRefused, [security](security.md))",
	}
}

// defaultURLs are the base URLs when the configuration names none.
func (s *Source) defaultURLs() []string {
	if len(s.URLs) > 0 {
		return s.URLs
	}
	return []string{DefaultMetadataURL, DefaultMetadataURLv6}
}

func strictID(cfg map[string]any) bool {
	switch v := cfg["strict_id"].(type) {
	case bool:
		return v
	case string:
		return strings.EqualFold(v, "true")
	}
	return false
}

// Get implements datasource.Source.
func (s *Source) Get(ctx context.Context, env datasource.Env) (*datasource.Data, error) {
	cloud := Platform(env.DMI)
	if cloud == CloudUnknown && strictID(env.SourceConfig(s.Name())) {
		return nil, fmt.Errorf("ec2: DMI names no EC2 platform and strict_id is true: %w", datasource.ErrNotFound)
	}
	if !env.NetworkUp {
		return nil, fmt.Errorf("ec2: %w", datasource.ErrNeedNetwork)
	}
	log := env.Logger(s.Name())
	c, err := env.IMDS(s.Name(), datasource.IMDSDefaults{
		BaseURLs: s.defaultURLs(), Budget: DefaultBudget, Timeout: DefaultTimeout, Retries: DefaultRetries,
	})
	if err != nil {
		return nil, fmt.Errorf("ec2: %w", err)
	}
	patient := env.Patient(s.Name(), c, DefaultRetries, DefaultReadRetries)
	ctx, cancel := c.WithBudget(ctx)
	defer cancel()
	start := time.Now()
	type found struct {
		sess *Session
		ver  string
	}
	// The bases race (cloud-init's connect_synchronously=False): each gets
	// its own token, and the first to answer a version probe wins.
	_, f, err := imds.Race(ctx, c, func(ctx context.Context, pc *imds.Client) (found, error) {
		log.Debug("probing", "url", pc.BaseURLs[0])
		sess, err := Connect(ctx, pc, cloud == CloudAWS)
		if err != nil {
			return found{}, err
		}
		ver, err := sess.ProbeVersion(ctx)
		return found{sess, ver}, err
	})
	if err != nil {
		if imds.Status(err) == 0 {
			return nil, fmt.Errorf("ec2: no metadata service answered (%w): %w", datasource.ErrNotFound, err)
		}
		return nil, fmt.Errorf("ec2: %w", err)
	}
	if patient {
		// The service is there: any failure is retried
		// DefaultReadRetries times, as cloud-init's crawl does.
		f.sess.Client.Retry = nil
	}
	d, err := s.read(ctx, f.sess, f.ver, cloud)
	if err != nil {
		log.Warn("reading failed", "url", f.sess.Base, "error", err)
		return nil, fmt.Errorf("ec2: reading %s (API %s): %w", f.sess.Base, f.ver, err)
	}
	log.Info("found", "url", f.sess.Base, "api", f.ver, "imdsv2", f.sess.IMDSv2, "duration", time.Since(start))
	return d, nil
}

func (s *Source) read(ctx context.Context, sess *Session, ver, cloud string) (*datasource.Data, error) {
	ud, err := sess.UserData(ctx, ver)
	if err != nil {
		return nil, err
	}
	md, err := sess.Crawl(ctx, ver+"/meta-data/")
	if err != nil {
		return nil, err
	}
	in := Input{Base: sess.Base, APIVersion: ver, CloudName: cloud, MetaData: md, UserData: ud}
	if cloud == CloudAWS {
		if in.Identity, err = sess.Crawl(ctx, ver+"/dynamic/instance-identity/"); err != nil {
			return nil, err
		}
	}
	return Build(in), nil
}
