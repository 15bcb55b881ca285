package bigstep

// Fetching the metadata document.

import (
	"context"
	"fmt"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/imds"
)

// read fetches the document c is pinned to. A service that does not answer
// (refused, timed out) or answers 404 is ErrNotFound.
func read(ctx context.Context, c *imds.Client) ([]byte, error) {
	b, err := c.Get(ctx, "")
	if err == nil {
		return b, nil
	}
	if imds.Absent(err) {
		return nil, fmt.Errorf("no metadata service (%w): %w", datasource.ErrNotFound, err)
	}
	return nil, err
}
