package bigstep

// Fetching the metadata document.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"

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
	if absent(err) || fetch.Status(err) == http.StatusNotFound {
		return nil, fmt.Errorf("no metadata service (%w): %w", datasource.ErrNotFound, err)
	}
	return nil, err
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
