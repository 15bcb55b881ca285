package oracle

// Fetching: the instance document (v2, else v1) and the VNICs, over
// pkg/imds.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/imds"
)

// The v2 endpoints require this header; v1 takes none.
const (
	AuthHeader = "Authorization"
	AuthValue  = "Bearer Oracle"
)

// read fetches the instance document from v2, else v1 (trying c's base
// URLs in order), keeps the base that answered, then fetches that
// version's vnics when vnics is set.
func read(ctx context.Context, c *imds.Client, vnics bool, log *slog.Logger) (Input, error) {
	var answered string
	c.Check = func(r *http.Response) error {
		if r.StatusCode/100 == 2 && r.Request != nil {
			answered = r.Request.URL.String()
		}
		return nil
	}
	var errs []error
	for _, v := range []struct {
		ver string
		hdr http.Header
	}{
		{"v2", http.Header{AuthHeader: {AuthValue}}},
		{"v1", nil},
	} {
		p := "opc/" + v.ver + "/instance/"
		answered = ""
		b, err := c.Do(ctx, imds.Request{Path: p, Header: v.hdr})
		if err != nil {
			errs = append(errs, err)
			if ctx.Err() != nil {
				break
			}
			continue
		}
		c.Check = nil
		base := c.BaseURLs[0]
		for _, u := range c.BaseURLs {
			if join(u, p) == answered {
				base = u
			}
		}
		c.BaseURLs = []string{base}
		root := join(base, "opc/"+v.ver) + "/"
		in := Input{URL: root, InstanceURL: join(base, p), Instance: b}
		if !vnics {
			return in, nil
		}
		vp := "opc/" + v.ver + "/vnics/"
		vn, err := c.Do(ctx, imds.Request{Path: vp, Header: v.hdr})
		switch {
		case err == nil:
			in.Vnics, in.VnicsURL = vn, join(base, vp)
		case errors.Is(err, imds.ErrNotFound):
			log.Info("no vnics; no network config from the metadata", "url", join(base, vp))
		default:
			log.Warn("vnics not read; no network config from the metadata", "error", err)
		}
		return in, nil
	}
	c.Check = nil
	err := errors.Join(errs...)
	for _, e := range errs {
		if !absent(e) && !errors.Is(e, imds.ErrNotFound) {
			return Input{}, err
		}
	}
	return Input{}, fmt.Errorf("no metadata service at %s (%w): %w", strings.Join(c.BaseURLs, ", "), datasource.ErrNotFound, err)
}

// absent reports that nothing answered: transport failures only (refused,
// unreachable, timed out) or the budget ran out before any answer.
func absent(err error) bool {
	var e *imds.Error
	if errors.As(err, &e) {
		return e.Status == 0 && !errors.Is(err, imds.ErrTooLarge)
	}
	return errors.Is(err, imds.ErrBudget) || errors.Is(err, context.DeadlineExceeded)
}

// join is how pkg/imds joins a base URL and a path.
func join(base, path string) string {
	return strings.TrimRight(base, "/") + "/" + strings.TrimLeft(path, "/")
}
