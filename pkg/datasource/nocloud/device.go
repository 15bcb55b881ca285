package nocloud

import (
	"fmt"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/media"
)

// ReadDevice reads a seed straight from a block device (or image file)
// holding an ISO9660 or FAT filesystem, with pkg/media (go-diskfs behind
// its bounds): no kernel filesystem driver and no mount needed.
func ReadDevice(dev string, ov Overrides) (*datasource.Data, error) {
	fsys, closeFS, err := media.Open(dev, media.Limits{})
	if err != nil {
		return nil, fmt.Errorf("nocloud: %w", err)
	}
	defer closeFS()
	return Read(fsys, "config-disk ("+dev+")", ov)
}
