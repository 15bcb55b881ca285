package ec2

// Fetching: the IMDSv2 token, API version probing, the meta-data crawl.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/imds"
)

// IMDSv2 headers.
const (
	TokenHeader    = imds.EC2TokenHeader
	TokenTTLHeader = imds.EC2TokenTTLHeader
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

// Session reads one EC2-style metadata service.
type Session struct {
	// Client is pinned to Base (imds.Client.WithBaseURL), with the token
	// hook when the service gave a token.
	Client *imds.Client
	// Base is the service's base URL.
	Base string
	// IMDSv2 is set when requests carry a session token.
	IMDSv2 bool
}

// Get fetches a path under Base.
func (s *Session) Get(ctx context.Context, path string) ([]byte, error) {
	return s.Client.Get(ctx, path)
}

// Connect starts a session with the service c is pinned to: it gives c an
// IMDSv2 token hook (imds.EC2Token, TTL TokenTTL) and fetches the first
// token. A 4xx answer to the token request means IMDSv1 only: that is an
// error on AWS (cloud-init fails fast on a 403: the endpoint is disabled)
// and a session without token elsewhere.
func Connect(ctx context.Context, c *imds.Client, aws bool) (*Session, error) {
	tok := &imds.EC2Token{Client: c, AllowV1: !aws}
	c.Token = tok.Token
	t, err := tok.Token(ctx)
	if err != nil {
		if imds.Status(err) == http.StatusForbidden {
			return nil, fmt.Errorf("IMDSv2 token refused, the IMDS HTTP endpoint is disabled: %w", err)
		}
		return nil, fmt.Errorf("IMDSv2 token: %w", err)
	}
	return &Session{Client: c, Base: c.BaseURLs[0], IMDSv2: t != ""}, nil
}

// ProbeVersion returns the newest API version whose meta-data/instance-id
// answers 200, trying them in order. When none does, the error wraps every
// attempt's.
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
	return "", fmt.Errorf("no API version answers meta-data/instance-id: %w", errors.Join(errs...))
}

// Crawl materialises the tree under path (a directory, ending in "/") as
// cloud-init's MetadataMaterializer does. Each level of the tree is fetched
// at once (imds.Client.GetMany): every leaf and sub-directory listing of
// the level in parallel. 404s under a `tags/` directory are skipped
// (cloud-init's skip_404_tag_errors); any other failure fails the crawl.
func (s *Session) Crawl(ctx context.Context, path string) (map[string]any, error) {
	root := strings.TrimSuffix(path, "/") + "/"
	b, err := s.Get(ctx, root)
	if err != nil {
		return nil, err
	}
	type dir struct {
		path    string
		listing []byte
		m       map[string]any
	}
	type item struct {
		m      map[string]any
		name   string
		path   string
		isDir  bool
		inTags bool
	}
	out := map[string]any{}
	level := []dir{{path: root, listing: b, m: out}}
	n := 0
	for depth := 1; len(level) > 0; depth++ {
		var items []item
		var paths []string
		for _, d := range level {
			for _, e := range ParseListing(d.listing) {
				if n++; n > maxEntries {
					return nil, fmt.Errorf("%s: more than %d entries", s.url(root), maxEntries)
				}
				it := item{m: d.m, name: e.Name, path: d.path + e.Resource, inTags: strings.Contains(d.path, "/tags/")}
				if e.Dir {
					if depth > maxDepth {
						return nil, fmt.Errorf("%s: deeper than %d levels", s.url(d.path+e.Name+"/"), maxDepth)
					}
					it.path, it.isDir = d.path+e.Name+"/", true
				}
				items = append(items, it)
				paths = append(paths, it.path)
			}
		}
		if len(items) == 0 {
			break
		}
		res := s.Client.GetMany(ctx, paths)
		level = nil
		for _, it := range items {
			r := res[it.path]
			switch {
			case r.Err != nil && !it.isDir && it.inTags && errors.Is(r.Err, imds.ErrNotFound):
				it.m[it.name] = "(skipped)"
			case r.Err != nil:
				return nil, r.Err
			case it.isDir:
				sub := map[string]any{}
				it.m[it.name] = sub
				level = append(level, dir{path: it.path, listing: r.Data, m: sub})
			default:
				it.m[it.name] = DecodeLeaf(r.Data)
			}
		}
	}
	return out, nil
}

func (s *Session) url(path string) string {
	return imds.Join(s.Base, path)
}

// UserData fetches <ver>/user-data; a 404 means none (nil, nil).
func (s *Session) UserData(ctx context.Context, ver string) ([]byte, error) {
	b, err := s.Get(ctx, ver+"/user-data")
	if errors.Is(err, imds.ErrNotFound) {
		return nil, nil
	}
	if b == nil && err == nil {
		b = []byte{}
	}
	return b, err
}
