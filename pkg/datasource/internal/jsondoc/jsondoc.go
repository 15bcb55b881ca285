// Package jsondoc is the metadata source that is one JSON document at one
// metadata URL (DigitalOcean, NWCS, UpCloud), and the parsing helpers
// every JSON metadata document shares (Object, Scalar, Blob).
//
// Contract of Source.Get, the same for every cloud built on it:
//   - Needs the network: ErrNeedNetwork while Env.NetworkUp is false.
//   - GET the configuration's `metadata_url` (or `metadata_urls`, raced,
//     the first to answer winning), default Source.URL. A service that
//     does not answer, or answers 404, is ErrNotFound; any other failure
//     (5xx, not JSON, Build refusing the document) is an error naming the
//     URL.
//   - `max_wait`, `timeout` and `retries` configure the budget, the
//     per-request timeout and the retries (datasource.Env.IMDS); the whole
//     Get is bounded by `max_wait`, else Env.Budget, else Source.Budget.
//   - Errors are prefixed with Source.Tag; one "found" line is logged with
//     the URL and the duration.
//
// A cloud package keeps its Name, Doc, constants and pure Build, and its
// Get is one call: jsondoc.Source{...}.Get(ctx, env).
package jsondoc

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"time"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/imds"
	"github.com/cloudroot/cloudroot/pkg/internal/pyval"
)

// Source is a metadata service answering one JSON document.
type Source struct {
	// Name is the datasource's name: its configuration key and log name.
	Name string
	// Tag prefixes errors ("digitalocean").
	Tag string
	// URL is the document's URL when the configuration names none.
	URL string
	// Budget, Timeout and Retries are the defaults of one Get, of each
	// request, and of the retries of a request that got no answer.
	Budget, Timeout time.Duration
	Retries         int
	// Build turns the document fetched from url into Data (pure; env for
	// what the machine says, as the DMI product UUID).
	Build func(url string, doc []byte, env datasource.Env) (*datasource.Data, error)
}

// Get fetches and builds the document (the package comment's contract).
func (s Source) Get(ctx context.Context, env datasource.Env) (*datasource.Data, error) {
	ctx, cancel, c, err := env.Service(ctx, s.Name, s.Tag, datasource.IMDSDefaults{
		BaseURLs: []string{s.URL}, Budget: s.Budget, Timeout: s.Timeout, Retries: s.Retries,
	})
	defer cancel()
	if err != nil {
		return nil, err
	}
	log := env.Logger(s.Name)
	start := time.Now()
	url, b, err := read(ctx, c)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.Tag, err)
	}
	d, err := s.Build(url, b, env)
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", s.Tag, url, err)
	}
	log.Info("found", "url", url, "duration", time.Since(start))
	return d, nil
}

// read fetches the document: c's URLs are raced for it (imds.Client.Probe)
// and the one that answered is returned. A service that does not answer
// (refused, timed out) or answers 404 is ErrNotFound.
func read(ctx context.Context, c *imds.Client) (string, []byte, error) {
	u, b, err := c.Probe(ctx, "")
	if err == nil {
		return u, b, nil
	}
	if imds.Absent(err) {
		return "", nil, fmt.Errorf("no metadata service (%w): %w", datasource.ErrNotFound, err)
	}
	return "", nil, err
}

// Object decodes a metadata document that must be a JSON object.
func Object(b []byte) (map[string]any, error) {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("expected a JSON object, got %T", v)
	}
	return m, nil
}

// Scalar is a scalar as text (numbers without an exponent), "" for null,
// objects and lists: pyval.ScalarStr, the one such reading.
func Scalar(v any) string { return pyval.ScalarStr(v) }

// Blob is a user-data or vendor-data value: a string as is, null or "" as
// none; anything else is kept as its JSON text (cloud-init hands such a
// value on too).
func Blob(v any) ([]byte, error) {
	switch t := v.(type) {
	case nil:
		return nil, nil
	case string:
		if t == "" {
			return nil, nil
		}
		return []byte(t), nil
	}
	return json.Marshal(v)
}

// Full sets d's user-data and vendor-data from md's user_data and
// vendor_data (Blob), and ds.metadata_full to md without them, which it
// returns (DigitalOcean and UpCloud, as cloud-init's metadata_full).
func Full(d *datasource.Data, md map[string]any) (map[string]any, error) {
	var err error
	if d.UserData, err = Blob(md["user_data"]); err != nil {
		return nil, fmt.Errorf("user_data: %w", err)
	}
	if d.VendorData, err = Blob(md["vendor_data"]); err != nil {
		return nil, fmt.Errorf("vendor_data: %w", err)
	}
	full := maps.Clone(md)
	delete(full, "user_data")
	delete(full, "vendor_data")
	d.DS = map[string]any{"metadata_full": full}
	return full, nil
}
