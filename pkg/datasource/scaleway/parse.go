package scaleway

// Pure parsing: the metadata document and Data.

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/datasource"
)

// Input is what the service answered.
type Input struct {
	// URL is the metadata document's URL.
	URL string
	// MetaData is the document; UserData and VendorData as served (nil:
	// none).
	MetaData, UserData, VendorData []byte
}

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

// authorizedKeyTag prefixes tags carrying a key, spaces written as "_".
const authorizedKeyTag = "AUTHORIZED_KEY="

// PublicKeys are the ssh_public_keys' keys, then the AUTHORIZED_KEY tags'.
func PublicKeys(md map[string]any) []string {
	var keys []string
	l, _ := md["ssh_public_keys"].([]any)
	for _, e := range l {
		m, _ := e.(map[string]any)
		if k := strings.TrimSpace(scalar(m["key"])); k != "" {
			keys = append(keys, k)
		}
	}
	tags, _ := md["tags"].([]any)
	for _, t := range tags {
		s, _ := t.(string)
		if k, ok := strings.CutPrefix(s, authorizedKeyTag); ok {
			if k = strings.TrimSpace(strings.ReplaceAll(k, "_", " ")); k != "" {
				keys = append(keys, k)
			}
		}
	}
	return keys
}

// region is a zone without its last "-N" (fr-par-1 → fr-par).
func region(zone string) string {
	if i := strings.LastIndexByte(zone, '-'); i > 0 {
		if _, err := strconv.Atoi(zone[i+1:]); err == nil {
			return zone[:i]
		}
	}
	return ""
}

// Build turns the answers into Data as cloud-init's _get_data does.
func Build(in Input) (*datasource.Data, error) {
	doc, err := Parse(in.MetaData)
	if err != nil {
		return nil, err
	}
	id := scalar(doc["id"])
	if id == "" {
		return nil, errors.New("no id")
	}
	var zone string
	if loc, ok := doc["location"].(map[string]any); ok {
		zone = scalar(loc["zone_id"])
	}
	hostname := scalar(doc["hostname"])
	keys := PublicKeys(doc)
	md := map[string]any{
		"instance-id":    id,
		"local-hostname": hostname,
	}
	if len(keys) > 0 {
		md["public-keys"] = keys
	}
	if zone != "" {
		md["availability-zone"] = zone
	}
	d := &datasource.Data{
		NetworkUpdateEvents: NetworkUpdateEvents,
		Name:                "Scaleway",
		Platform:            "scaleway",
		CloudName:           "scaleway",
		Subplatform:         datasource.SubplatformUnknown, // as cloud-init: no metadata_address
		Mode:                "net",
		MetaData:            md,
		Hostname:            hostname,
		AvailabilityZone:    zone,
		Region:              region(zone),
		PublicKeys:          keys,
		UserData:            in.UserData,
		VendorData:          in.VendorData,
		DS:                  map[string]any{"metadata_full": doc},
		NetworkConfig:       map[string]any{NetworkKey: maps.Clone(doc)},
	}
	return d, nil
}
