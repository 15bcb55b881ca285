package akamai

// Fetching: the token, the instance document, user-data.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/imds"
)

// tokenExpiry is TokenExpiry as a duration.
const tokenExpiry = 300 * time.Second

// errAnswered marks a failure after the token was given: the service is
// there.
var errAnswered = errors.New("metadata service answered")

// read races c's base URLs (imds.Race) in their order of preference: the
// next joins when the one before has failed, or after one request timeout
// without its answer (cloud-init tries them one after the other). At each,
// a token, then with it the instance document and user-data in parallel.
// A base that does not answer, or answers the token request with 404, is
// absent; none answering is ErrNotFound.
func read(ctx context.Context, c *imds.Client, p paths) (Input, error) {
	if c.Stagger == 0 {
		c.Stagger = cmp.Or(c.Timeout, imds.DefaultTimeout)
		if b := cmp.Or(c.Budget, imds.DefaultBudget); b > 0 {
			c.Stagger = min(c.Stagger, b/2)
		}
	}
	_, in, err := imds.Race(ctx, c, func(ctx context.Context, pc *imds.Client) (Input, error) {
		base := pc.BaseURLs[0]
		in, err := readBase(ctx, pc, p)
		if err != nil {
			return in, fmt.Errorf("%s: %w", base, err)
		}
		return in, nil
	})
	if err != nil {
		var re *imds.RaceError
		if errors.As(err, &re) && re.Every(absent) {
			return in, fmt.Errorf("no metadata service answered (%w): %w", datasource.ErrNotFound, err)
		}
		return in, err
	}
	return in, nil
}

// absent reports whether a base URL's failure means no service there: no
// answer at all, or a 404 for the token.
func absent(err error) bool {
	switch {
	case errors.Is(err, errAnswered):
		return false
	case errors.Is(err, imds.ErrTokenRequired):
		return imds.Status(err) == http.StatusNotFound
	}
	return imds.Absent(err)
}

// readBase reads from the one base URL c is pinned to.
func readBase(ctx context.Context, c *imds.Client, p paths) (Input, error) {
	in := Input{URL: imds.Join(c.BaseURLs[0], p.metadata)}
	tok := &imds.EC2Token{Client: c, TokenPath: p.token, TTLHeader: TokenExpiryHeader, TTL: tokenExpiry}
	c.Token, c.TokenHeader = tok.Token, TokenHeader
	if _, err := tok.Token(ctx); err != nil {
		return in, fmt.Errorf("token: %w", err)
	}
	var ierr, uerr error
	var wg sync.WaitGroup
	wg.Go(func() {
		in.Instance, ierr = c.Do(ctx, imds.Request{Path: p.metadata, Header: http.Header{"Accept": {"application/json"}}})
	})
	wg.Go(func() {
		in.UserData, uerr = c.Get(ctx, p.userdata)
		if errors.Is(uerr, imds.ErrNotFound) {
			in.UserData, uerr = nil, nil
		}
	})
	wg.Wait()
	if err := errors.Join(ierr, uerr); err != nil {
		return in, fmt.Errorf("%w: %w", errAnswered, err)
	}
	return in, nil
}
