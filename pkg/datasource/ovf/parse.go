package ovf

// Pure parsing: the OVF environment document and the Data built from its
// properties.

import (
	"bytes"
	"encoding/base64"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
	"github.com/cloudroot/cloudroot/pkg/datasource"
)

// EnvNS is the OVF environment's XML namespace.
const EnvNS = "http://schemas.dmtf.org/ovf/environment/1"

// DefaultInstanceID is cloud-init's instance-id when the environment has
// none.
const DefaultInstanceID = "iid-dsovf"

// ErrSeedFrom is returned for an environment whose seedfrom property
// points elsewhere: cloudroot does not follow it.
var ErrSeedFrom = errors.New("seedfrom is not supported")

// ParseOVFEnv reads an OVF environment document (ovf-env.xml) as
// cloud-init's get_properties does: the root element must be Environment
// with children; the properties are the Property elements directly under
// the first PropertySection directly under the root, keyed by their
// oe:key and valued by their oe:value attributes (namespace EnvNS; a later
// key replaces an earlier one).
func ParseOVFEnv(b []byte) (map[string]string, error) {
	dec := xml.NewDecoder(bytes.NewReader(b))
	dec.Strict = true
	depth := 0
	rootSeen, rootChildren := false, false
	inSection, sectionDone := false, false
	var props map[string]string
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			switch {
			case depth == 1:
				if rootSeen {
					return nil, errors.New("more than one root element")
				}
				rootSeen = true
				if t.Name.Local != "Environment" {
					return nil, fmt.Errorf("root element is %s, not Environment", t.Name.Local)
				}
			case depth == 2:
				rootChildren = true
				if t.Name.Local == "PropertySection" && !sectionDone {
					inSection = true
					if props == nil {
						props = map[string]string{}
					}
				}
			case depth == 3 && inSection && t.Name.Local == "Property":
				var key, val *string
				for _, a := range t.Attr {
					if a.Name.Space != EnvNS {
						continue
					}
					v := a.Value
					switch a.Name.Local {
					case "key":
						key = &v
					case "value":
						val = &v
					}
				}
				if key == nil || val == nil {
					return nil, errors.New("a Property without oe:key and oe:value")
				}
				props[*key] = *val
			}
		case xml.EndElement:
			if depth == 2 && inSection {
				inSection, sectionDone = false, true
			}
			depth--
		case xml.CharData:
			if depth == 1 && len(bytes.TrimSpace(t)) > 0 {
				rootChildren = true
			}
		}
	}
	switch {
	case !rootSeen:
		return nil, errors.New("no Environment element")
	case !rootChildren:
		return nil, errors.New("Environment has no child nodes")
	case props == nil:
		return nil, errors.New("no PropertySection")
	}
	return props, nil
}

// Parse builds Data from an environment's properties, found at seed
// (cloud-init's seed: the seed file's path, or "iso" for a device) and
// with product the DMI system product name ("VMware" makes the
// subplatform "vmware (...)").
func Parse(props map[string]string, source, seed, product string) (*datasource.Data, error) {
	md := map[string]any{}
	var ud []byte
	cfg := map[string]any{}
	var netcfg map[string]any
	for key, val := range props {
		if key == "hostname" {
			key = "local-hostname"
		}
		switch key {
		case "seedfrom", "local-hostname", "public-keys", "instance-id":
			md[key] = val
		case "password":
			cfg[key] = val
		case "network-config":
			// cloud-init ignores a network-config that is not base64 YAML
			// with a `network` mapping.
			b, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(val), ""))
			if err != nil {
				continue
			}
			m, err := datasource.DecodeYAMLMap(b)
			if err != nil {
				continue
			}
			if n, ok := m["network"].(map[string]any); ok {
				md[key] = n
				netcfg = n
			}
		case "user-data":
			b, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(val), ""))
			if err != nil {
				b = []byte(val)
			}
			ud = b
		}
	}
	// A hostname property overrides local-hostname as in cloud-init, where
	// the later of the two in document order wins; props has no order, so
	// prefer the explicit local-hostname.
	if v, ok := props["local-hostname"]; ok {
		md["local-hostname"] = v
	}
	if s, ok := md["seedfrom"].(string); ok {
		return nil, fmt.Errorf("%s: seedfrom %q: %w", source, s, ErrSeedFrom)
	}
	if _, ok := md["instance-id"]; !ok {
		md["instance-id"] = DefaultInstanceID
	}
	kind := "ovf"
	if strings.EqualFold(strings.TrimSpace(product), "vmware") {
		kind = "vmware"
	}
	d := &datasource.Data{
		Name: "OVF", Platform: "ovf", CloudName: datasource.MetaCloudName(md, "ovf"), Mode: "net",
		Subplatform: kind + " (" + seed + ")", MetaData: md, UserData: ud, NetworkConfig: netcfg,
		PublicKeys: datasource.NormalizePubKeys(md["public-keys"]),
	}
	d.AvailabilityZone, d.Region = datasource.MetaZoneRegion(md)
	if len(cfg) > 0 {
		d.Config = cfg
	}
	return d, nil
}

// Labels are the ISO9660 labels of an OVF transport volume (compared
// case-insensitively).
func Labels() []string { return []string{"OVF-TRANSPORT", "OVFENV", "OVF ENV"} }

// Candidates are the ISO9660 devices with an OVF transport label, in the
// order given.
func Candidates(devs []bootenv.Device) []bootenv.Device {
	var out []bootenv.Device
	for _, d := range devs {
		if d.FS.Type != "iso9660" {
			continue
		}
		for _, l := range Labels() {
			if strings.EqualFold(d.FS.Label, l) {
				out = append(out, d)
				break
			}
		}
	}
	return out
}

// EnvFileNames are the names the environment file may have on a transport
// volume, as cloud-init tries them.
func EnvFileNames() []string {
	return []string{"ovf-env.xml", "ovf_env.xml", "OVF_ENV.XML", "OVF-ENV.XML"}
}
