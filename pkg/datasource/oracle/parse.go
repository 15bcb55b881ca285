package oracle

// Pure parsing: Data from the instance and vnics documents.

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/datasource"
)

// Input is what the service answered.
type Input struct {
	// URL is the version's root ("<base>/opc/v2/").
	URL string
	// Instance is instance/; Vnics is vnics/ (nil: none).
	Instance, Vnics []byte
}

func str(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

// Build turns the answers into Data as cloud-init's _get_data does.
func Build(in Input) (*datasource.Data, error) {
	var inst map[string]any
	if err := json.Unmarshal(in.Instance, &inst); err != nil {
		return nil, fmt.Errorf("instance: %w", err)
	}
	if inst == nil {
		return nil, errors.New("instance: not a JSON object")
	}
	id := str(inst, "id")
	if id == "" {
		return nil, errors.New("instance: no id")
	}
	az := str(inst, "availabilityDomain")
	if az == "" {
		az = str(inst, "ociAdName")
	}
	region := str(inst, "canonicalRegionName")
	if region == "" {
		region = str(inst, "region")
	}
	md := map[string]any{
		"instance-id":       id,
		"local-hostname":    str(inst, "hostname"),
		"name":              str(inst, "displayName"),
		"availability-zone": az,
		"launch-index":      0,
	}
	d := &datasource.Data{
		Name:             "Oracle",
		Platform:         "oracle",
		CloudName:        "oracle",
		Subplatform:      "metadata (" + in.URL + ")",
		Mode:             "net",
		MetaData:         md,
		AvailabilityZone: az,
		Region:           region,
	}
	// ds keeps the instance document without its user-data.
	dsInst := make(map[string]any, len(inst))
	for k, v := range inst {
		dsInst[k] = v
	}
	d.DS = map[string]any{"instance_data": dsInst}
	if m, ok := inst["metadata"].(map[string]any); ok {
		if _, ok := m["user_data"]; ok {
			mc := make(map[string]any, len(m))
			for k, v := range m {
				if k != "user_data" {
					mc[k] = v
				}
			}
			dsInst["metadata"] = mc
		}
		if ud := str(m, "user_data"); ud != "" {
			b, err := decodeBase64(ud)
			if err != nil {
				return nil, fmt.Errorf("instance: metadata.user_data: %w", err)
			}
			d.UserData = b
		}
		if k, ok := m["ssh_authorized_keys"]; ok {
			md["public_keys"] = k
			d.PublicKeys = datasource.NormalizePubKeys(k)
		}
	}
	if len(strings.TrimSpace(string(in.Vnics))) > 0 {
		var vn any
		if err := json.Unmarshal(in.Vnics, &vn); err != nil {
			return nil, fmt.Errorf("vnics: %w", err)
		}
		d.DS["vnics_data"] = vn
		if vn != nil {
			d.NetworkConfig = map[string]any{NetworkKey: vn}
		}
	}
	return d, nil
}

// decodeBase64 decodes like Python's b64decode without validation:
// characters outside the alphabet are dropped first.
func decodeBase64(s string) ([]byte, error) {
	clean := strings.Map(func(r rune) rune {
		switch {
		case r >= 'A' && r <= 'Z', r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '+', r == '/', r == '=':
			return r
		}
		return -1
	}, s)
	return base64.StdEncoding.DecodeString(clean)
}
