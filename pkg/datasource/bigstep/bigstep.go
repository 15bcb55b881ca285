// Package bigstep is cloud-init's Bigstep datasource: a JSON document at
// a URL the image was given in its seed directory.
//
// Contract (DataSourceBigstep):
//   - Detection is pkg/identify's (the seed file below); Get only reads.
//   - The URL is the text of SeedPath in the target root (Env.Root),
//     trimmed. No root or no file is ErrNotFound, before the network is
//     looked at; an empty file or a URL that is not http(s) is an error.
//   - Needs the network: ErrNeedNetwork while Env.NetworkUp is false.
//   - GET the URL: one JSON object {metadata, vendordata_raw,
//     userdata_raw}. A service that does not answer, or answers 404, is
//     ErrNotFound; any other failure (5xx, not JSON, metadata not an
//     object or without instance-id) is an error naming the URL.
//   - Data: metadata as the meta-data (instance-id, local-hostname,
//     public-keys); userdata_raw and vendordata_raw as given (null: none;
//     a non-string value is kept as its JSON text). No network config.
//   - `max_wait`, `timeout` and `retries` configure the budget, the
//     per-request timeout and the retries (datasource.Env.IMDS).
//   - The whole Get is bounded by `max_wait`, else Env.Budget, else
//     DefaultBudget.
package bigstep

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"strings"
	"time"

	"github.com/cloudroot/cloudroot/pkg/datasource"
)

// SeedPath is where cloud-init reads the metadata URL from, relative to
// the target root (<cloud_dir>/data/seed/bigstep/url). Bigstep has no
// fixed metadata address.
const SeedPath = "var/lib/cloud/data/seed/bigstep/url"

// Defaults when neither the configuration (`max_wait`, `timeout`,
// `retries`) nor Env.Budget says otherwise: DefaultBudget bounds one Get,
// DefaultTimeout each request, and a request failing for want of an answer
// is retried DefaultRetries times.
const (
	DefaultBudget  = 10 * time.Second
	DefaultTimeout = 2 * time.Second
	DefaultRetries = 2
)

// Source is the Bigstep datasource. The zero value uses the defaults.
type Source struct{}

var _ datasource.Source = (*Source)(nil)

// Name implements datasource.Source.
func (*Source) Name() string { return "Bigstep" }

// Doc implements datasource.Documented.
func (*Source) Doc() datasource.Doc {
	return datasource.Doc{
		Network:       true,
		Reads:         "the URL in the target's `/" + SeedPath + "`, then that URL: JSON `metadata`, `userdata_raw`, `vendordata_raw`",
		NetworkConfig: "none (fallback: DHCP on the first NIC)",
		Tests:         "golden documents served by httptest at the URL of an in-memory seed file (full, minimal with null data); no root, no seed file, bad seed URL; absent, slow, 404, 500 and non-JSON services; fuzzed document parser",
	}
}

// seedURL reads the URL from the seed file. No root or no file is
// ErrNotFound.
func seedURL(root fs.FS) (string, error) {
	if root == nil {
		return "", fmt.Errorf("no target root (%w)", datasource.ErrNotFound)
	}
	b, err := fs.ReadFile(root, SeedPath)
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("no %s (%w)", SeedPath, datasource.ErrNotFound)
	}
	if err != nil {
		return "", err
	}
	s := strings.TrimSpace(string(b))
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("%s: %q is not an http(s) URL", SeedPath, s)
	}
	return s, nil
}

// Get implements datasource.Source.
func (s *Source) Get(ctx context.Context, env datasource.Env) (*datasource.Data, error) {
	u, err := seedURL(env.Root)
	if err != nil {
		return nil, fmt.Errorf("bigstep: %w", err)
	}
	if !env.NetworkUp {
		return nil, fmt.Errorf("bigstep: %w", datasource.ErrNeedNetwork)
	}
	log := env.Logger(s.Name())
	c, err := env.IMDS(s.Name(), datasource.IMDSDefaults{
		BaseURLs: []string{u}, Budget: DefaultBudget, Timeout: DefaultTimeout, Retries: DefaultRetries,
	})
	if err != nil {
		return nil, fmt.Errorf("bigstep: %w", err)
	}
	c.BaseURLs = []string{u} // the seed names the one URL; metadata_urls does not apply
	ctx, cancel := c.WithBudget(ctx)
	defer cancel()
	start := time.Now()
	b, err := read(ctx, c)
	if err != nil {
		return nil, fmt.Errorf("bigstep: %w", err)
	}
	d, err := Build(u, b)
	if err != nil {
		return nil, fmt.Errorf("bigstep: %s: %w", u, err)
	}
	log.Info("found", "url", u, "duration", time.Since(start))
	return d, nil
}
