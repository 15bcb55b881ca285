package azure

// Pure parsing: Data from the IMDS instance document.

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/datasource"
)

// Input is what IMDS answered.
type Input struct {
	// URL is the instance document's URL; Document its body.
	URL      string
	Document []byte
	// BadUserData is set by Build when compute.userData was not base64
	// (cloud-init logs it and goes on without user-data).
	BadUserData error
}

func obj(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

func str(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

// Build turns the instance document into Data.
func Build(in *Input) (*datasource.Data, error) {
	var doc map[string]any
	if err := json.Unmarshal(in.Document, &doc); err != nil {
		return nil, err
	}
	if doc == nil {
		return nil, errors.New("not a JSON object")
	}
	compute := obj(doc["compute"])
	id := str(compute, "vmId")
	if id == "" {
		return nil, errors.New("no compute.vmId")
	}
	hostname := str(obj(compute["osProfile"]), "computerName")
	d := &datasource.Data{
		Name:             "Azure",
		Platform:         "azure",
		CloudName:        "azure",
		Subplatform:      "metadata (" + in.URL + ")",
		Mode:             "net",
		AvailabilityZone: str(compute, "zone"),
		Region:           str(compute, "location"),
	}
	if keys, ok := compute["publicKeys"].([]any); ok {
		for _, k := range keys {
			if s := strings.TrimSpace(str(obj(k), "keyData")); s != "" {
				d.PublicKeys = append(d.PublicKeys, s)
			}
		}
	}
	in.BadUserData = nil
	if ud := str(compute, "userData"); ud != "" {
		b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(ud))
		if err != nil {
			in.BadUserData = fmt.Errorf("compute.userData: %w", err)
		} else {
			d.UserData = b
		}
	}
	// meta-data keeps the document without its user-data.
	imds := make(map[string]any, len(doc))
	for k, v := range doc {
		imds[k] = v
	}
	if _, ok := compute["userData"]; ok {
		c := make(map[string]any, len(compute))
		for k, v := range compute {
			if k != "userData" {
				c[k] = v
			}
		}
		imds["compute"] = c
	}
	d.MetaData = map[string]any{
		"instance-id":    id,
		"local-hostname": hostname,
		"imds":           imds,
	}
	if n := obj(doc["network"]); n != nil {
		d.NetworkConfig = map[string]any{NetworkKey: n}
	}
	return d, nil
}
