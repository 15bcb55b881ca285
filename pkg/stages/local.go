package stages

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/nocloud"
	"github.com/cloudroot/cloudroot/pkg/target"
)

// LocalInput is what the NoCloud search looks at.
type LocalInput struct {
	Cmdline bootenv.Cmdline
	DMI     bootenv.DMI
	// Devices are the block devices seen (with probed filesystems).
	Devices []bootenv.Device
	// Target is the root filesystem: seed directories and file seedfrom
	// paths are read from it.
	Target *target.Root
	Log    *slog.Logger
	// ReadDevice reads a seed from a block device (nocloud.ReadDevice).
	ReadDevice func(dev string, ov nocloud.Overrides) (*datasource.Data, error)
}

// SeedDirs are the NoCloud seed directories cloud-init checks in the root.
var SeedDirs = []string{"/var/lib/cloud/seed/nocloud", "/var/lib/cloud/seed/nocloud-net"}

// FindNoCloud looks for a NoCloud seed the way cloud-init's DataSourceNoCloud
// does, in this order: a `ds=nocloud;s=<path>` seedfrom (kernel command line,
// then SMBIOS serial), the seed directories in the target, then filesystems
// labelled cidata/CIDATA. `i=` and `h=` override instance-id and
// local-hostname. It returns datasource.ErrNotFound (wrapped, with what was
// tried) when there is no seed; other errors are seeds that exist but could
// not be read.
func FindNoCloud(in LocalInput) (*datasource.Data, error) {
	var ov nocloud.Overrides
	var seedfrom string
	arg, ok := in.Cmdline.DS()
	if !ok || !arg.NoCloud() {
		arg, ok = in.DMI.DS()
	}
	if ok && arg.NoCloud() {
		ov = nocloud.Overrides{InstanceID: arg.InstanceID, Hostname: arg.Hostname}
		seedfrom = arg.SeedFrom
	}
	var tried []string
	var errs []error
	if seedfrom != "" {
		if arg.Network() {
			errs = append(errs, fmt.Errorf("nocloud: seedfrom %s needs the network, which this build does not bring up in the initramfs yet", seedfrom))
		} else {
			p := strings.TrimPrefix(seedfrom, "file://")
			d, err := readSeedDir(in.Target, p, "seed-dir ("+p+")", ov)
			if err == nil {
				return d, nil
			}
			tried = append(tried, "seedfrom "+p)
			errs = append(errs, err)
		}
	}
	for _, dir := range SeedDirs {
		d, err := readSeedDir(in.Target, dir, "seed-dir ("+dir+")", ov)
		if err == nil {
			return d, nil
		}
		tried = append(tried, dir)
		if !errors.Is(err, datasource.ErrNotFound) {
			errs = append(errs, err)
		}
	}
	for _, dev := range seedDevices(in.Devices) {
		tried = append(tried, dev.Path)
		d, err := in.ReadDevice(dev.Path, ov)
		if err == nil {
			return d, nil
		}
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return nil, fmt.Errorf("nocloud: no seed (looked at %s and for filesystems labelled cidata): %w", strings.Join(tried, ", "), datasource.ErrNotFound)
}

func readSeedDir(t *target.Root, dir, sub string, ov nocloud.Overrides) (*datasource.Data, error) {
	if t == nil {
		return nil, fmt.Errorf("nocloud: no root to read %s from: %w", dir, datasource.ErrNotFound)
	}
	hp, err := t.Resolve(path.Clean("/" + dir))
	if err != nil {
		return nil, err
	}
	if fi, err := os.Stat(hp); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("nocloud: %s: %w", dir, datasource.ErrNotFound)
	}
	return nocloud.Read(os.DirFS(hp), sub, ov)
}

// seedDevices are the devices holding an ISO9660 or FAT filesystem labelled
// cidata or CIDATA, in enumeration order.
func seedDevices(devs []bootenv.Device) []bootenv.Device {
	var out []bootenv.Device
	for _, d := range devs {
		if d.FS.Type != "iso9660" && d.FS.Type != "vfat" {
			continue
		}
		for _, l := range nocloud.Labels {
			if d.FS.Label == l {
				out = append(out, d)
				break
			}
		}
	}
	return out
}
