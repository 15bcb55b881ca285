package nwcs

// Fetching the metadata document.

import (
	"context"
	"fmt"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/imds"
)

// read fetches the document: c's URLs are raced for it (imds.Client.Probe)
// and the one that answered is returned. A service that does not answer
// (refused, timed out) or answers 404 is ErrNotFound.
func read(ctx context.Context, c *imds.Client) (string, []byte, error) {
	u, b, err := c.Probe(ctx, "")
	if err == nil {
		return u, b, nil
	}
	if imds.Absent(err) {
		return "", nil, fmt.Errorf("no metadata service (%w): %w", datasource.ErrNotFound, err)
	}
	return "", nil, err
}
