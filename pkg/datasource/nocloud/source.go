package nocloud

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"time"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
	"github.com/cloudroot/cloudroot/pkg/datasource"
)

// SeedDirs are the seed directories in the target root, in the order
// cloud-init checks them.
func SeedDirs() []string {
	return []string{"/var/lib/cloud/seed/nocloud", "/var/lib/cloud/seed/nocloud-net"}
}

// DefaultBudget bounds one Get when Env.Budget is 0.
const DefaultBudget = 10 * time.Second

// DefaultTimeout bounds each request of a NoCloud-net seed unless the
// configuration's `timeout` says otherwise: cloud-init's read_seeded
// default (its NoCloud even passes none). A short one is a retry storm in
// the making: a seed server slowed by a boot storm gets every slow request
// again after the timeout while it is still serving the first. With imds'
// 1 s, 1000 instances on a loaded host made 1.6× the requests of a calm
// fleet (pkg/imdsserve's TestFleetNoCloudNet), and a server answering in
// 1.5 s was never read at all (TestNetworkSeedSlowServerNotRetried).
const DefaultTimeout = 5 * time.Second

// Source is NoCloud behind datasource.Source: the search cloud-init's
// DataSourceNoCloud makes, over Env. Order: a `ds=nocloud;s=<path>` seedfrom
// (command line, then SMBIOS serial) read from Env.Root, the seed
// directories in Env.Root, then ISO9660/FAT volumes labelled cidata/CIDATA
// through Env.OpenFS. A network (http, https) seedfrom answers
// ErrNeedNetwork until the network is up, then is fetched (NoCloud-net). A
// `seedfrom` in a local seed's meta-data is followed the same way.
type Source struct{}

var _ datasource.Source = (*Source)(nil)

// Name implements datasource.Source.
func (*Source) Name() string { return "NoCloud" }

// Doc implements datasource.Documented.
func (*Source) Doc() datasource.Doc {
	return datasource.Doc{
		Reads:         "`ds=nocloud;s=/path;i=;h=` (command line, SMBIOS serial), seeds `/var/lib/cloud/seed/nocloud{,-net}`, ISO9660/FAT volumes labelled `cidata`/`CIDATA` read with go-diskfs: `meta-data`, `user-data`, `vendor-data`, `network-config`; `seedfrom` in meta-data; http(s) seeds (NoCloud-net) fetched in parallel once the network is up",
		NetworkConfig: "`network-config` file (v1/v2, optionally wrapped in `network:`), else meta-data `network-interfaces` (ENI, converted)",
		Tests:         "seed maps and real ISO9660/FAT images through go-diskfs; overrides; errors; fuzzed meta-data/network-config parser; the Source adapter over Env; http(s) seeds and meta-data seedfrom against httptest; QEMU boots from ISO, FAT, cmdline seedfrom, SMBIOS serial, an http seed and seed dirs (integration/)",
	}
}

// Get implements datasource.Source.
func (s *Source) Get(ctx context.Context, env datasource.Env) (*datasource.Data, error) {
	ctx, cancel := env.WithBudget(ctx, DefaultBudget)
	defer cancel()
	arg, ok := env.Cmdline.DS()
	if !ok || !arg.NoCloud() {
		arg, ok = env.DMI.DS()
	}
	d, err := s.get(ctx, env, arg, ok)
	if err != nil {
		return nil, err
	}
	if ok && arg.NoCloud() {
		if m := ArgDSMode(arg); m != "" {
			d.MetaData["dsmode"] = m
			d.Mode = m
		}
	}
	if d.Mode == "disabled" {
		return nil, fmt.Errorf("nocloud: %s: dsmode is disabled: %w", d.Subplatform, datasource.ErrNotFound)
	}
	return d, nil
}

