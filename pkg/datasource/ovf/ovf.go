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
	"fmt"
	"io/fs"
	"path"
	"strings"
	"time"

	"github.com/cloudroot/cloudroot/pkg/datasource"
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
	log := env.Logger(s.Name())
	ctx, cancel := env.WithBudget(ctx, DefaultBudget)
	defer cancel()
	start := time.Now()
	var tried []string
	var errs []error
	if env.Root != nil {
		seed := strings.TrimPrefix(SeedDir, "/")
		if fi, err := fs.Stat(env.Root, seed); err == nil && fi.IsDir() {
			sub, err := fs.Sub(env.Root, seed)
			if err != nil {
				return nil, fmt.Errorf("ovf: %s: %w", SeedDir, err)
			}
			tried = append(tried, SeedDir)
			props, err := readFS(sub, SeedDir, []string{"ovf-env.xml"})
			if err == nil {
				file := path.Join(SeedDir, "ovf-env.xml")
				d, err := Parse(props, file, file, env.DMI.ProductName)
				if err != nil {
					return nil, fmt.Errorf("ovf: %w", err)
				}
				log.Info("found", "path", file, "duration", time.Since(start))
				return d, nil
			}
			if !errors.Is(err, datasource.ErrNotFound) {
				return nil, fmt.Errorf("ovf: %w", err)
			}
		}
	}
	for _, dev := range Candidates(env.Devices) {
		if err := ctx.Err(); err != nil {
			errs = append(errs, fmt.Errorf("ovf: before %s: %w", dev.Path, err))
			break
		}
		tried = append(tried, dev.Path)
		fsys, closeFS, err := env.Open(dev)
		if err != nil {
			errs = append(errs, fmt.Errorf("ovf: %w", err))
			continue
		}
		props, err := readFS(fsys, dev.Path, EnvFileNames())
		closeFS()
		if err != nil {
			if !errors.Is(err, datasource.ErrNotFound) {
				log.Warn("unreadable OVF environment", "path", dev.Path, "error", err)
				errs = append(errs, fmt.Errorf("ovf: %w", err))
			}
			continue
		}
		d, err := Parse(props, dev.Path, "iso", env.DMI.ProductName)
		if err != nil {
			return nil, fmt.Errorf("ovf: %w", err)
		}
		log.Info("found", "path", dev.Path, "duration", time.Since(start))
		return d, nil
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	what := "nothing"
	if len(tried) > 0 {
		what = strings.Join(tried, ", ")
	}
	return nil, fmt.Errorf("ovf: no OVF environment (looked at %s; ISO9660 labels %s): %w", what, strings.Join(Labels(), "/"), datasource.ErrNotFound)
}
