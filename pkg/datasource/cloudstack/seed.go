package cloudstack

import (
	"fmt"
	"io/fs"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/datasource"
)

// SeedDir is the seed directory cloud-init's CloudStack reads before the
// network (meta-data and user-data both required, as read_optional_seed).
const SeedDir = "/var/lib/cloud/seed/cs"

// readSeed reads SeedDir from root: ok false when it is absent or lacks
// meta-data or user-data; an error when meta-data is not a YAML mapping
// or has no instance-id.
func readSeed(root fs.FS) (*datasource.Data, bool, error) {
	if root == nil {
		return nil, false, nil
	}
	dir := strings.TrimPrefix(SeedDir, "/")
	md, err := datasource.ReadFile(root, dir+"/meta-data")
	if err != nil {
		return nil, false, nil
	}
	ud, err := datasource.ReadFile(root, dir+"/user-data")
	if err != nil {
		return nil, false, nil
	}
	m, err := datasource.DecodeYAMLMap(md)
	if err != nil {
		return nil, false, fmt.Errorf("%s/meta-data: %w", SeedDir, err)
	}
	d, err := Build(Input{URL: SeedDir, MetaData: m, UserData: ud})
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", SeedDir, err)
	}
	d.Subplatform = "seed-dir (" + SeedDir + ")"
	return d, true, nil
}
