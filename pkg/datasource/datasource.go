// Package datasource defines what every datasource produces: the instance's
// meta-data, user-data, vendor-data and network configuration, plus the
// names cloud-init reports for it (status.json, instance-data v1). Each
// cloud lives in its own subpackage behind this small contract.
package datasource

import (
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/yaml11"
)

// Sentinel errors callers branch on (always with errors.Is: sources wrap
// them with what was tried).
var (
	// ErrNotFound means the datasource is not present on this machine.
	ErrNotFound = errors.New("datasource not found")
	// ErrNeedNetwork means the datasource can only be probed over a network
	// that is not up (Env.NetworkUp is false): bring one up and ask again.
	ErrNeedNetwork = errors.New("datasource needs the network")
)

// Data is one datasource's answer.
type Data struct {
	// Name is cloud-init's datasource name ("NoCloud").
	Name string
	// Subplatform is instance-data v1.subplatform, e.g. "config-disk (/dev/sr0)".
	Subplatform string
	// Platform is v1.platform ("nocloud"); CloudName is v1.cloud_name.
	Platform  string
	CloudName string
	// Mode is the dsmode ("local" or "net").
	Mode string
	// NetworkStage is true when cloud-init finds this answer only in its
	// network init stage: the source has no init-local variant (AltCloud,
	// Bigstep, CloudCIX, Exoscale), or its local variant declines (Ec2Local
	// off AWS and Outscale, MAASLocal without a klibc initramfs network,
	// NoCloud's seed read over the network, which is NoCloudNet's). It
	// decides what cloud-init leaves in data/previous-instance-id (see
	// pkg/stages) and the class Description names.
	NetworkStage bool `json:",omitempty"`

	MetaData   map[string]any
	UserData   []byte
	VendorData []byte
	// NetworkConfig is a network-config v1/v2 document, or (with no
	// "version" key) one of the raw descriptions named by the NetworkKey*
	// constants, left for pkg/netconfig to convert.
	NetworkConfig map[string]any

	// The fields below are optional; the zero value means "not given".

	// Hostname, when set, is the hostname to use instead of meta-data's
	// local-hostname (GCE: the short name of instance/hostname).
	Hostname string

	// AvailabilityZone and Region are instance-data v1.availability_zone
	// and v1.region.
	AvailabilityZone string
	Region           string
	// PublicKeys are the SSH public keys the platform gives the default
	// user (cloud-init's get_public_ssh_keys), one key a string.
	PublicKeys []string
	// VendorData2 is OpenStack's second vendor-data (vendor_data2.json).
	VendorData2 []byte
	// Config is configuration the datasource itself provides
	// (get_config_obj), merged below user-data.
	Config map[string]any
	// Files are files a datasource injects into the root on a new instance,
	// by absolute path (OpenStack's `files`, content/NNNN on a config drive).
	Files map[string][]byte
	// FileModes are the modes of Files by path (0660 when absent, as
	// cloud-init's write_injected_files).
	FileModes map[string]fs.FileMode
	// FilesEveryBoot writes Files on every boot, not only on a new
	// instance (SmartOS rewrites its scripts each boot).
	FilesEveryBoot bool
	// FileOps run after Files are written, in order and on the same
	// schedule (SmartOS removes scripts whose keys went away, links
	// /var/db/user-script and renames its provisioning marker).
	FileOps []FileOp `json:",omitempty"`
	// NetworkUpdateEvents are the source's default network update events
	// (cloud-init's default_update_events, Event* names); nil means
	// boot-new-instance only. Kept in the cache with the rest.
	NetworkUpdateEvents []string `json:",omitempty"`
	// Describe, when set, is str(DataSource) for sources whose text needs
	// more than the fields here (see Description).
	Describe string `json:",omitempty"`
	// NetworkConfigSources is the source's order of network configuration
	// sources (cloud-init's network_config_sources: "cmdline",
	// "initramfs", "system_cfg", "ds"); nil means cloud-init's default,
	// in that order. Oracle puts "ds" before "initramfs".
	NetworkConfigSources []string `json:",omitempty"`
	// DS holds what the datasource read besides meta-data, for
	// instance-data's "ds" key (Ec2 "dynamic", OpenStack "ec2_metadata",
	// "network_json"); user-data and vendor-data never go here.
	DS map[string]any
}

