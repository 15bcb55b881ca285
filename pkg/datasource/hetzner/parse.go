package hetzner

// Pure parsing: the metadata YAML, private networks, user-data, Data.

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/internal/jsondoc"
	"github.com/cloudroot/cloudroot/pkg/netconfig"
	"github.com/cloudroot/cloudroot/pkg/yaml11"
)

// Input is what the metadata service answered.
type Input struct {
	// URL is the metadata URL.
	URL string
	// Metadata is the metadata YAML; PrivateNetworks the private-networks
	// YAML (nil: none); Userdata the user-data (nil: none).
	Metadata, PrivateNetworks, Userdata []byte
	// Serial is the DMI system serial ("" skips the check).
	Serial string
}

// MaybeBase64 is cloud-init's maybe_b64decode: strictly valid base64 is
// decoded, anything else is kept.
func MaybeBase64(b []byte) []byte {
	if len(b) == 0 || bytes.ContainsAny(b, "\r\n") {
		return b
	}
	out, err := base64.StdEncoding.Strict().DecodeString(string(b))
	if err != nil {
		return b
	}
	return out
}

// ParsePrivateNetworks decodes the private-networks YAML: a list (empty
// input: none).
func ParsePrivateNetworks(b []byte) ([]any, error) {
	v, _, err := yaml11.Load("private-networks", b)
	if err != nil {
		return nil, err
	}
	switch t := v.(type) {
	case nil:
		return nil, nil
	case []any:
		return t, nil
	default:
		return nil, fmt.Errorf("expected a list, got %T", t)
	}
}

// Build turns the service's answers into Data as cloud-init's _get_data
// does. meta-data is the metadata mapping with instance-id (as text),
// local-hostname and, when given, private-networks added.
func Build(in Input) (*datasource.Data, error) {
	md, err := datasource.DecodeYAMLMap(in.Metadata)
	if err != nil {
		return nil, fmt.Errorf("metadata: %w", err)
	}
	id := jsondoc.Scalar(md["instance-id"])
	if id == "" {
		return nil, errors.New("metadata: no instance-id")
	}
	hostname := jsondoc.Scalar(md["hostname"])
	if hostname == "" {
		return nil, errors.New("metadata: no hostname")
	}
	if in.Serial != "" && in.Serial != id {
		return nil, fmt.Errorf("SMBIOS serial %q does not match the instance-id %q", in.Serial, id)
	}
	md["instance-id"] = id
	md["local-hostname"] = hostname
	if in.PrivateNetworks != nil {
		pn, err := ParsePrivateNetworks(in.PrivateNetworks)
		if err != nil {
			return nil, fmt.Errorf("private-networks: %w", err)
		}
		if pn != nil {
			md["private-networks"] = pn
		}
	}
	d := &datasource.Data{
		NetworkUpdateEvents: NetworkUpdateEvents,
		Name:                "Hetzner",
		Platform:            "hetzner",
		CloudName:           "hetzner",
		Subplatform:         datasource.SubplatformUnknown, // as cloud-init: no metadata_address
		Mode:                "net",
		MetaData:            md,
		// No Region or AvailabilityZone: cloud-init's Hetzner keeps only
		// instance-id, local-hostname, network-config, public-keys and
		// private-networks as its metadata, so v1.region and
		// v1.availability_zone are null (the values stay in MetaData).
		Hostname:   hostname,
		PublicKeys: datasource.NormalizePubKeys(md["public-keys"]),
	}
	if in.Userdata != nil {
		d.UserData = MaybeBase64(in.Userdata)
	}
	switch v := md["vendor_data"].(type) {
	case nil:
	case string:
		d.VendorData = []byte(v)
	default:
		return nil, fmt.Errorf("metadata: vendor_data: unsupported %T", v)
	}
	delete(md, "vendor_data")
	if nc, ok := md["network-config"].(map[string]any); ok && len(nc) > 0 {
		d.NetworkConfig = netconfig.HetznerNetworkConfig(nc, md["private-networks"])
	}
	return d, nil
}
