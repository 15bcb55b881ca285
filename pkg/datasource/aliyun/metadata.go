package aliyun

// Fetching: the token, the meta-data tree, user-data and vendor-data.

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/ec2"
	"github.com/cloudroot/cloudroot/pkg/datasource/internal/fetch"
)

// connect asks base for a token and returns a session sending it (as a
// header of the session's client: ec2.Session's own token header is
// AWS's). A 4xx answer means normal mode: a session without token.
func connect(ctx context.Context, hc *http.Client, base string) (*ec2.Session, bool, error) {
	c := &fetch.Client{HTTP: hc}
	u := fetch.Join(base, TokenPath)
	tok, err := c.Do(ctx, http.MethodPut, u, http.Header{TokenTTLHeader: {TokenTTL}})
	if t := strings.TrimSpace(string(tok)); err == nil && t != "" {
		tc := &fetch.Client{HTTP: hc, Header: http.Header{TokenHeader: {t}}}
		return &ec2.Session{Client: tc, Base: base}, true, nil
	}
	code := fetch.Status(err)
	switch {
	case err == nil:
		return nil, false, fmt.Errorf("PUT %s: empty token", u)
	case fetch.Absent(err):
		return nil, false, fmt.Errorf("no metadata service (%w): %w", datasource.ErrNotFound, err)
	case code >= 400 && code < 500:
		return &ec2.Session{Client: c, Base: base}, false, nil
	}
	return nil, false, fmt.Errorf("token: %w", err)
}

// read fetches everything from base.
func read(ctx context.Context, hc *http.Client, base string) (Input, error) {
	in := Input{URL: fetch.Join(base, APIVersion, "meta-data/")}
	s, tok, err := connect(ctx, hc, base)
	if err != nil {
		return in, err
	}
	in.Token = tok
	in.MetaData, err = s.Crawl(ctx, APIVersion+"/meta-data/")
	if err != nil {
		if fetch.Absent(err) || fetch.Status(err) == http.StatusNotFound {
			return in, fmt.Errorf("no metadata service (%w): %w", datasource.ErrNotFound, err)
		}
		return in, err
	}
	if in.UserData, err = s.UserData(ctx, APIVersion); err != nil {
		return in, err
	}
	vd, err := s.Get(ctx, APIVersion+"/vendor-data")
	switch {
	case fetch.Status(err) == http.StatusNotFound:
	case err != nil:
		return in, err
	default:
		in.VendorData = vd
	}
	return in, nil
}
