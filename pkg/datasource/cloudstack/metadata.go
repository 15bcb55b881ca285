package cloudstack

// Fetching: the meta-data tree, user-data and the password server.

import (
	"context"
	"fmt"
	"net/http"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/ec2"
	"github.com/cloudroot/cloudroot/pkg/datasource/internal/fetch"
	"github.com/cloudroot/cloudroot/pkg/datasource/internal/pwserver"
)

// read crawls the meta-data tree and fetches user-data. A router that
// does not answer (refused, timed out) or answers 404 for the tree is
// ErrNotFound.
func read(ctx context.Context, c *fetch.Client, base string) (Input, error) {
	s := &ec2.Session{Client: c, Base: base}
	in := Input{URL: fetch.Join(base, APIVersion, "meta-data/")}
	var err error
	in.MetaData, err = s.Crawl(ctx, APIVersion+"/meta-data/")
	if err != nil {
		if fetch.Absent(err) || fetch.Status(err) == http.StatusNotFound {
			return in, fmt.Errorf("no virtual router metadata (%w): %w", datasource.ErrNotFound, err)
		}
		return in, err
	}
	if in.UserData, err = s.UserData(ctx, APIVersion); err != nil {
		return in, err
	}
	return in, nil
}

// PasswordURL is the password server's URL: base's host on port, path /
// (cloud-init's HTTPConnection(vr_addr, 8080) GET).
func PasswordURL(base string, port int) (string, error) {
	return pwserver.URL(base, port, "/")
}

// password asks the password server for the instance's password and, when
// there is a new one, tells it the password is saved.
func password(ctx context.Context, c *fetch.Client, u string) (string, error) {
	return pwserver.Fetch(ctx, c, u)
}

// ParsePassword is the password server's reply: the password, or ok false
// when there is none ("" or "saved_password": already set).
func ParsePassword(b []byte) (pw string, ok bool) {
	return pwserver.Parse(b)
}