// ArgDSMode is the dsmode a `ds=nocloud` selection gives (cloud-init's
// load_cmdline_data), which wins over the seed's meta-data: its own
// `dsmode=`, else net for an http(s)/ftp(s) seedfrom and local for a
// file:// or absolute one, else (no seedfrom) local for nocloud and net
// for nocloud-net. "" when it gives none (a seedfrom of another kind).
func ArgDSMode(arg bootenv.DSArg) string {
	if m, ok := arg.Raw["dsmode"]; ok {
		return m
	}
	switch {
	case arg.SeedFrom == "":
		if strings.EqualFold(arg.Name, "nocloud-net") {
			return "net"
		}
		return "local"
	case arg.Network():
		return "net"
	case strings.HasPrefix(arg.SeedFrom, "file://") || strings.HasPrefix(arg.SeedFrom, "/"):
		return "local"
	}
	return ""
}

func (s *Source) get(ctx context.Context, env datasource.Env, arg bootenv.DSArg, ok bool) (*datasource.Data, error) {
	var ov Overrides
	var seedfrom string
	if ok && arg.NoCloud() {
		ov = Overrides{InstanceID: arg.InstanceID, Hostname: arg.Hostname}
		seedfrom = arg.SeedFrom
	}
	var tried []string
	var errs []error
	if seedfrom != "" {
		if arg.Network() {
			if !env.NetworkUp {
				return nil, fmt.Errorf("nocloud: seedfrom %s: %w", seedfrom, datasource.ErrNeedNetwork)
			}
			d, err := readURL(ctx, env, seedfrom, ov)
			if err == nil {
				return followSeedfrom(ctx, env, d, ov)
			}
			tried = append(tried, "seedfrom "+seedfrom)
			errs = append(errs, err)
		} else {
			p := strings.TrimPrefix(seedfrom, "file://")
			d, err := readRootDir(env.Root, p, ov)
			if err == nil {
				return followSeedfrom(ctx, env, d, ov)
			}
			tried = append(tried, "seedfrom "+p)
			errs = append(errs, err)
		}
	}
	for _, dir := range SeedDirs() {
		d, err := readRootDir(env.Root, dir, ov)
		if err == nil {
			return followSeedfrom(ctx, env, d, ov)
		}
		tried = append(tried, dir)
		if !errors.Is(err, datasource.ErrNotFound) {
			errs = append(errs, err)
		}
	}
	for _, dev := range labelled(env.Devices) {
		if err := ctx.Err(); err != nil {
			errs = append(errs, fmt.Errorf("nocloud: before %s: %w", dev.Path, err))
			break
		}
		tried = append(tried, dev.Path)
		fsys, closeFS, err := env.Open(dev)
		if err != nil {
			errs = append(errs, fmt.Errorf("nocloud: %w", err))
			continue
		}
		d, err := Read(fsys, "config-disk ("+dev.Path+")", ov)
		closeFS()
		if err == nil {
			return followSeedfrom(ctx, env, d, ov)
		}
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return nil, fmt.Errorf("nocloud: no seed (looked at %s and for filesystems labelled cidata): %w", strings.Join(tried, ", "), datasource.ErrNotFound)
}

func readRootDir(root fs.FS, dir string, ov Overrides) (*datasource.Data, error) {
	if root == nil {
		return nil, fmt.Errorf("nocloud: no root to read %s from: %w", dir, datasource.ErrNotFound)
	}
	p := strings.TrimPrefix(path.Clean("/"+dir), "/")
	if p == "" {
		p = "."
	}
	if fi, err := fs.Stat(root, p); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("nocloud: %s: %w", dir, datasource.ErrNotFound)
	}
	sub, err := fs.Sub(root, p)
	if err != nil {
		return nil, fmt.Errorf("nocloud: %s: %w", dir, err)
	}
	return Read(sub, "seed-dir ("+dir+")", ov)
}

// labelled are the ISO9660/FAT devices labelled cidata or CIDATA.
func labelled(devs []bootenv.Device) []bootenv.Device {
	var out []bootenv.Device
	for _, d := range devs {
		if d.FS.Type != "iso9660" && d.FS.Type != "vfat" {
			continue
		}
		for _, l := range Labels {
			if d.FS.Label == l {
				out = append(out, d)
				break
			}
		}
	}
	return out
}
