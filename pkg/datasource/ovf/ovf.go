// Package ovf is cloud-init's OVF datasource: the OVF environment
// (ovf-env.xml) a hypervisor passes on an ISO9660 transport volume
// labelled OVF-TRANSPORT, OVFENV or "OVF ENV" (any case), read straight
// from the block device through Env.OpenFS (go-diskfs by default: no
// mount), or from the seed directory var/lib/cloud/seed/ovf in the target
// root.
//
// Contract (DataSourceOVF):
//   - Local: never touches the network; bounded by Env.Budget (default
//     DefaultBudget) between devices. VMware's guestinfo transport (the
//     ovfEnv guestinfo key, read with vmware-rpctool) is not read.
//   - Order: the seed file ovf-env.xml, then every candidate device
//     (Candidates) with ovf-env.xml (or ovf_env.xml, OVF_ENV.XML,
//     OVF-ENV.XML).
//   - The document is parsed by ParseOVFEnv. Properties: instance-id
//     (default "iid-dsovf"), local-hostname (or hostname), public-keys →
//     meta-data; user-data base64-decoded (raw when not base64); password
//     → Config; network-config base64 YAML whose `network` mapping is the
//     network configuration (ignored when malformed, as in cloud-init).
//     seedfrom, which makes cloud-init fetch meta-data and user-data from
//     elsewhere, is an error wrapping ErrSeedFrom.
//   - Data: name "OVF", platform and cloud_name "ovf", mode net,
//     subplatform "ovf (iso)" or "ovf (/var/lib/cloud/seed/ovf/ovf-env.xml)"
//     ("vmware (...)" when DMI product_name is VMware), as cloud-init.
//   - Nothing found is ErrNotFound naming what was looked at; an
//     environment that is there but unreadable or broken is another error
//     naming the path.
package ovf

import (
	"context"
	"errors"
	"io/fs"
	"path"
	"strings"
	"time"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/internal/volscan"
)

// SeedDir is where an OVF environment may be copied in the target root.
const SeedDir = "/var/lib/cloud/seed/ovf"

// DefaultBudget bounds one Get when Env.Budget is 0.
const DefaultBudget = 10 * time.Second

// Source is the OVF datasource.
type Source struct{}

var _ datasource.Source = (*Source)(nil)

// Name implements datasource.Source.
func (*Source) Name() string { return "OVF" }

// Doc implements datasource.Documented.
func (*Source) Doc() datasource.Doc {
	return datasource.Doc{
		Reads:         "seed `" + SeedDir + "/ovf-env.xml`, then ISO9660 volumes labelled `OVF-TRANSPORT`/`OVFENV`/`OVF ENV` read with go-diskfs: `ovf-env.xml` properties instance-id, local-hostname/hostname, public-keys, user-data (base64), password, network-config (base64); `seedfrom` is reported unsupported; VMware guestinfo transport not read",
		NetworkConfig: "`network-config` property: base64 YAML, its `network` mapping",
		Tests:         "golden environments (full, minimal with defaults); real ISO9660 image (genisoimage) through go-diskfs; seed dir; seedfrom; broken XML; fuzzed ovf-env.xml parser",
	}
}

// Get implements datasource.Source.
func (s *Source) Get(ctx context.Context, env datasource.Env) (*datasource.Data, error) {
	return volscan.Scan{
		Name: s.Name(), Tag: "ovf", What: "OVF environment", Hint: "ISO9660 labels " + strings.Join(Labels(), "/"),
		SeedDir: SeedDir, Devices: Candidates(env.Devices), Budget: DefaultBudget,
		Read: func(fsys fs.FS, where string, seed bool) (*datasource.Data, error) {
			names, file, transport := EnvFileNames(), where, "iso"
			if seed {
				names = []string{"ovf-env.xml"}
				file = path.Join(where, "ovf-env.xml")
				transport = file
			}
			props, err := readFS(fsys, where, names)
			if err != nil {
				if seed && !errors.Is(err, datasource.ErrNotFound) {
					return nil, volscan.Stop(err) // a broken seed ends the search
				}
				return nil, err
			}
			d, err := Parse(props, file, transport, env.DMI.ProductName)
			if err != nil {
				return nil, volscan.Stop(err) // a broken environment ends it too
			}
			return d, nil
		},
	}.Get(ctx, env)
}
