// Package configdrive is cloud-init's ConfigDrive datasource: OpenStack's
// metadata tree on a disk (ISO9660 or FAT labelled config-2/CONFIG-2), read
// straight from the block device through Env.OpenFS (go-diskfs by default:
// no kernel filesystem driver, no mount), or from the seed directory
// var/lib/cloud/seed/config_drive in the target root.
//
// Contract (DataSourceConfigDrive + helpers/openstack.py ConfigDriveReader):
//   - Local: never touches the network; bounded by Env.Budget (default
//     DefaultBudget) between devices.
//   - Order: the seed directory, then every candidate device (Candidates).
//     The first that has openstack/<version>/meta_data.json wins.
//   - The version read is openstack.PickVersion of the directories under
//     openstack/: the newest cloud-init knows, else latest, else the newest
//     dated one. Also read: user_data, vendor_data.json, vendor_data2.json,
//     network_data.json, ec2/latest/meta-data.json, and the content/NNNN
//     files meta_data.json's `files` and `network_config` point at.
//   - Data: see openstack.Build; name "ConfigDrive", platform "configdrive",
//     cloud_name "configdrive", subplatform "config-disk (/dev/sr0)" or
//     "seed-dir (/var/lib/cloud/seed/config_drive)". Injected files are in
//     Data.Files.
//   - Nothing found is ErrNotFound naming what was looked at; a drive that
//     is there but unreadable or broken is another error naming the path.
package configdrive

import (
	"context"
	"io/fs"
	"strings"
	"time"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/internal/volscan"
)

// SeedDir is where a config drive may be copied in the target root.
const SeedDir = "/var/lib/cloud/seed/config_drive"

// DefaultBudget bounds one Get when Env.Budget is 0.
const DefaultBudget = 10 * time.Second

// Source is the ConfigDrive datasource.
type Source struct{}

var _ datasource.Source = (*Source)(nil)

// Name implements datasource.Source.
func (*Source) Name() string { return "ConfigDrive" }

// Doc implements datasource.Documented.
func (*Source) Doc() datasource.Doc {
	return datasource.Doc{
		Reads:         "seed `" + SeedDir + "`, then ISO9660/FAT volumes labelled `config-2`/`CONFIG-2` read with go-diskfs: `openstack/<newest known version or latest>/{meta_data.json,user_data,vendor_data.json,vendor_data2.json,network_data.json}`, `ec2/latest/meta-data.json`, `content/NNNN` injected files",
		NetworkConfig: "`network_data.json` (else legacy ENI `network_config`) handed on raw (`openstack_network_data`/`eni`) for pkg/netconfig",
		Tests:         "golden drive trees (dated versions, latest only); real ISO9660 (genisoimage) and FAT (mkfs.vfat+mcopy) images through go-diskfs; seed dir; broken and missing files; fuzzed with the shared OpenStack parser; QEMU boot from a config-2 ISO (TestConfigDrive)",
	}
}

// Get implements datasource.Source.
func (s *Source) Get(ctx context.Context, env datasource.Env) (*datasource.Data, error) {
	log := env.Logger(s.Name())
	return volscan.Scan{
		Name: s.Name(), Tag: "configdrive", What: "config drive", Hint: "labels " + strings.Join(Labels(), "/"),
		SeedDir: SeedDir, Devices: Candidates(env.Devices), Budget: DefaultBudget,
		Read: func(fsys fs.FS, where string, seed bool) (*datasource.Data, error) {
			in, err := readFS(fsys, where, log)
			if err != nil {
				return nil, err
			}
			if seed {
				return Parse(in, "seed-dir ("+where+")")
			}
			return Parse(in, "config-disk ("+where+")")
		},
	}.Get(ctx, env)
}
