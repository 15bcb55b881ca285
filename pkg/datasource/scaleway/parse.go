package scaleway

// Pure parsing: the metadata document and Data.

import (
	"errors"
	"maps"
	"strconv"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/internal/jsondoc"
)

// Input is what the service answered.
type Input struct {
	// URL is the metadata document's URL.
	URL string
	// MetaData is the document; UserData and VendorData as served (nil:
	// none).
	MetaData, UserData, VendorData []byte
}

// authorizedKeyTag prefixes tags carrying a key, spaces written as "_".
const authorizedKeyTag = "AUTHORIZED_KEY="

// PublicKeys are the ssh_public_keys' keys, then the AUTHORIZED_KEY tags'.
func PublicKeys(md map[string]any) []string {
	var keys []string
	l, _ := md["ssh_public_keys"].([]any)
	for _, e := range l {
		m, _ := e.(map[string]any)
		if k := strings.TrimSpace(jsondoc.Scalar(m["key"])); k != "" {
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
	doc, err := jsondoc.Object(in.MetaData)
	if err != nil {
		return nil, err
	}
	id := jsondoc.Scalar(doc["id"])
	if id == "" {
		return nil, errors.New("no id")
	}
	var zone string
	if loc, ok := doc["location"].(map[string]any); ok {
		zone = jsondoc.Scalar(loc["zone_id"])
	}
	hostname := jsondoc.Scalar(doc["hostname"])
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
