package gce

// Fetching from the GCE metadata server.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/imds"
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

// flavored is the client's Check: every reply must carry the flavor.
func flavored(r *http.Response) error {
	if r.Header.Get(FlavorHeader) != Flavor {
		return errNotFlavored
	}
	return nil
}

// The paths read, relative to the base URL.
const (
	idPath       = "instance/id"
	zonePath     = "instance/zone"
	hostnamePath = "instance/hostname"
	instanceAttr = "instance/attributes/?recursive=true"
	projectAttr  = "project/attributes/?recursive=true"
)

// read fetches what Build needs from the server c is pinned to, every key
// at once. The server is absent (errAbsent) when instance/id does not
// answer, answers without the flavor, or a required key is 404.
func read(ctx context.Context, c *imds.Client) (Input, error) {
	in := Input{Base: c.BaseURLs[0]}
	res := c.GetMany(ctx, []string{idPath, zonePath, hostnamePath, instanceAttr, projectAttr})
	for i, f := range []struct {
		key, path string
		dst       *string
	}{
		{"instance-id", idPath, &in.InstanceID},
		{"availability-zone", zonePath, &in.Zone},
		{"local-hostname", hostnamePath, &in.Hostname},
	} {
		r := res[f.path]
		if err := r.Err; err != nil {
			if i == 0 && (imds.Status(err) == 0 || errors.Is(err, errNotFlavored)) {
				return in, fmt.Errorf("%w: %w", errAbsent, err)
			}
			if errors.Is(err, imds.ErrNotFound) {
				return in, fmt.Errorf("%w: required key %s returned nothing: %w", errAbsent, f.key, err)
			}
			return in, err
		}
		*f.dst = strings.TrimSpace(string(r.Data))
	}
	var err error
	if in.Instance, err = attributes(res[instanceAttr]); err != nil {
		return in, err
	}
	if in.Project, err = attributes(res[projectAttr]); err != nil {
		return in, err
	}
	return in, nil
}

// attributes is a recursive attributes listing; 404 means none.
func attributes(r imds.Result) ([]byte, error) {
	if errors.Is(r.Err, imds.ErrNotFound) {
		return nil, nil
	}
	return r.Data, r.Err
}
