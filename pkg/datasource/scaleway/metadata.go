package scaleway

// Fetching: the metadata document, user-data and vendor-data.

import (
	"context"
	"errors"
	"fmt"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/imds"
)

// read races c's base URLs (imds.Race); from each, the metadata document,
// user-data and vendor-data are fetched in parallel. A service that does
// not answer or answers 404 for the metadata is ErrNotFound.
func read(ctx context.Context, c *imds.Client) (Input, error) {
	_, in, err := imds.Race(ctx, c, func(ctx context.Context, pc *imds.Client) (Input, error) {
		in := Input{URL: imds.Join(pc.BaseURLs[0], MetadataPath)}
		res := pc.GetMany(ctx, []string{MetadataPath, UserDataPath, VendorDataPath})
		md := res[MetadataPath]
		if md.Err != nil {
			return in, md.Err
		}
		in.MetaData = md.Data
		var err error
		if in.UserData, err = datasource.Optional(res[UserDataPath]); err != nil {
			return in, fmt.Errorf("%w: %w", errOptional, err)
		}
		if in.VendorData, err = datasource.Optional(res[VendorDataPath]); err != nil {
			return in, fmt.Errorf("%w: %w", errOptional, err)
		}
		return in, nil
	})
	if err != nil {
		var re *imds.RaceError
		if errors.As(err, &re) && re.Every(func(err error) bool { return !errors.Is(err, errOptional) && imds.Absent(err) }) {
			return in, fmt.Errorf("no metadata service (%w): %w", datasource.ErrNotFound, err)
		}
		return in, err
	}
	return in, nil
}

// errOptional marks a failure to read user-data or vendor-data: the
// metadata was served, so the service is there.
var errOptional = errors.New("user-data or vendor-data")
