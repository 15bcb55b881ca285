package gce

// Fetching from the GCE metadata server.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/datasource/internal/fetch"
)

// FlavorHeader is sent on every request and must come back on every reply.
const (
	FlavorHeader = "Metadata-Flavor"
	Flavor       = "Google"
)

var (
	// errAbsent: nothing at this URL answers like a GCE metadata server.
	errAbsent = errors.New("no GCE metadata server")
	// errNotFlavored: a reply without Metadata-Flavor: Google.
	errNotFlavored = errors.New("reply lacks " + FlavorHeader + ": " + Flavor + " (not a GCE metadata server)")
)

func newClient(hc *http.Client) *fetch.Client {
	return &fetch.Client{
		HTTP:   hc,
		Header: http.Header{FlavorHeader: {Flavor}},
		Check: func(r *http.Response) error {
			if r.Header.Get(FlavorHeader) != Flavor {
				return errNotFlavored
			}
			return nil
		},
	}
}

// read fetches what Build needs from the server at base.
func read(ctx context.Context, c *fetch.Client, base string) (Input, error) {
	in := Input{Base: base}
	for i, f := range []struct {
		key, path string
		dst       *string
	}{
		{"instance-id", "instance/id", &in.InstanceID},
		{"availability-zone", "instance/zone", &in.Zone},
		{"local-hostname", "instance/hostname", &in.Hostname},
	} {
		b, err := c.Get(ctx, fetch.Join(base, f.path))
		if err != nil {
			code := fetch.Status(err)
			if i == 0 && (code == 0 || errors.Is(err, errNotFlavored)) {
				return in, fmt.Errorf("%w: %w", errAbsent, err)
			}
			if code == http.StatusNotFound {
				return in, fmt.Errorf("%w: required key %s returned nothing: %w", errAbsent, f.key, err)
			}
			return in, err
		}
		*f.dst = strings.TrimSpace(string(b))
	}
	var err error
	if in.Instance, err = attributes(ctx, c, fetch.Join(base, "instance/attributes/")); err != nil {
		return in, err
	}
	if in.Project, err = attributes(ctx, c, fetch.Join(base, "project/attributes/")); err != nil {
		return in, err
	}
	return in, nil
}

// attributes fetches a recursive attributes listing; 404 means none.
func attributes(ctx context.Context, c *fetch.Client, url string) ([]byte, error) {
	b, err := c.Get(ctx, url+"?recursive=true")
	if fetch.Status(err) == http.StatusNotFound {
		return nil, nil
	}
	return b, err
}
