package ibmcloud

// Pure parsing: which IBM Cloud boot this is (get_ibm_platform), and Data
// from the config disk's openstack/latest files (metadata_from_dir).

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/openstack"
)

// Platform is cloud-init's name for the kind of IBM Cloud boot; it is the
// start of the subplatform.
type Platform string

// The platforms of DataSourceIBMCloud.Platforms.
const (
	// TemplateLiveMetadata: booted from an image template after
	// provisioning, with user-data on a disk labelled METADATA.
	TemplateLiveMetadata Platform = "Template/Live/Metadata"
	// TemplateProvisioningMetadata and TemplateProvisioningNodata: the
	// provisioning boot of a template, with or without a METADATA disk.
	// cloud-init is disabled then.
	TemplateProvisioningMetadata Platform = "Template/Provisioning/Metadata"
	TemplateProvisioningNodata   Platform = "Template/Provisioning/No-Metadata"
	// OSCode: launched by OS code, with a config-2 disk whose filesystem
	// UUID is ConfigUUID.
	OSCode Platform = "OS-Code/Live"
)

// Provisioning reports whether p is a provisioning boot.
func (p Platform) Provisioning() bool {
	return p == TemplateProvisioningMetadata || p == TemplateProvisioningNodata
}

// ConfigUUID is the filesystem UUID of IBM Cloud's config-2 disk (what
// tells it from an OpenStack config drive).
const ConfigUUID = "9796-932E"

// Labels of the disks get_ibm_platform looks for (compared upper-cased).
const (
	LabelMetadata = "METADATA"
	LabelConfig2  = "CONFIG-2"
)

// Facts are what get_ibm_platform looks at.
type Facts struct {
	// Xen is set when running on Xen (cloud-init: /proc/xen exists).
	Xen bool
	// Devices are the block devices with their filesystems (blkid).
	Devices []bootenv.Device
	// Provisioning is _is_ibm_provisioning's answer.
	Provisioning bool
}

// Detect is get_ibm_platform: the platform and the disk to read (none for
// TemplateProvisioningNodata). ok is false when this is not IBM Cloud.
// Devices are taken in path order; the first with each label counts, and
// a config-2 disk only with the UUID ConfigUUID.
func Detect(f Facts) (p Platform, dev bootenv.Device, ok bool) {
	if !f.Xen {
		return "", dev, false
	}
	devs := append([]bootenv.Device(nil), f.Devices...)
	sort.SliceStable(devs, func(i, j int) bool { return devs[i].Path < devs[j].Path })
	var meta, cfg2 *bootenv.Device
	for i := range devs {
		d := &devs[i]
		switch strings.ToUpper(d.FS.Label) {
		case LabelMetadata:
			if meta == nil {
				meta = d
			}
		case LabelConfig2:
			if cfg2 == nil && strings.EqualFold(d.FS.UUID, ConfigUUID) {
				cfg2 = d
			}
		}
	}
	switch {
	case cfg2 != nil:
		return OSCode, *cfg2, true
	case meta != nil && f.Provisioning:
		return TemplateProvisioningMetadata, *meta, true
	case meta != nil:
		return TemplateLiveMetadata, *meta, true
	case f.Provisioning:
		return TemplateProvisioningNodata, dev, true
	}
	return "", dev, false
}

// Paths on the disk (only "latest": IBM Cloud has no dated versions).
const (
	PathMetaData    = "openstack/latest/meta_data.json"
	PathUserData    = "openstack/latest/user_data"
	PathVendorData  = "openstack/latest/vendor_data.json"
	PathNetworkData = "openstack/latest/network_data.json"
)

// DefaultInstanceID is cloud-init's instance-id for meta-data without one
// (DataSource.get_instance_id).
const DefaultInstanceID = "iid-datasource"

// ErrBroken marks a disk that is there but unusable (cloud-init's
// BrokenMetadata).
var ErrBroken = errors.New("broken IBM Cloud metadata")