// SubplatformUnknown is cloud-init's subplatform for a source that records
// no metadata address or seed (METADATA_UNKNOWN): Hetzner, Vultr,
// Exoscale, Akamai and Scaleway report it, whatever URL they read.
const SubplatformUnknown = "unknown"

// FileOp is one change a datasource makes in the target root besides
// writing Files.
type FileOp struct {
	// Op is FileRemove (Path, if it exists), FileSymlink (Path becomes a
	// symlink to Target) or FileRename (Path, if it exists, becomes
	// Target).
	Op     string `json:"op"`
	Path   string `json:"path"`
	Target string `json:"target,omitempty"`
}

// FileOp operations.
const (
	FileRemove  = "remove"
	FileSymlink = "symlink"
	FileRename  = "rename"
)

// Keys of Data.NetworkConfig under which a datasource hands on the
// platform's own network description unconverted (there is then no
// "version" key). Converting them is pkg/netconfig's job.
const (
	// NetworkKeyOpenStack holds OpenStack's network_data.json (links,
	// networks, services) as decoded JSON.
	NetworkKeyOpenStack = "openstack_network_data"
	// NetworkKeyENI holds legacy Debian /etc/network/interfaces text (a
	// config drive's meta_data.json `network_config` content).
	NetworkKeyENI = "eni"
	// NetworkKeyEc2 holds the EC2 meta-data tree under
	// network/interfaces/macs/ (mac → {device-number, local-ipv4s, ...}).
	NetworkKeyEc2 = "ec2_macs"
	// NetworkKeyVMware holds a VMware customization's network sections
	// of cust.cfg ("SECTION|key" → value).
	NetworkKeyVMware = "vmware_imc_cust_cfg"
)

// CloudID is instance-data v1.cloud_id: cloud-init's canonical_cloud_id
// from the cloud name, region and platform ("aws-china" for AWS in cn-*,
// "aws-gov" in us-gov-*, "azure-china" for Azure in china*, else the cloud
// name, else the platform).
func (d *Data) CloudID() string {
	name, region := d.CloudName, d.Region
	if name == "" {
		name = "unknown"
	}
	if region != "" && region != "unknown" {
		switch {
		case strings.HasPrefix(region, "cn-") && name == "aws":
			return "aws-china"
		case strings.HasPrefix(region, "us-gov-") && name == "aws":
			return "aws-gov"
		case strings.HasPrefix(region, "china") && name == "azure":
			return "azure-china"
		}
	}
	if name != "unknown" {
		return name
	}
	return d.Platform
}

// NormalizePubKeys is cloud-init's normalize_pubkey_data: a string is split
// into lines, a list is taken as is, a mapping contributes its values
// (strings or lists of strings, in key order). Blank lines and comments are
// dropped.
func NormalizePubKeys(v any) []string {
	var out []string
	var add func(any)
	add = func(v any) {
		switch t := v.(type) {
		case string:
			for _, l := range strings.Split(t, "\n") {
				if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
					out = append(out, l)
				}
			}
		case []any:
			for _, e := range t {
				add(e)
			}
		case []string:
			for _, e := range t {
				add(e)
			}
		case map[string]any:
			keys := make([]string, 0, len(t))
			for k := range t {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				add(t[k])
			}
		}
	}
	add(v)
	return out
}

// MetaCloudName is cloud-init's DataSource.cloud_name: meta-data's
// `cloud-name` lowercased when it is a non-empty string, else def (the
// source's own name for its cloud).
func MetaCloudName(md map[string]any, def string) string {
	if s, ok := md["cloud-name"].(string); ok && s != "" {
		return strings.ToLower(s)
	}
	return def
}

// MetaZoneRegion is cloud-init's DataSource.availability_zone and region
// for a source that does not override them: meta-data's
// availability-zone (else availability_zone, else
// placement/availability-zone) and region.
func MetaZoneRegion(md map[string]any) (zone, region string) {
	for _, k := range []string{"availability-zone", "availability_zone"} {
		if z := metaText(md[k]); z != "" {
			zone = z
			break
		}
	}
	if zone == "" {
		if p, ok := md["placement"].(map[string]any); ok {
			zone = metaText(p["availability-zone"])
		}
	}
	return zone, metaText(md["region"])
}

