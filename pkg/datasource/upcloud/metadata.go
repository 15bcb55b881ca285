package upcloud

// Fetching the metadata document.

import (
	"context"
	"fmt"
	"net/http"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/internal/fetch"
)

// read fetches the document at u. A service that does not answer (refused,
// timed out) or answers 404 is ErrNotFound.
func read(ctx context.Context, c *fetch.Client, u string) ([]byte, error) {
	b, err := c.Get(ctx, u)
	if err == nil {
		return b, nil
	}
	if fetch.Absent(err) || fetch.Status(err) == http.StatusNotFound {
		return nil, fmt.Errorf("no metadata service (%w): %w", datasource.ErrNotFound, err)
	}
	return nil, err
}
