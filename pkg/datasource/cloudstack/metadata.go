package cloudstack

// Fetching: the instance-id probe, the meta-data tree and user-data, over
// pkg/imds.

import (
	"context"
	"fmt"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/ec2"
	"github.com/cloudroot/cloudroot/pkg/datasource/internal/pwserver"
	"github.com/cloudroot/cloudroot/pkg/imds"
)

// read waits for <base>/latest/meta-data/instance-id (the configured base
// URLs raced, the first that answers kept), crawls the meta-data tree as
// Ec2 does and fetches user-data. A router that does not answer, or
// answers 404 for instance-id, is ErrNotFound.
func read(ctx context.Context, c *imds.Client) (Input, error) {
	base, _, err := c.Probe(ctx, APIVersion+"/meta-data/instance-id")
	if err != nil {
		if imds.Absent(err) {
			return Input{}, fmt.Errorf("no metadata service at %s (%w): %w", strings.Join(c.BaseURLs, ", "), datasource.ErrNotFound, err)
		}
		return Input{}, err
	}
	pc := c.WithBaseURL(base)
	in := Input{Base: base, URL: imds.Join(base, APIVersion+"/meta-data/")}
	s := &ec2.Session{Client: pc, Base: base}
	if in.MetaData, err = s.Crawl(ctx, APIVersion+"/meta-data/"); err != nil {
		return in, err
	}
	b, uerr := pc.Get(ctx, APIVersion+"/user-data")
	in.UserData, err = datasource.Optional(imds.Result{Data: b, Err: uerr})
	return in, err
}

// PasswordURL is the password server's URL: base's host on port, path /
// (cloud-init's wget of <vr_addr>:8080).
func PasswordURL(base string, port int) (string, error) {
	return pwserver.URL(base, port, "/")
}

// ParsePassword is the password server's reply: the password, or ok false
// when there is none ("", "saved_password" or "bad_request").
func ParsePassword(b []byte) (pw string, ok bool) {
	return pwserver.Parse(b)
}
