package cloudcix

// Fetching the metadata document and user-data.

import (
	"context"
	"errors"
	"fmt"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/imds"
)

// fetched is what one base URL served.
type fetched struct {
	base               string
	metadata, userdata []byte
}

// read races c's base URLs (imds.Race); from each, the metadata document
// and user-data are fetched in parallel. A service that does not answer
// (refused, timed out) or answers 404 for the metadata is ErrNotFound; a
// 404 for userdata means none.
func read(ctx context.Context, c *imds.Client) (fetched, error) {
	_, f, err := imds.Race(ctx, c, func(ctx context.Context, pc *imds.Client) (fetched, error) {
		f := fetched{base: pc.BaseURLs[0]}
		res := pc.GetMany(ctx, []string{MetadataPath, UserdataPath})
		md, ud := res[MetadataPath], res[UserdataPath]
		if md.Err != nil {
			return f, md.Err
		}
		switch {
		case errors.Is(ud.Err, imds.ErrNotFound):
		case ud.Err != nil:
			return f, fmt.Errorf("%w: %w", errUserdata, ud.Err)
		case ud.Data == nil:
			f.userdata = []byte{}
		default:
			f.userdata = ud.Data
		}
		f.metadata = md.Data
		return f, nil
	})
	if err == nil {
		return f, nil
	}
	var re *imds.RaceError
	if errors.As(err, &re) && re.Every(func(err error) bool { return !errors.Is(err, errUserdata) && imds.Absent(err) }) {
		return f, fmt.Errorf("no metadata service (%w): %w", datasource.ErrNotFound, err)
	}
	return f, err
}

// errUserdata marks a failure of the user-data request: the service
// answered the metadata, so it is there.
var errUserdata = errors.New("user-data")
