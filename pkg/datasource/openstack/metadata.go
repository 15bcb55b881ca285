package openstack

// Fetching an OpenStack metadata tree over HTTP (cloud-init's
// MetadataReader).

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/cloudroot/cloudroot/pkg/datasource/ec2"
	"github.com/cloudroot/cloudroot/pkg/imds"
)

// ListingPath is the version listing that tells an OpenStack metadata
// service from anything else at the address.
const ListingPath = "openstack"

// optionalFiles are read beside meta_data.json, in parallel; a 404 or an
// unreadable one means absent.
var optionalFiles = []string{"user_data", "vendor_data.json", "vendor_data2.json", "network_data.json"}

// readHTTP reads the tree through c (pinned to the service's base URL),
// whose version listing was listing.
func readHTTP(ctx context.Context, c *imds.Client, listing []byte, log *slog.Logger) (Input, error) {
	base := c.BaseURLs[0]
	in := Input{Source: base, Version: PickVersion(ParseVersions(listing))}
	dir := "openstack/" + in.Version + "/"
	paths := []string{dir + "meta_data.json"}
	for _, name := range optionalFiles {
		paths = append(paths, dir+name)
	}
	res := c.GetMany(ctx, paths)
	md := res[dir+"meta_data.json"]
	if md.Err != nil {
		return in, md.Err
	}
	in.MetaData = md.Data
	for _, name := range optionalFiles {
		r := res[dir+name]
		switch {
		case errors.Is(r.Err, imds.ErrNotFound):
			continue
		case r.Err != nil:
			// cloud-init skips optional files it cannot read.
			log.Warn("skipping unreadable optional file", "url", imds.Join(base, dir+name), "error", r.Err)
			continue
		}
		switch name {
		case "user_data":
			in.UserData = r.Data
		case "vendor_data.json":
			in.VendorData = r.Data
		case "vendor_data2.json":
			in.VendorData2 = r.Data
		case "network_data.json":
			in.NetworkData = r.Data
		}
	}
	if meta, err := ParseMetaData(in.MetaData); err == nil {
		refs := ContentRefs(meta)
		paths := make([]string, 0, len(refs))
		for _, ref := range refs {
			p, err := ContentPath(ref)
			if err != nil {
				return in, fmt.Errorf("%s: %w", imds.Join(base, dir+"meta_data.json"), err)
			}
			paths = append(paths, "openstack/"+p)
		}
		res := c.GetMany(ctx, paths)
		for i, ref := range refs {
			r := res[paths[i]]
			if r.Err != nil {
				return in, r.Err
			}
			if in.Content == nil {
				in.Content = map[string][]byte{}
			}
			in.Content[ref] = r.Data
		}
	}
	// The EC2-compatible tree: cloud-init swallows its failures.
	sess := &ec2.Session{Client: c, Base: base}
	if md, err := sess.Crawl(ctx, "latest/meta-data/"); err == nil {
		in.EC2 = md
	} else {
		log.Debug("no EC2-compatible meta-data", "url", imds.Join(base, "latest/meta-data/"), "error", err)
	}
	return in, nil
}
