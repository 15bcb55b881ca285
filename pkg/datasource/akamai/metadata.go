package akamai

// Fetching: the token, the instance document, user-data.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/datasource/internal/fetch"
)

// errAbsent: nothing at this base URL answers like the metadata service.
var errAbsent = errors.New("no Akamai metadata service")

// read gets a token from base and, with it, the instance document and
// user-data.
func read(ctx context.Context, c *fetch.Client, base string, p paths) (Input, error) {
	in := Input{URL: fetch.Join(base, p.metadata)}
	tokURL := fetch.Join(base, p.token)
	tok, err := c.Do(ctx, http.MethodPut, tokURL, http.Header{TokenExpiryHeader: {TokenExpiry}})
	if err != nil {
		if fetch.Absent(err) || fetch.Status(err) == http.StatusNotFound {
			return in, fmt.Errorf("%w: %w", errAbsent, err)
		}
		return in, fmt.Errorf("token: %w", err)
	}
	token := strings.TrimSpace(string(tok))
	if token == "" {
		return in, fmt.Errorf("PUT %s: empty token", tokURL)
	}
	if in.Instance, err = c.Do(ctx, http.MethodGet, in.URL, http.Header{TokenHeader: {token}, "Accept": {"application/json"}}); err != nil {
		return in, err
	}
	in.UserData, err = c.Do(ctx, http.MethodGet, fetch.Join(base, p.userdata), http.Header{TokenHeader: {token}})
	if fetch.Status(err) == http.StatusNotFound {
		in.UserData, err = nil, nil
	}
	return in, err
}
