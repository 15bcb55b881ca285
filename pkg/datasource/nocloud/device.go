package nocloud

import (
	"fmt"

	diskfs "github.com/diskfs/go-diskfs"

	"github.com/cloudroot/cloudroot/pkg/datasource"
)

// ReadDevice reads a seed straight from a block device (or image file)
// holding an ISO9660 or FAT filesystem, with go-diskfs: no kernel filesystem
// driver and no mount needed.
func ReadDevice(dev string, ov Overrides) (*datasource.Data, error) {
	d, err := diskfs.Open(dev, diskfs.WithOpenMode(diskfs.ReadOnly))
	if err != nil {
		return nil, fmt.Errorf("nocloud: open %s: %w", dev, err)
	}
	defer d.Close()
	fsys, err := d.GetFilesystem(0)
	if err != nil {
		return nil, fmt.Errorf("nocloud: read filesystem on %s: %w", dev, err)
	}
	return Read(fsys, "config-disk ("+dev+")", ov)
}
