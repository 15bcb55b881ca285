// Package altcloud is cloud-init's AltCloud datasource (images built by
// Image Factory / Deltacloud for RHEV-M and vSphere): user-data only,
// found by the cloud type.
//
// Contract (DataSourceAltCloud):
//   - Local: never touches the network; bounded by Env.Budget (default
//     DefaultBudget) between devices. There is no seed directory.
//   - The cloud type is CloudType: the target root's
//     /etc/sysconfig/cloud-info when present, else DMI product_name
//     (RHEV*, VMware*). Neither RHEV nor VSPHERE is ErrNotFound.
//   - RHEV puts user-data on a floppy (/dev/fd0, after modprobe floppy):
//     not supported; Get returns an error wrapping errors.ErrUnsupported.
//   - VSPHERE: every device labelled CDROM, in order; the first with a
//     non-empty deltacloud-user-data.txt (else user-data.txt) wins. None
//     is ErrNotFound; a labelled device that cannot be opened is
//     logged and skipped, as cloud-init does with mount failures.
//   - Data: user-data stripped of surrounding whitespace; meta-data is
//     cloud-init's fixed META_DATA_NOT_SUPPORTED (instance-id 455,
//     local-hostname localhost). Name "AltCloud", platform and cloud_name
//     "altcloud", mode net, subplatform "vsphere (/dev/sr0)".
package altcloud

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/internal/volscan"
)

// CloudInfoFile is Image Factory's cloud type file in the target root.
const CloudInfoFile = "/etc/sysconfig/cloud-info"

// DefaultBudget bounds one Get when Env.Budget is 0.
const DefaultBudget = 10 * time.Second

// Source is the AltCloud datasource.
type Source struct{}

var _ datasource.Source = (*Source)(nil)

// Name implements datasource.Source.
func (*Source) Name() string { return "AltCloud" }

// Doc implements datasource.Documented.
func (*Source) Doc() datasource.Doc {
	return datasource.Doc{
		Reads:         "cloud type from target `" + CloudInfoFile + "` else DMI product_name; vSphere: volumes labelled `CDROM` read with go-diskfs: `deltacloud-user-data.txt`, else `user-data.txt` (user-data only; fixed meta-data, instance-id 455); RHEV floppy reported unsupported",
		NetworkConfig: "none (fallback)",
		Tests:         "golden CD-ROMs (deltacloud, plain user-data.txt); real ISO9660 image (genisoimage) through go-diskfs; cloud-info file and DMI detection; RHEV unsupported; fuzzed cloud type and user-data reader",
	}
}

// Get implements datasource.Source.
func (s *Source) Get(ctx context.Context, env datasource.Env) (*datasource.Data, error) {
	log := env.Logger(s.Name())
	var info []byte
	if env.Root != nil {
		b, err := datasource.ReadFile(env.Root, strings.TrimPrefix(CloudInfoFile, "/"))
		switch {
		case err == nil:
			info = b
		case !datasource.IsNotExist(err):
			// cloud-init: an unreadable cloud-info file is UNKNOWN.
			log.Warn("unreadable cloud info file", "path", CloudInfoFile, "error", err)
			return nil, fmt.Errorf("altcloud: reading %s: %v: %w", CloudInfoFile, err, datasource.ErrNotFound)
		}
	}
	ct := CloudType(info, env.DMI.ProductName)
	switch {
	case strings.Contains(ct, RHEV):
		return nil, fmt.Errorf("altcloud: cloud type %s: user-data on the RHEV floppy (/dev/fd0) is not read: %w", ct, errors.ErrUnsupported)
	case !strings.Contains(ct, VSphere):
		return nil, fmt.Errorf("altcloud: cloud type %s (%s, DMI product_name %q) is neither RHEV nor VSPHERE: %w", ct, CloudInfoFile, env.DMI.ProductName, datasource.ErrNotFound)
	}
	return volscan.Scan{
		Name: s.Name(), Tag: "altcloud", What: "user-data on vSphere", Hint: "label " + Label,
		Devices: Candidates(env.Devices), Budget: DefaultBudget,
		Read: func(fsys fs.FS, where string, _ bool) (*datasource.Data, error) {
			b, name, err := readFS(fsys, where)
			if err != nil {
				log.Debug("no user-data", "path", where, "error", err)
				return nil, fmt.Errorf("%s: %v: %w", where, err, datasource.ErrNotFound)
			}
			if d := Parse(b, VSphere, where); d != nil {
				log.Debug("user-data", "path", where+"/"+name)
				return d, nil
			}
			return nil, fmt.Errorf("%s/%s: blank: %w", where, name, datasource.ErrNotFound)
		},
		// cloud-init's user_data_vsphere skips a CD-ROM it cannot mount.
		Quiet: func(bootenv.Device) bool { return true },
	}.Get(ctx, env)
}
