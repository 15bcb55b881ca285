package configdrive

// Pure parsing. The openstack/ tree itself is parsed by openstack.Build;
// what is the config drive's own is the EC2 meta-data file and which
// devices qualify.

import (
	"fmt"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/internal/jsondoc"
	"github.com/cloudroot/cloudroot/pkg/datasource/openstack"
)

// parseEC2 decodes ec2/latest/meta-data.json (an object).
func parseEC2(b []byte) (map[string]any, error) {
	return jsondoc.Object(b)
}

// Candidates are the devices that may hold a config drive: ISO9660 or FAT
// filesystems labelled config-2 or CONFIG-2, in the order given.
// (cloud-init also tries unlabelled whole disks of those types; ds-identify
// never selects ConfigDrive for them, so neither does cloudroot.)
func Candidates(devs []bootenv.Device) []bootenv.Device {
	var out []bootenv.Device
	for _, d := range devs {
		if d.FS.Type != "iso9660" && d.FS.Type != "vfat" {
			continue
		}
		for _, l := range Labels() {
			if d.FS.Label == l {
				out = append(out, d)
				break
			}
		}
	}
	return out
}

// Labels are the filesystem labels of a config drive.
func Labels() []string { return []string{"config-2", "CONFIG-2"} }

// Parse builds Data from a drive's tree read at subplatform (e.g.
// "config-disk (/dev/sr0)"). A drive whose meta.dsmode is "disabled" is
// ErrNotFound, as in cloud-init.
func Parse(in openstack.Input, subplatform string) (*datasource.Data, error) {
	d, err := openstack.Build(in)
	if err != nil {
		return nil, err
	}
	if d.Mode == "disabled" {
		return nil, fmt.Errorf("%s: dsmode is disabled: %w", in.Source, datasource.ErrNotFound)
	}
	// instance-data v1.platform is cloud-init's platform_type, the
	// lowercased dsname (its `platform` property, "openstack", is not
	// what instance-data reports).
	d.Name, d.Platform, d.CloudName = "ConfigDrive", "configdrive", "configdrive"
	d.Subplatform = subplatform
	return d, nil
}
