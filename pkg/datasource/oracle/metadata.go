package oracle

// Fetching: the instance document (v2, else v1) and the VNICs.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/internal/fetch"
)

// The v2 endpoints require this header; v1 takes none.
const (
	AuthHeader = "Authorization"
	AuthValue  = "Bearer Oracle"
)

// read fetches the instance document from v2, else v1, then that
// version's vnics.
func read(ctx context.Context, c *fetch.Client, base string, log *slog.Logger) (Input, error) {
	var errs []error
	for _, v := range []struct {
		ver string
		hdr http.Header
	}{
		{"v2", http.Header{AuthHeader: {AuthValue}}},
		{"v1", nil},
	} {
		root := fetch.Join(base, "opc", v.ver) + "/"
		b, err := c.Do(ctx, http.MethodGet, root+"instance/", v.hdr)
		if err != nil {
			errs = append(errs, err)
			if ctx.Err() != nil {
				break
			}
			continue
		}
		in := Input{URL: root, Instance: b}
		vn, err := c.Do(ctx, http.MethodGet, root+"vnics/", v.hdr)
		switch {
		case err == nil:
			in.Vnics = vn
		case fetch.Status(err) == http.StatusNotFound:
		default:
			log.Warn("vnics not read; no network config from the metadata", "error", err)
		}
		return in, nil
	}
	err := errors.Join(errs...)
	for _, e := range errs {
		if !fetch.Absent(e) && fetch.Status(e) != http.StatusNotFound {
			return Input{}, err
		}
	}
	return Input{}, fmt.Errorf("no metadata service (%w): %w", datasource.ErrNotFound, err)
}