// InstanceID is meta-data's instance-id.
func (d *Data) InstanceID() string { return metaText(d.MetaData["instance-id"]) }

// LocalHostname is Hostname, else meta-data's local-hostname. A
// `hostname` key alone is not one: cloud-init's get_hostname reads only
// local-hostname (sources that name the key otherwise map it, as
// OpenStack's hostname).
func (d *Data) LocalHostname() string {
	if d.Hostname != "" {
		return d.Hostname
	}
	return metaText(d.MetaData["local-hostname"])
}

// Description is str(DataSource) as cloud-init prints it in status.json
// and instances/<iid>/datasource: the class name, with the details the
// classes that override __str__ add (NoCloud "[seed=…]" and a dsmode
// other than net as "[dsmode=…]", OpenNebula "[seed=…][dsmode=…]", ConfigDrive "[net,ver=2][source=…]", OpenStack
// "[net,ver=2]", Azure/OVF/AltCloud/RbxCloud "[seed=…]"). The class is the
// one cloud-init finds in its local stage, where cloudroot finds every
// source (DataSourceEc2Local, DataSourceGCELocal, DataSourceOpenStackLocal,
// DataSourceUpCloudLocal, DataSourceAkamaiLocal) unless NetworkStage
// says cloud-init's network stage finds it (DataSourceEc2 off AWS,
// DataSourceNoCloudNet for a seed read over the network). Describe, when set,
// replaces it (SmartOS prints its metadata client).
func (d *Data) Description() string {
	if d.Describe != "" {
		return d.Describe
	}
	seed := d.Subplatform
	if i := strings.Index(seed, "("); i >= 0 && strings.HasSuffix(seed, ")") {
		seed = seed[i+1 : len(seed)-1]
	}
	mode := d.Mode
	if mode == "" {
		mode = "net"
	}
	class := "DataSource" + d.Name
	switch d.Name {
	case "NoCloud":
		// 26.x's DataSourceNoCloud.__str__ appends each part only when it
		// is not the default: no seed, no [dsmode=net] (22.4 printed both
		// always, as OpenNebula still does).
		if d.NetworkStage {
			class += "Net"
		}
		desc := class + " "
		if seed != "" {
			desc += "[seed=" + seed + "]"
		}
		if mode != "net" {
			desc += "[dsmode=" + mode + "]"
		}
		return desc
	case "OpenNebula":
		return fmt.Sprintf("%s [seed=%s][dsmode=%s]", class, seed, mode)
	case "ConfigDrive":
		return fmt.Sprintf("%s [%s,ver=2][source=%s]", class, mode, seed)
	case "OpenStack":
		return fmt.Sprintf("%sLocal [%s,ver=2]", class, mode)
	case "Azure", "OVF", "AltCloud", "RbxCloud":
		return fmt.Sprintf("%s [seed=%s]", class, seed)
	case "Ec2", "GCE", "UpCloud", "Akamai":
		if d.NetworkStage {
			return class
		}
		return class + "Local"
	}
	return class
}

// metaText is a meta-data value as the text Data's accessors give: a
// string as is, null as "", anything else Go's fmt form. It is not
// Python's str() (that is pyval.Str: None, 1.0): an absent or null
// instance-id must read as none, and a numeric one has always read as
// its digits.
func metaText(v any) string {
	switch t := v.(type) {
	case nil:
		return ""
	case string:
		return t
	}
	return fmt.Sprint(v)
}

// DecodeYAMLMap decodes YAML (or JSON) text into a map with string keys all
// the way down, as JSON needs, reading it as cloud-init does (pkg/yaml11:
// PyYAML's SafeLoader). Empty input gives an empty map. Repeated keys keep
// their last value; callers that report them use yaml11.LoadMap.
func DecodeYAMLMap(b []byte) (map[string]any, error) {
	m, _, err := yaml11.LoadMap("", b)
	return m, err
}

// Normalize turns map[any]any (from YAML) into map[string]any recursively.
func Normalize(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			t[k] = Normalize(e)
		}
		return t
	case map[any]any:
		m := make(map[string]any, len(t))
		for k, e := range t {
			m[fmt.Sprint(k)] = Normalize(e)
		}
		return m
	case []any:
		for i, e := range t {
			t[i] = Normalize(e)
		}
		return t
	}
	return v
}
