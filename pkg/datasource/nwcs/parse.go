package nwcs

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

// blob is userdata or vendordata: a string as is, null or "" as none;
// anything else is kept as its JSON text.
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
// _get_data does: the document without userdata and vendordata is the
// meta-data.
func Build(url string, b []byte) (*datasource.Data, error) {
	doc, err := Parse(b)
	if err != nil {
		return nil, err
	}
	id := scalar(doc["instance-id"])
	if id == "" {
		return nil, errors.New("no instance-id")
	}
	md := maps.Clone(doc)
	delete(md, "userdata")
	delete(md, "vendordata")
	md["instance-id"] = id
	d := &datasource.Data{
		Name:        "NWCS",
		Platform:    "nwcs",
		CloudName:   "nwcs",
		Subplatform: "metadata (" + url + ")",
		Mode:        "net",
		MetaData:    md,
		Hostname:    scalar(doc["hostname"]),
		PublicKeys:  datasource.NormalizePubKeys(doc["public-keys"]),
	}
	if d.UserData, err = blob(doc["userdata"]); err != nil {
		return nil, fmt.Errorf("userdata: %w", err)
	}
	if d.VendorData, err = blob(doc["vendordata"]); err != nil {
		return nil, fmt.Errorf("vendordata: %w", err)
	}
	if n, ok := doc["network"]; ok && n != nil {
		d.NetworkConfig = map[string]any{NetworkKey: n}
	}
	return d, nil
}
