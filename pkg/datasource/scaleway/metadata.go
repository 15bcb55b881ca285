package scaleway

// Fetching: the metadata document, user-data and vendor-data.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"

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
		if absent(err) || fetch.Status(err) == http.StatusNotFound {
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

// absent: nothing answered (a transport error or the budget ran out), as
// opposed to a service that answered badly.
func absent(err error) bool {
	if fetch.Status(err) != 0 {
		return false
	}
	var ue *url.Error
	return errors.As(err, &ue) || errors.Is(err, context.DeadlineExceeded)
}
