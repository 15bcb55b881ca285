package ec2

// Fetching: the IMDSv2 token, API version probing, the meta-data crawl.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/datasource/internal/fetch"
)

// IMDSv2 headers.
const (
	TokenHeader    = "X-aws-ec2-metadata-token"
	TokenTTLHeader = "X-aws-ec2-metadata-token-ttl-seconds"
	// TokenTTL is the lifetime cloud-init asks for, in seconds.
	TokenTTL = "21600"
)

// APIVersions are the versions probed, newest first; the last is the
// minimum every EC2-compatible service serves.
func APIVersions() []string {
	return []string{"2021-03-23", "2018-09-24", "2016-09-02", "2009-04-04"}
}

// Crawl limits: a hostile or broken service cannot make a crawl endless.
const (
	maxDepth   = 12
	maxEntries = 4096
)

// Session talks to one metadata service, with a token when it has one.
type Session struct {
	Client *fetch.Client
	// Base is the service's base URL.
	Base string
	// Token is the IMDSv2 token ("" for IMDSv1).
	Token string
}

func (s *Session) header() http.Header {
	if s.Token == "" {
		return nil
	}
	return http.Header{TokenHeader: {s.Token}}
}

// Get fetches a path under Base.
func (s *Session) Get(ctx context.Context, path string) ([]byte, error) {
	return s.Client.Do(ctx, http.MethodGet, fetch.Join(s.Base, path), s.header())
}

// errAbsent marks a service that did not answer at all (connection refused,
// timeouts): the next URL may.
var errAbsent = errors.New("metadata service not answering")

// Connect gets an IMDSv2 token from base. A 4xx answer to the token request
// means IMDSv1 only: that is an error on AWS (cloud-init fails fast on a 403:
// the endpoint is disabled) and a session without token elsewhere. A service
// that does not answer gives an error wrapping errAbsent.
func Connect(ctx context.Context, c *fetch.Client, base string, aws bool) (*Session, error) {
	url := fetch.Join(base, "latest/api/token")
	tok, err := c.Do(ctx, http.MethodPut, url, http.Header{TokenTTLHeader: {TokenTTL}})
	if err == nil && len(strings.TrimSpace(string(tok))) > 0 {
		return &Session{Client: c, Base: base, Token: strings.TrimSpace(string(tok))}, nil
	}
	code := fetch.Status(err)
	switch {
	case err == nil:
		err = fmt.Errorf("PUT %s: empty token", url)
	case code == 0:
		return nil, fmt.Errorf("%w: %w", errAbsent, err)
	case code >= 400 && code < 500 && !aws:
		return &Session{Client: c, Base: base}, nil
	}
	if code == http.StatusForbidden {
		return nil, fmt.Errorf("IMDSv2 token refused, the IMDS HTTP endpoint is disabled: %w", err)
	}
	return nil, fmt.Errorf("IMDSv2 token: %w", err)
}

// ProbeVersion returns the newest API version whose meta-data/instance-id
// answers 200. When none does, the error wraps every attempt's.
func (s *Session) ProbeVersion(ctx context.Context) (string, error) {
	var errs []error
	for _, v := range APIVersions() {
		_, err := s.Get(ctx, v+"/meta-data/instance-id")
		if err == nil {
			return v, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	err := errors.Join(errs...)
	if allAbsent(errs) {
		err = fmt.Errorf("%w: %w", errAbsent, err)
	}
	return "", fmt.Errorf("no API version answers meta-data/instance-id: %w", err)
}

func allAbsent(errs []error) bool {
	for _, e := range errs {
		if fetch.Status(e) != 0 {
			return false
		}
	}
	return len(errs) > 0
}

// Crawl materialises the tree under path (a directory, ending in "/") as
// cloud-init's MetadataMaterializer does. 404s under a `tags/` directory
// are skipped (cloud-init's skip_404_tag_errors); any other failure fails
// the crawl.
func (s *Session) Crawl(ctx context.Context, path string) (map[string]any, error) {
	n := 0
	return s.crawl(ctx, strings.TrimSuffix(path, "/")+"/", 0, &n)
}

func (s *Session) crawl(ctx context.Context, dir string, depth int, n *int) (map[string]any, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("%s: deeper than %d levels", fetch.Join(s.Base, dir), maxDepth)
	}
	b, err := s.Get(ctx, dir)
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	for _, e := range ParseListing(b) {
		if *n++; *n > maxEntries {
			return nil, fmt.Errorf("%s: more than %d entries", fetch.Join(s.Base, dir), maxEntries)
		}
		if e.Dir {
			sub, err := s.crawl(ctx, dir+e.Name+"/", depth+1, n)
			if err != nil {
				return nil, err
			}
			out[e.Name] = sub
			continue
		}
		leaf, err := s.Get(ctx, dir+e.Resource)
		if err != nil {
			if fetch.Status(err) == http.StatusNotFound && strings.Contains(dir, "/tags/") {
				out[e.Name] = "(skipped)"
				continue
			}
			return nil, err
		}
		out[e.Name] = DecodeLeaf(leaf)
	}
	return out, nil
}

// UserData fetches <ver>/user-data; a 404 means none (nil, nil).
func (s *Session) UserData(ctx context.Context, ver string) ([]byte, error) {
	b, err := s.Get(ctx, ver+"/user-data")
	if fetch.Status(err) == http.StatusNotFound {
		return nil, nil
	}
	if b == nil && err == nil {
		b = []byte{}
	}
	return b, err
}
