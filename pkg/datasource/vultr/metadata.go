package vultr

// Fetching the metadata document.

import (
	"context"
	"fmt"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/imds"
)

// DocumentPath is the metadata document, below the base URL.
const DocumentPath = "v1.json"

// read fetches the document: c's base URLs are raced for it
// (imds.Client.Probe), and its URL is returned. A service that does not
// answer (refused, timed out) or answers 404 is ErrNotFound.
func read(ctx context.Context, c *imds.Client) (string, []byte, error) {
	base, b, err := c.Probe(ctx, DocumentPath)
	if err == nil {
		return imds.Join(base, DocumentPath), b, nil
	}
	if imds.Absent(err) {
		return "", nil, fmt.Errorf("no metadata service (%w): %w", datasource.ErrNotFound, err)
	}
	return "", nil, err
}
