package digitalocean

// Pure parsing: the metadata document and Data.

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strconv"

	"github.com/cloudroot/cloudroot/pkg/datasource"
)

// Parse decodes the metadata document: a JSON object.
func Parse(b []byte) (map[string]any, error) {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("expected a JSON object, got %T", v)
	}
	return m, nil
}

// scalar is a JSON scalar as text (integers without an exponent), "" for
// null, objects and lists.
func scalar(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case float64:
		return strconv.FormatFloat(t, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(t)
	}
	return ""
}

// blob is user_data or vendor_data: a string as is, null or "" as none; anything
// else is kept as its JSON text (cloud-init hands such a value on too).
func blob(v any) ([]byte, error) {
	switch t := v.(type) {
	case nil:
		return nil, nil
	case string:
		if t == "" {
			return nil, nil
		}
		return []byte(t), nil
	}
	return json.Marshal(v)
}

// Build turns the document fetched from url into Data as cloud-init's
// _get_data does: meta-data holds instance-id (droplet_id), local-hostname,
// public-keys, availability_zone (region, "default" when missing) and
// interfaces, and there is no region (cloud-init's v1.region is null
// here); ds.metadata_full holds the document without user_data and
// vendor_data.
func Build(url string, b []byte) (*datasource.Data, error) {
	md, err := Parse(b)
	if err != nil {
		return nil, err
	}
	id := scalar(md["droplet_id"])
	if id == "" {
		return nil, errors.New("no droplet_id")
	}
	region := scalar(md["region"])
	az := region
	if az == "" {
		az = "default"
	}
	hostname := scalar(md["hostname"])
	d := &datasource.Data{
		Name:        "DigitalOcean",
		Platform:    "digitalocean",
		CloudName:   "digitalocean",
		Subplatform: "metadata (" + url + ")",
		Mode:        "net",
		MetaData: map[string]any{
			"instance-id":       id,
			"local-hostname":    hostname,
			"public-keys":       md["public_keys"],
			"availability_zone": az,
			"interfaces":        md["interfaces"],
		},
		// No Region: cloud-init's DigitalOcean keeps the region only as
		// the availability zone, so instance-data v1.region is null.
		Hostname:         hostname,
		AvailabilityZone: az,
		PublicKeys:       datasource.NormalizePubKeys(md["public_keys"]),
	}
	if d.UserData, err = blob(md["user_data"]); err != nil {
		return nil, fmt.Errorf("user_data: %w", err)
	}
	if d.VendorData, err = blob(md["vendor_data"]); err != nil {
		return nil, fmt.Errorf("vendor_data: %w", err)
	}
	full := maps.Clone(md)
	delete(full, "user_data")
	delete(full, "vendor_data")
	d.DS = map[string]any{"metadata_full": full}
	if _, ok := md["interfaces"]; ok {
		d.NetworkConfig = map[string]any{NetworkKey: full}
	}
	return d, nil
}
