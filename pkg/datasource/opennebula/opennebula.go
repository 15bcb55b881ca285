// Package opennebula is cloud-init's OpenNebula datasource: the context
// disk OpenNebula attaches (an ISO9660 volume labelled CONTEXT or CDROM)
// holding context.sh, read straight from the block device through
// Env.OpenFS (go-diskfs by default: no mount), or the seed directory
// var/lib/cloud/seed/opennebula in the target root.
//
// Contract (DataSourceOpenNebula):
//   - Local: never touches the network; bounded by Env.Budget (default
//     DefaultBudget) between devices.
//   - Order: the seed directory, then Candidates (labels CONTEXT, CDROM,
//     then any other ISO9660 volume). The first with a context.sh wins.
//   - context.sh is parsed without a shell (ParseContext): cloud-init runs
//     it through bash as a configured user; cloudroot reads the quoted
//     assignments OpenNebula writes and refuses anything that needs a
//     shell, naming the line.
//   - Data: meta-data is every context variable, plus public-keys
//     (SSH_KEY, else SSH_PUBLIC_KEY, one key a line, # comments dropped),
//     local-hostname (SET_HOSTNAME, HOSTNAME, PUBLIC_IP, IP_PUBLIC,
//     ETH0_IP: the first given) and instance-id (VMID; cloud-init always
//     uses "iid-dsopennebula", which is the fallback). User-data is
//     USER_DATA (else USERDATA), base64-decoded when USERDATA_ENCODING
//     (else USER_DATA_ENCODING) is base64. The mode is DSMODE, else the
//     configured dsmode, else net; disabled is ErrNotFound. When any
//     ETH<n>_IP* variable is set, the network configuration is the v2
//     document cloud-init's OpenNebulaNetwork makes of them (NetworkConfig).
//     Name
//     "OpenNebula", platform and cloud_name "opennebula", subplatform
//     "config-disk (/dev/sr0)" or "seed-dir (/var/lib/cloud/seed/opennebula)".
//   - Nothing found is ErrNotFound naming what was looked at; a context.sh
//     that is there but unreadable or broken is another error naming the
//     path.
package opennebula

import (
	"context"
	"errors"
	"io/fs"
	"strings"
	"time"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/internal/volscan"
)

// SeedDir is where a context disk may be copied in the target root.
const SeedDir = "/var/lib/cloud/seed/opennebula"

// DefaultBudget bounds one Get when Env.Budget is 0.
const DefaultBudget = 10 * time.Second

// Source is the OpenNebula datasource.
type Source struct{}

var _ datasource.Source = (*Source)(nil)

// Name implements datasource.Source.
func (*Source) Name() string { return "OpenNebula" }

// Doc implements datasource.Documented.
func (*Source) Doc() datasource.Doc {
	return datasource.Doc{
		Reads:         "seed `" + SeedDir + "`, then volumes labelled `CONTEXT`/`CDROM`, then other ISO9660 volumes, read with go-diskfs: `context.sh` parsed without a shell (quoted assignments only); USER_DATA/USERDATA (base64 per *_ENCODING), SSH_KEY/SSH_PUBLIC_KEY, SET_HOSTNAME/HOSTNAME/…, instance-id VMID, DSMODE",
		NetworkConfig: "v2 made of the `ETH<n>_*`, `DNS` and `SEARCH_DOMAIN` context variables, as cloud-init's OpenNebulaNetwork (one ethernet per ETH<n>_MAC, matched by MAC)",
		Tests:         "golden context disks (multi-line quoted values, `'\\''` escapes, base64 user-data, network variables); real ISO9660 image (genisoimage) through go-diskfs; seed dir; dsmode; broken context.sh; fuzzed context.sh parser",
	}
}

// Get implements datasource.Source.
func (s *Source) Get(ctx context.Context, env datasource.Env) (*datasource.Data, error) {
	dsmode, _ := env.SourceConfig(s.Name())["dsmode"].(string)
	return volscan.Scan{
		Name: s.Name(), Tag: "opennebula", What: "context disk", Hint: "labels " + strings.Join(Labels(), "/") + ", ISO9660",
		SeedDir: SeedDir, Devices: Candidates(env.Devices), Budget: DefaultBudget,
		Read: func(fsys fs.FS, where string, seed bool) (*datasource.Data, error) {
			sub := "config-disk (" + where + ")"
			if seed {
				sub = "seed-dir (" + where + ")"
			}
			c, err := readFS(fsys, where)
			if err == nil {
				var d *datasource.Data
				if d, err = Parse(c, where, sub, dsmode); err == nil {
					return d, nil
				}
			}
			if errors.Is(err, datasource.ErrNotFound) {
				return nil, err
			}
			// A broken context disk stops the search, as in cloud-init.
			return nil, volscan.Stop(err)
		},
		// cloud-init warns that a device was not mountable and goes on;
		// one labelled as a context disk is recorded.
		Quiet: func(dev bootenv.Device) bool { return !labelled(dev.FS.Label) },
	}.Get(ctx, env)
}

// labelled: an unreadable volume with a context disk's label is a broken
// context disk; another unreadable ISO9660 volume is just not one.
func labelled(label string) bool {
	for _, l := range Labels() {
		if label == l {
			return true
		}
	}
	return false
}
