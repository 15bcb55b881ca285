package scaleway

// Fetching: the metadata document, user-data and vendor-data.

import (
	"context"
	"fmt"
	"net/http"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/internal/fetch"
)

// read fetches everything under base. A service that does not answer or
// answers 404 for the metadata is ErrNotFound.
func read(ctx context.Context, c *fetch.Client, base string) (Input, error) {
	in := Input{URL: fetch.Join(base, MetadataPath)}
	var err error
	in.MetaData, err = c.Get(ctx, in.URL)
	if err != nil {
		if fetch.Absent(err) || fetch.Status(err) == http.StatusNotFound {
			return in, fmt.Errorf("no metadata service (%w): %w", datasource.ErrNotFound, err)
		}
		return in, err
	}
	if in.UserData, err = optional(ctx, c, fetch.Join(base, UserDataPath)); err != nil {
		return in, err
	}
	if in.VendorData, err = optional(ctx, c, fetch.Join(base, VendorDataPath)); err != nil {
		return in, err
	}
	return in, nil
}

// optional fetches u; a 404 means none (nil, nil).
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
