// Package nocloud is cloud-init's NoCloud datasource: a seed of meta-data,
// user-data, vendor-data and network-config files read from a filesystem
// labelled cidata/CIDATA (ISO9660 or FAT, read straight from the block device
// with go-diskfs, no kernel filesystem driver needed), from a seed directory
// in the target root, or from `ds=nocloud;s=...` on the kernel command line
// or in the SMBIOS system serial number, with `i=`/`h=` overrides.
package nocloud

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/datasource"
)

// Labels are the filesystem labels a NoCloud seed volume may carry.
var Labels = []string{"cidata", "CIDATA"}

// Overrides are values given by `ds=nocloud;i=...;h=...`.
type Overrides struct {
	InstanceID string
	Hostname   string
}

// Read reads a seed from fsys (its root holds meta-data, user-data, ...).
// subplatform is cloud-init's description, e.g. "config-disk (/dev/sr0)" or
// "seed-dir (/var/lib/cloud/seed/nocloud)". Missing meta-data or user-data
// is an error (cloud-init requires both); vendor-data and network-config are
// optional. Parse errors name the file.
func Read(fsys fs.FS, subplatform string, ov Overrides) (*datasource.Data, error) {
	files := map[string][]byte{}
	var errs []error
	for _, name := range []string{"meta-data", "user-data", "vendor-data", "network-config"} {
		b, err := datasource.ReadFile(fsys, name)
		if err != nil {
			if datasource.IsNotExist(err) {
				continue
			}
			errs = append(errs, fmt.Errorf("nocloud: read %s from %s: %w", name, subplatform, err))
			continue
		}
		files[name] = b
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if _, ok := files["meta-data"]; !ok {
		return nil, fmt.Errorf("nocloud: %s has no meta-data: %w", subplatform, datasource.ErrNotFound)
	}
	if _, ok := files["user-data"]; !ok {
		return nil, fmt.Errorf("nocloud: %s has no user-data: %w", subplatform, datasource.ErrNotFound)
	}
	return Parse(files, subplatform, ov)
}

// Parse builds Data from the seed's file contents (pure).
func Parse(files map[string][]byte, subplatform string, ov Overrides) (*datasource.Data, error) {
	md, err := datasource.DecodeYAMLMap(files["meta-data"])
	if err != nil {
		return nil, fmt.Errorf("nocloud: meta-data in %s: %w", subplatform, err)
	}
	// cloud-init's NoCloud defaults.
	if _, ok := md["instance-id"]; !ok {
		md["instance-id"] = "nocloud"
	}
	if _, ok := md["dsmode"]; !ok {
		md["dsmode"] = "net"
	}
	if ov.InstanceID != "" {
		md["instance-id"] = ov.InstanceID
	}
	if ov.Hostname != "" {
		md["local-hostname"] = ov.Hostname
	}
	d := &datasource.Data{
		Name:     "NoCloud",
		Platform: "nocloud",
		// cloud-init's NoCloud names no cloud of its own ("unknown")
		// unless meta-data says `cloud-name`.
		CloudName:   datasource.MetaCloudName(md, "unknown"),
		Subplatform: subplatform,
		Mode:        fmt.Sprint(md["dsmode"]),
		MetaData:    md,
		UserData:    files["user-data"],
		VendorData:  files["vendor-data"],
	}
	d.AvailabilityZone, d.Region = datasource.MetaZoneRegion(md)
	if nc, ok := files["network-config"]; ok && len(strings.TrimSpace(string(nc))) > 0 {
		m, err := datasource.DecodeYAMLMap(nc)
		if err != nil {
			return nil, fmt.Errorf("nocloud: network-config in %s: %w", subplatform, err)
		}
		// cloud-init accepts the config wrapped in a top-level "network" key.
		if inner, ok := m["network"].(map[string]any); ok && len(m) == 1 {
			m = inner
		}
		d.NetworkConfig = m
	}
	// Without a network-config, legacy ENI text in meta-data's
	// network-interfaces (deprecated in cloud-init 24.3, still read) is the
	// network configuration, converted by pkg/netconfig.
	if eni, ok := md["network-interfaces"].(string); ok && d.NetworkConfig == nil {
		d.NetworkConfig = map[string]any{datasource.NetworkKeyENI: eni}
	}
	return d, nil
}
