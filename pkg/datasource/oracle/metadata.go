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

// read fetches the instance document from v2, else v1, racing c's base
// URLs (the first that answers is kept), then fetches that version's vnics
// from the same base when vnics is set.
func read(ctx context.Context, c *imds.Client, vnics bool, log *slog.Logger) (Input, error) {
	type doc struct {
		ver  string
		hdr  http.Header
		body []byte
	}
	pc, d, err := imds.Race(ctx, c, func(ctx context.Context, pc *imds.Client) (doc, error) {
		var errs []error
		for _, v := range []doc{{ver: "v2", hdr: http.Header{AuthHeader: {AuthValue}}}, {ver: "v1"}} {
			b, err := pc.Do(ctx, imds.Request{Path: "opc/" + v.ver + "/instance/", Header: v.hdr})
			if err == nil {
				v.body = b
				return v, nil
			}
			errs = append(errs, err)
			if ctx.Err() != nil {
				break
			}
		}
		return doc{}, errors.Join(errs...)
	})
	if err != nil {
		if imds.Absent(err) {
			return Input{}, fmt.Errorf("no metadata service at %s (%w): %w", strings.Join(c.BaseURLs, ", "), datasource.ErrNotFound, err)
		}
		return Input{}, err
	}
	base := pc.BaseURLs[0]
	p := "opc/" + d.ver + "/instance/"
	in := Input{URL: imds.Join(base, "opc/"+d.ver) + "/", InstanceURL: imds.Join(base, p), Instance: d.body}
	if !vnics {
		return in, nil
	}
	vp := "opc/" + d.ver + "/vnics/"
	vn, err := pc.Do(ctx, imds.Request{Path: vp, Header: d.hdr})
	switch {
	case err == nil:
		in.Vnics, in.VnicsURL = vn, imds.Join(base, vp)
	case errors.Is(err, imds.ErrNotFound):
		log.Info("no vnics; no network config from the metadata", "url", imds.Join(base, vp))
	default:
		log.Warn("vnics not read; no network config from the metadata", "error", err)
	}
	return in, nil
}
