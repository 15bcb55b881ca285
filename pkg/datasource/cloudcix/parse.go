package cloudcix

// Pure parsing: the metadata document and Data.

import (
	"encoding/json"
	"errors"
	"fmt"
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

// scalar is a JSON scalar as text, "" for null, objects and lists.
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

// Build turns the document fetched from url and the user-data (nil:
// none) into Data as cloud-init's _get_data does: the document is the
// meta-data.
func Build(url string, b, userData []byte) (*datasource.Data, error) {
	md, err := Parse(b)
	if err != nil {
		return nil, err
	}
	id := scalar(md["instance-id"])
	if id == "" {
		return nil, errors.New("no instance-id")
	}
	md["instance-id"] = id
	d := &datasource.Data{
		Name:         "CloudCIX",
		Platform:     "cloudcix",
		CloudName:    "cloudcix",
		Subplatform:  datasource.SubplatformUnknown, // as cloud-init: no metadata_address
		Mode:         "net",
		NetworkStage: true, // no init-local variant in cloud-init
		MetaData:     md,
		PublicKeys:   datasource.NormalizePubKeys(md["public-keys"]),
		UserData:     userData,
	}
	if h := scalar(md["local-hostname"]); h != "" {
		d.Hostname = h
	} else {
		d.Hostname = scalar(md["hostname"])
	}
	// `network` is a network config document (v2 as CloudCIX serves it),
	// the network configuration as is, as cloud-init's network_config.
	if n, ok := md["network"].(map[string]any); ok && len(n) > 0 {
		d.NetworkConfig = n
	}
	return d, nil
}
