package vultr

// Pure parsing: v1.json, vendor-data, Data.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/internal/jsondoc"
)

// Boundary is the MIME boundary joining vendor-data parts (a suffix is
// added while a part contains it).
const Boundary = "==cloudroot-vultr-vendor-data=="

// VendorData is cloud-init's convert_vendordata for Vultr's vendor-data:
// empty is none, text is kept, an object stands for its `cloud-init`
// value (once), and a list gives one part per item (text as is, a mapping
// as a #cloud-config). Several parts become one multipart/mixed message
// of text/plain parts, which user-data processing types by their first
// line, as cloud-init does with a list.
func VendorData(v any) ([]byte, error) {
	return vendorData(v, true)
}

func vendorData(v any, recurse bool) ([]byte, error) {
	switch t := v.(type) {
	case nil:
		return nil, nil
	case string:
		if t == "" {
			return nil, nil
		}
		return []byte(t), nil
	case map[string]any:
		if !recurse {
			return nil, errors.New("vendor-data['cloud-init'] cannot be an object")
		}
		return vendorData(t["cloud-init"], false)
	case []any:
		var parts [][]byte
		for i, item := range t {
			switch it := item.(type) {
			case string:
				parts = append(parts, []byte(it))
			case map[string]any:
				j, err := json.Marshal(it)
				if err != nil {
					return nil, fmt.Errorf("vendor-data[%d]: %w", i, err)
				}
				parts = append(parts, append([]byte("#cloud-config\n"), j...))
			default:
				return nil, fmt.Errorf("vendor-data[%d]: unsupported %T", i, item)
			}
		}
		switch len(parts) {
		case 0:
			return nil, nil
		case 1:
			return parts[0], nil
		}
		return multipart(parts), nil
	}
	return nil, fmt.Errorf("vendor-data: unsupported %T", v)
}

func multipart(parts [][]byte) []byte {
	boundary := Boundary
	for n := 0; ; n++ {
		clash := false
		for _, p := range parts {
			if bytes.Contains(p, []byte(boundary)) {
				clash = true
			}
		}
		if !clash {
			break
		}
		boundary = Boundary + "." + strconv.Itoa(n)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "Content-Type: multipart/mixed; boundary=%q\nMIME-Version: 1.0\n\n", boundary)
	for i, p := range parts {
		fmt.Fprintf(&b, "--%s\nContent-Type: text/plain; charset=\"utf-8\"\nMIME-Version: 1.0\nContent-Disposition: attachment; filename=\"part-%03d\"\n\n", boundary, i+1)
		b.Write(p)
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "--%s--\n", boundary)
	return b.Bytes()
}

// Build turns v1.json fetched from url into Data as cloud-init's
// _get_data does.
func Build(url string, b []byte) (*datasource.Data, error) {
	doc, err := jsondoc.Object(b)
	if err != nil {
		return nil, err
	}
	id := jsondoc.Scalar(doc["instance-v2-id"])
	if id == "" {
		id = jsondoc.Scalar(doc["instanceid"])
	}
	if id == "" {
		return nil, errors.New("no instance-v2-id or instanceid")
	}
	hostname := jsondoc.Scalar(doc["hostname"])
	if hostname == "" {
		hostname = "guest"
	}
	region := ""
	if r, ok := doc["region"].(map[string]any); ok {
		region = jsondoc.Scalar(r["regioncode"])
		if c, ok := r["countrycode"]; ok {
			region = jsondoc.Scalar(c)
		}
	} else {
		region = jsondoc.Scalar(doc["region"])
	}
	region = strings.ToLower(region)

	md := maps.Clone(doc)
	delete(md, "user-data")
	delete(md, "vendor-data")
	md["instance-id"] = id
	md["local-hostname"] = hostname
	if region != "" {
		md["region"] = region
	}
	d := &datasource.Data{
		Name:        "Vultr",
		Platform:    "vultr",
		CloudName:   "vultr",
		Subplatform: datasource.SubplatformUnknown, // as cloud-init: no metadata_address
		Mode:        "net",
		MetaData:    md,
		Hostname:    hostname,
		Region:      region,
		PublicKeys:  datasource.NormalizePubKeys(doc["public-keys"]),
	}
	switch ud := doc["user-data"].(type) {
	case nil:
	case string:
		if ud != "" {
			d.UserData = []byte(ud)
		}
	case []any:
		// An empty list is what the service says when there is none.
		if len(ud) > 0 {
			if d.UserData, err = vendorData(ud, false); err != nil {
				return nil, fmt.Errorf("user-data: %w", err)
			}
		}
	default:
		return nil, fmt.Errorf("user-data: unsupported %T", ud)
	}
	if d.VendorData, err = VendorData(doc["vendor-data"]); err != nil {
		return nil, err
	}
	if ci, ok := doc["cloud_interfaces"].(map[string]any); ok && named(ci) {
		d.NetworkConfig = ci
	} else if _, ok := doc["interfaces"]; ok {
		d.NetworkConfig = map[string]any{NetworkKey: md}
	}
	return d, nil
}

// named: every physical entry of a v1 config has a name. cloud-init names
// cloud_interfaces' entries by MAC (add_interface_names); that needs the
// machine's links, so a config lacking names is handed on with the
// document instead.
func named(cfg map[string]any) bool {
	list, ok := cfg["config"].([]any)
	if !ok {
		return false
	}
	for _, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			return false
		}
		if m["type"] == "physical" && jsondoc.Scalar(m["name"]) == "" {
			return false
		}
	}
	return true
}
