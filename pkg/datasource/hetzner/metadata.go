package hetzner

// Fetching metadata, private networks and user-data.

import (
	"context"
	"errors"
	"fmt"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/imds"
)

// PrivateNetworksPath is the private networks' list, below the metadata
// URL.
const PrivateNetworksPath = "private-networks"

// read fetches what Build needs: c's metadata URLs are raced for the
// metadata and private networks (fetched together), then user-data comes
// from ud. A metadata service that does not answer (refused, timed out) or
// answers 404 is ErrNotFound.
func read(ctx context.Context, c, ud *imds.Client) (Input, error) {
	_, in, err := imds.Race(ctx, c, func(ctx context.Context, pc *imds.Client) (Input, error) {
		in := Input{URL: pc.BaseURLs[0]}
		res := pc.GetMany(ctx, []string{"", PrivateNetworksPath})
		md := res[""]
		if md.Err != nil {
			return in, md.Err
		}
		in.Metadata = md.Data
		var err error
		if in.PrivateNetworks, err = datasource.Optional(res[PrivateNetworksPath]); err != nil {
			return in, fmt.Errorf("%w: %w", errPrivateNetworks, err)
		}
		return in, nil
	})
	if err != nil {
		var re *imds.RaceError
		if errors.As(err, &re) && re.Every(func(err error) bool { return !errors.Is(err, errPrivateNetworks) && imds.Absent(err) }) {
			return in, fmt.Errorf("no metadata service (%w): %w", datasource.ErrNotFound, err)
		}
		return in, err
	}
	b, err := ud.Get(ctx, "")
	if in.Userdata, err = datasource.Optional(imds.Result{Data: b, Err: err}); err != nil {
		return in, err
	}
	return in, nil
}

// errPrivateNetworks marks a failure of the private networks' request:
// the metadata was served, so the service is there.
var errPrivateNetworks = errors.New("private networks")
