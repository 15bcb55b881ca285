package openstack

// Fetching an OpenStack metadata tree over HTTP (cloud-init's
// MetadataReader).

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/cloudroot/cloudroot/pkg/datasource/ec2"
	"github.com/cloudroot/cloudroot/pkg/datasource/internal/fetch"
)

// errAbsent marks a base URL where no OpenStack metadata service answers.
var errAbsent = errors.New("no OpenStack metadata service")

// readHTTP reads the tree at base into an Input.
func readHTTP(ctx context.Context, c *fetch.Client, base string, log *slog.Logger) (Input, error) {
	in := Input{Source: base}
	listing, err := c.Get(ctx, fetch.Join(base, "openstack"))
	if err != nil {
		if code := fetch.Status(err); code == 0 || code == http.StatusNotFound {
			return in, fmt.Errorf("%w: %w", errAbsent, err)
		}
		return in, err
	}
	in.Version = PickVersion(ParseVersions(listing))
	dir := "openstack/" + in.Version + "/"
	if in.MetaData, err = c.Get(ctx, fetch.Join(base, dir+"meta_data.json")); err != nil {
		return in, err
	}
	for _, name := range []string{"user_data", "vendor_data.json", "vendor_data2.json", "network_data.json"} {
		b, err := c.Get(ctx, fetch.Join(base, dir+name))
		switch {
		case fetch.Status(err) == http.StatusNotFound:
			continue
		case err != nil:
			// cloud-init skips optional files it cannot read.
			log.Warn("skipping unreadable optional file", "url", fetch.Join(base, dir+name), "error", err)
			continue
		}
		switch name {
		case "user_data":
			in.UserData = b
		case "vendor_data.json":
			in.VendorData = b
		case "vendor_data2.json":
			in.VendorData2 = b
		case "network_data.json":
			in.NetworkData = b
		}
	}
	if md, err := ParseMetaData(in.MetaData); err == nil {
		for _, ref := range ContentRefs(md) {
			p, err := ContentPath(ref)
			if err != nil {
				return in, fmt.Errorf("%s: %w", fetch.Join(base, dir+"meta_data.json"), err)
			}
			b, err := c.Get(ctx, fetch.Join(base, "openstack", p))
			if err != nil {
				return in, err
			}
			if in.Content == nil {
				in.Content = map[string][]byte{}
			}
			in.Content[ref] = b
		}
	}
	// The EC2-compatible tree: cloud-init swallows its failures.
	sess := &ec2.Session{Client: c, Base: base}
	if md, err := sess.Crawl(ctx, "latest/meta-data/"); err == nil {
		in.EC2 = md
	} else {
		log.Debug("no EC2-compatible meta-data", "url", fetch.Join(base, "latest/meta-data/"), "error", err)
	}
	return in, nil
}
