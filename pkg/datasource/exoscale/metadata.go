package exoscale

// Fetching: the meta-data tree, user-data and the password server.

import (
	"context"
	"errors"
	"fmt"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/ec2"
	"github.com/cloudroot/cloudroot/pkg/datasource/internal/pwserver"
	"github.com/cloudroot/cloudroot/pkg/imds"
)

// errUserData marks a failure to read user-data: the tree was served, so
// the service is there.
var errUserData = errors.New("user-data")

// read races c's base URLs (imds.Race): at each, the meta-data tree is
// crawled (each level in parallel), then user-data is fetched. A service
// that does not answer (refused, timed out) or answers 404 for the tree is
// ErrNotFound. The base URL that answered is returned with what it served.
func read(ctx context.Context, c *imds.Client) (string, Input, error) {
	pc, in, err := imds.Race(ctx, c, func(ctx context.Context, pc *imds.Client) (Input, error) {
		base := pc.BaseURLs[0]
		s := &ec2.Session{Client: pc, Base: base}
		in := Input{URL: imds.Join(base, APIVersion+"/meta-data/")}
		var err error
		if in.MetaData, err = s.Crawl(ctx, APIVersion+"/meta-data/"); err != nil {
			return in, err
		}
		if in.UserData, err = s.UserData(ctx, APIVersion); err != nil {
			return in, fmt.Errorf("%w: %w", errUserData, err)
		}
		return in, nil
	})
	if err != nil {
		var re *imds.RaceError
		if errors.As(err, &re) && re.Every(func(err error) bool { return !errors.Is(err, errUserData) && imds.Absent(err) }) {
			return "", in, fmt.Errorf("no metadata service (%w): %w", datasource.ErrNotFound, err)
		}
		return "", in, err
	}
	return pc.BaseURLs[0], in, nil
}

// PasswordURL is the password server's URL: base's host on port, with
// the API version as path (cloud-init's "{url}:{port}/{version}/").
func PasswordURL(base string, port int) (string, error) {
	return pwserver.URL(base, port, "/"+APIVersion+"/")
}

// ParsePassword is the password server's reply: the password, or ok false
// when there is none ("" or "saved_password": already set).
func ParsePassword(b []byte) (pw string, ok bool) {
	return pwserver.Parse(b)
}
