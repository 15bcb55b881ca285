package azure

// Fetching the IMDS instance document.

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/internal/fetch"
)

// MetadataHeader is sent on every request.
const (
	MetadataHeader = "Metadata"
	MetadataValue  = "true"
)

func newClient(hc *http.Client) *fetch.Client {
	return &fetch.Client{HTTP: hc, Header: http.Header{MetadataHeader: {MetadataValue}}}
}

// InstanceURL is the instance document's URL at base for an API version
// (extended for APIVersion, which knows it).
func InstanceURL(base, version string) string {
	q := "?api-version=" + version
	if version == APIVersion {
		q += "&extended=true"
	}
	return fetch.Join(base, "metadata/instance") + q
}

// read fetches the instance document, falling back to the older API
// version when IMDS refuses the newer one with 400.
func read(ctx context.Context, c *fetch.Client, base string) (Input, error) {
	var errs []error
	for _, v := range []string{APIVersion, FallbackAPIVersion} {
		u := InstanceURL(base, v)
		b, err := c.Get(ctx, u)
		if err == nil {
			return Input{URL: u, Document: b}, nil
		}
		errs = append(errs, err)
		if fetch.Status(err) != http.StatusBadRequest {
			break
		}
	}
	err := errors.Join(errs...)
	last := errs[len(errs)-1]
	if fetch.Absent(last) || fetch.Status(last) == http.StatusNotFound {
		return Input{}, fmt.Errorf("no IMDS (%w): %w", datasource.ErrNotFound, err)
	}
	return Input{}, err
}
