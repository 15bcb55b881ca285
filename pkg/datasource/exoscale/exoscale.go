// Package exoscale is cloud-init's Exoscale datasource: an EC2-style
// metadata tree plus the CloudStack-style password server.
//
// Contract (DataSourceExoscale):
//   - Detection is pkg/identify's (DMI product_name Exoscale*); Get only
//     reads.
//   - Needs the network: ErrNeedNetwork while Env.NetworkUp is false.
//   - The meta-data tree under <metadata_url>/<api_version>/meta-data/
//     (defaults DefaultMetadataURL, APIVersion), crawled as cloud-init's
//     ec2 helper does (each level in parallel), and <metadata_url>/<api_version>/user-data (404:
//     none). A service that does not answer, or answers 404 for the
//     tree, is ErrNotFound; any other failure is an error naming the URL.
//     The tree must give an instance-id.
//   - The password server at the metadata host on `password_server_port`
//     (default DefaultPasswordPort), <api_version>/: GET with
//     DomU_Request: send_my_password; a password other than "" and
//     "saved_password" is acknowledged with DomU_Request: saved_password
//     and becomes configuration (password, ssh_pwauth: true,
//     chpasswd.expire: false). A password server that fails is logged and
//     skipped (cloud-init would fail the datasource).
//   - Data: instance-id, local-hostname, public-keys, availability-zone.
//     No network config (cloud-init falls back to DHCP on the first NIC).
//   - Several `metadata_urls` are raced, the first to answer winning.
//     `max_wait`, `timeout` and `retries` configure the budget, the
//     per-request timeout and the retries (datasource.Env.IMDS); the whole
//     Get is bounded by `max_wait`, else Env.Budget, else DefaultBudget.
package exoscale

import (
	"cmp"
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/internal/pwserver"
)

// cloud-init's metadata_url, api_version and password_server_port.
const (
	DefaultMetadataURL  = "http://169.254.169.254"
	APIVersion          = "1.0"
	DefaultPasswordPort = 8080
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

// Password server protocol.
const (
	RequestHeader = pwserver.RequestHeader
	SendPassword  = pwserver.SendPassword
	SavedPassword = pwserver.SavedPassword
)

// Source is the Exoscale datasource. The zero value uses the defaults.
type Source struct {
	// URL overrides DefaultMetadataURL (configuration still wins).
	URL string
	// PasswordPort overrides DefaultPasswordPort (configuration still
	// wins).
	PasswordPort int
}

var _ datasource.Source = (*Source)(nil)

// Name implements datasource.Source.
func (*Source) Name() string { return "Exoscale" }

// Doc implements datasource.Documented.
func (*Source) Doc() datasource.Doc {
	return datasource.Doc{
		Network:       true,
		Reads:         "`metadata_url` (default " + DefaultMetadataURL + ") `/" + APIVersion + "/meta-data/` tree and `/" + APIVersion + "/user-data`; password server on `password_server_port` (default " + strconv.Itoa(DefaultPasswordPort) + ") with `DomU_Request: send_my_password`, acknowledged with `saved_password`",
		NetworkConfig: "none (fallback: DHCP on the first NIC)",
		Tests:         "golden trees served by httptest (new password acknowledged, password already saved, no user-data); password server on the test port; absent, slow, 404 and 500 services, failing password server; fuzzed password reply",
	}
}

// Get implements datasource.Source.
func (s *Source) Get(ctx context.Context, env datasource.Env) (*datasource.Data, error) {
	ctx, cancel, c, err := env.Service(ctx, s.Name(), "exoscale", datasource.IMDSDefaults{
		BaseURLs: []string{cmp.Or(s.URL, DefaultMetadataURL)}, Budget: DefaultBudget, Timeout: DefaultTimeout, Retries: DefaultRetries,
	})
	defer cancel()
	if err != nil {
		return nil, err
	}
	log := env.Logger(s.Name())
	start := time.Now()
	base, in, err := read(ctx, c)
	if err != nil {
		return nil, fmt.Errorf("exoscale: %w", err)
	}
	port := pwserver.Port(env.SourceConfig(s.Name()), s.PasswordPort, DefaultPasswordPort)
	pwURL, err := PasswordURL(base, port)
	if err == nil {
		in.Password, err = pwserver.Password(ctx, c, pwURL)
	}
	if err != nil {
		log.Warn("password server failed; no password set", "error", err)
	}
	d, err := Build(in)
	if err != nil {
		return nil, fmt.Errorf("exoscale: %s: %w", in.URL, err)
	}
	log.Info("found", "url", base, "duration", time.Since(start))
	return d, nil
}
