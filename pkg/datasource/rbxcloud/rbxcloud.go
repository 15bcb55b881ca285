// Package rbxcloud is cloud-init's RbxCloud datasource (Rootbox,
// HyperOne): a FAT disk labelled CLOUDMD or cloudmd holding cloud.json and
// user.data, read straight from the block device through Env.OpenFS
// (go-diskfs by default: no mount).
//
// Contract (DataSourceRbxCloud):
//   - Local: never touches the network; bounded by Env.Budget (default
//     DefaultBudget) between devices. There is no seed directory.
//   - Order: every device labelled CLOUDMD/cloudmd (Candidates); the first
//     with cloud.json wins.
//   - Data: instance-id vm._id, local-hostname vm.name, public-keys empty
//     (as in cloud-init, additionalMetadata.sshKeys go to the default user
//     through Config); user-data is user.data. Config is cloud-init's
//     get_config_obj: ssh_pwauth and disable_root on, the default user
//     named additionalMetadata.username with password.sha512, passwordless
//     sudo and the SSH keys, and manage_etc_hosts on only when the target
//     root has no (or an empty) /etc/hosts. NetworkConfig is cloud-init's
//     v1 from netadp (ethN static per adapter); DS keeps netadp raw and the
//     gratuitous ARP announcements cloud-init makes on activation. Name
//     "RbxCloud", platform and cloud_name "rbxcloud", mode net,
//     subplatform "config-disk (/dev/vdb)" (cloud-init says "unknown").
//   - Nothing found is ErrNotFound naming what was looked at; a labelled
//     disk that is unreadable or whose cloud.json is broken (also: no vm or
//     netadp, which cloud-init only logs) is another error naming the path.
package rbxcloud

import (
	"context"
	"io/fs"
	"strings"
	"time"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/internal/volscan"
)

// DefaultBudget bounds one Get when Env.Budget is 0.
const DefaultBudget = 10 * time.Second

// Source is the RbxCloud datasource.
type Source struct{}

var _ datasource.Source = (*Source)(nil)

// Name implements datasource.Source.
func (*Source) Name() string { return "RbxCloud" }

// Doc implements datasource.Documented.
func (*Source) Doc() datasource.Doc {
	return datasource.Doc{
		Reads:         "FAT (or ISO9660) volumes labelled `CLOUDMD`/`cloudmd` read with go-diskfs: `cloud.json` (vm `_id`/`name`, additionalMetadata user, password hash and SSH keys as default-user config, netadp), `user.data`; target `/etc/hosts` for manage_etc_hosts",
		NetworkConfig: "v1 built from `cloud.json` `netadp` (static `ethN` per adapter); netadp kept raw in ds",
		Tests:         "golden metadata disks (two adapters, minimal); real FAT image (mkfs.vfat+mcopy) through go-diskfs; /etc/hosts present; broken cloud.json; fuzzed cloud.json parser",
	}
}

// Get implements datasource.Source.
func (s *Source) Get(ctx context.Context, env datasource.Env) (*datasource.Data, error) {
	hosts := false
	if env.Root != nil {
		if b, err := datasource.ReadFile(env.Root, "etc/hosts"); err == nil && len(b) > 0 {
			hosts = true
		}
	}
	return volscan.Scan{
		Name: s.Name(), Tag: "rbxcloud", What: "metadata disk", Hint: "labels " + strings.Join(Labels(), "/"),
		Devices: Candidates(env.Devices), Budget: DefaultBudget,
		Read: func(fsys fs.FS, where string, _ bool) (*datasource.Data, error) {
			return read(fsys, where, hosts)
		},
	}.Get(ctx, env)
}

func read(fsys fs.FS, source string, hosts bool) (*datasource.Data, error) {
	in, err := readFS(fsys, source)
	if err != nil {
		return nil, err
	}
	in.EtcHostsPresent = hosts
	return Parse(in, "config-disk ("+source+")")
}
