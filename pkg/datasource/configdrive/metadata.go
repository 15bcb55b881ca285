package configdrive

// Reading an OpenStack config drive's tree from a filesystem (cloud-init's
// ConfigDriveReader).

import (
	"fmt"
	"io/fs"
	"log/slog"
	"path"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/openstack"
)

// readFS reads the drive's tree at fsys's root into an Input. A drive with
// no openstack/<version>/meta_data.json is ErrNotFound.
func readFS(fsys fs.FS, source string, log *slog.Logger) (openstack.Input, error) {
	in := openstack.Input{Source: source}
	ents, err := fs.ReadDir(fsys, "openstack")
	if err != nil {
		if datasource.IsNotExist(err) {
			return in, fmt.Errorf("%s has no openstack directory: %w", source, datasource.ErrNotFound)
		}
		return in, fmt.Errorf("reading %s/openstack: %w", source, err)
	}
	var dirs []string
	for _, e := range ents {
		if e.IsDir() {
			dirs = append(dirs, e.Name())
		}
	}
	in.Version = openstack.PickVersion(dirs)
	dir := path.Join("openstack", in.Version)
	in.MetaData, err = datasource.ReadFile(fsys, path.Join(dir, "meta_data.json"))
	if err != nil {
		if datasource.IsNotExist(err) {
			return in, fmt.Errorf("%s has no %s/meta_data.json: %w", source, dir, datasource.ErrNotFound)
		}
		return in, fmt.Errorf("reading %s/%s/meta_data.json: %w", source, dir, err)
	}
	for _, name := range []string{"user_data", "vendor_data.json", "vendor_data2.json", "network_data.json"} {
		b, err := datasource.ReadFile(fsys, path.Join(dir, name))
		if err != nil {
			if !datasource.IsNotExist(err) {
				// cloud-init skips optional files it cannot read.
				log.Warn("skipping unreadable optional file", "path", source+"/"+dir+"/"+name, "error", err)
			}
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
	if md, err := openstack.ParseMetaData(in.MetaData); err == nil {
		for _, ref := range openstack.ContentRefs(md) {
			p, err := openstack.ContentPath(ref)
			if err != nil {
				return in, fmt.Errorf("%s/%s/meta_data.json: %w", source, dir, err)
			}
			b, err := datasource.ReadFile(fsys, path.Join("openstack", p))
			if err != nil {
				return in, fmt.Errorf("reading %s/openstack/%s: %w", source, p, err)
			}
			if in.Content == nil {
				in.Content = map[string][]byte{}
			}
			in.Content[ref] = b
		}
	}
	const ec2 = "ec2/latest/meta-data.json"
	b, err := datasource.ReadFile(fsys, ec2)
	switch {
	case err == nil:
		if in.EC2, err = parseEC2(b); err != nil {
			return in, fmt.Errorf("%s/%s: %w", source, ec2, err)
		}
	case !datasource.IsNotExist(err):
		return in, fmt.Errorf("reading %s/%s: %w", source, ec2, err)
	}
	return in, nil
}