// Input is what the disk holds.
type Input struct {
	Platform Platform
	// Source is the disk's path.
	Source string
	// The files under openstack/latest; nil means absent.
	MetaData, UserData, VendorData, NetworkData []byte
}

// ParseMetaData is metadata_from_dir's translation of meta_data.json: only
// random_seed (which must be base64) and the renamed keys public_keys →
// public-keys, hostname → local-hostname, uuid → instance-id are kept.
func ParseMetaData(b []byte) (map[string]any, error) {
	raw, err := openstack.ParseMetaData(b)
	if err != nil {
		return nil, err
	}
	md := map[string]any{}
	if rs, ok := raw["random_seed"]; ok {
		s, ok := rs.(string)
		if !ok {
			return nil, fmt.Errorf("badly formatted metadata random_seed entry: %T, not a string", rs)
		}
		if err := checkBase64(s); err != nil {
			return nil, fmt.Errorf("badly formatted metadata random_seed entry: %w", err)
		}
		md["random_seed"] = s
	}
	for _, r := range [][2]string{{"public_keys", "public-keys"}, {"hostname", "local-hostname"}, {"uuid", "instance-id"}} {
		if v, ok := raw[r[0]]; ok {
			md[r[1]] = v
		}
	}
	return md, nil
}

// checkBase64 decodes s as Python's b64decode does by default: characters
// outside the alphabet are skipped, the padding must be right.
func checkBase64(s string) error {
	_, err := datasource.DecodeBase64(s)
	return err
}

// Build turns the disk's files into Data as DataSourceIBMCloud does.
// meta_data.json is required; any of the JSON files that does not decode
// is ErrBroken. Vendor data that convert_vendordata rejects is dropped
// with a warning to log (nil discards). Network configuration: on
// OSCode, network_data.json under datasource.NetworkKeyOpenStack (none
// without it); on a template boot, {config: disabled}: the provisioning
// boot configured the network.
func Build(in Input, log *slog.Logger) (*datasource.Data, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	broken := func(path string, err error) error {
		return fmt.Errorf("%s: decoding %s (%w): %w", in.Source, path, ErrBroken, err)
	}
	if in.MetaData == nil {
		return nil, fmt.Errorf("%s: missing required file '%s': %w", in.Source, PathMetaData, ErrBroken)
	}
	md, err := ParseMetaData(in.MetaData)
	if err != nil {
		return nil, broken(PathMetaData, err)
	}
	var vendor any
	if in.VendorData != nil {
		if err := json.Unmarshal(in.VendorData, &vendor); err != nil {
			return nil, broken(PathVendorData, err)
		}
	}
	var network map[string]any
	if in.NetworkData != nil {
		if network, err = openstack.ParseNetworkData(in.NetworkData); err != nil {
			return nil, broken(PathNetworkData, err)
		}
	}
	if _, ok := md["instance-id"]; !ok {
		md["instance-id"] = DefaultInstanceID
	}
	d := &datasource.Data{
		Name:        "IBMCloud",
		Platform:    "ibmcloud",
		CloudName:   "ibmcloud",
		Subplatform: fmt.Sprintf("%s (%s)", in.Platform, in.Source),
		Mode:        "net",
		MetaData:    md,
		UserData:    in.UserData,
		PublicKeys:  datasource.NormalizePubKeys(md["public-keys"]),
	}
	if in.VendorData != nil {
		if d.VendorData, err = openstack.ConvertVendorData(in.VendorData); err != nil {
			log.Warn("invalid content in vendor-data, ignored", "path", in.Source+"/"+PathVendorData, "error", err)
			d.VendorData = nil
		}
	}
	switch {
	case in.Platform != OSCode:
		d.NetworkConfig = map[string]any{"version": 1, "config": "disabled"}
	case network != nil:
		d.NetworkConfig = map[string]any{datasource.NetworkKeyOpenStack: network}
	}
	return d, nil
}
