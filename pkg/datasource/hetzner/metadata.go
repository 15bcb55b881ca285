package hetzner

// Fetching metadata, private networks and user-data.

import (
	"context"
	"fmt"
	"net/http"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/internal/fetch"
)

// read fetches what Build needs. A metadata service that does not answer
// (refused, timed out) or answers 404 is ErrNotFound.
func read(ctx context.Context, c *fetch.Client, mdURL, udURL string) (Input, error) {
	in := Input{URL: mdURL}
	var err error
	in.Metadata, err = c.Get(ctx, mdURL)
	if err != nil {
		if fetch.Absent(err) || fetch.Status(err) == http.StatusNotFound {
			return in, fmt.Errorf("no metadata service (%w): %w", datasource.ErrNotFound, err)
		}
		return in, err
	}
	if in.PrivateNetworks, err = optional(ctx, c, fetch.Join(mdURL, "private-networks")); err != nil {
		return in, err
	}
	if in.Userdata, err = optional(ctx, c, udURL); err != nil {
		return in, err
	}
	return in, nil
}

// optional fetches u; 404 is nil, nil.
func optional(ctx context.Context, c *fetch.Client, u string) ([]byte, error) {
	b, err := c.Get(ctx, u)
	if fetch.Status(err) == http.StatusNotFound {
		return nil, nil
	}
	if err == nil && b == nil {
		b = []byte{}
	}
	return b, err
}
