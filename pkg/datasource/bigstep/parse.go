package bigstep

// Pure parsing: the document and Data.

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/cloudroot/cloudroot/pkg/datasource"
)

// Parse decodes the document: a JSON object.
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

// blob is userdata_raw or vendordata_raw: a string as is, null or "" as
// none; anything else is kept as its JSON text.
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
// _get_data does.
func Build(url string, b []byte) (*datasource.Data, error) {
	doc, err := Parse(b)
	if err != nil {
		return nil, err
	}
	md, ok := doc["metadata"].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("metadata is %T, not an object", doc["metadata"])
	}
	id := scalar(md["instance-id"])
	if id == "" {
		return nil, errors.New("metadata has no instance-id")
	}
	md["instance-id"] = id
	d := &datasource.Data{
		Name:         "Bigstep",
		Platform:     "bigstep",
		CloudName:    "bigstep",
		Subplatform:  "metadata (" + url + ")",
		Mode:         "net",
		NetworkStage: true, // no init-local variant in cloud-init
		MetaData:     md,
		PublicKeys:   datasource.NormalizePubKeys(md["public-keys"]),
	}
	if h := scalar(md["local-hostname"]); h != "" {
		d.Hostname = h
	}
	if d.UserData, err = blob(doc["userdata_raw"]); err != nil {
		return nil, fmt.Errorf("userdata_raw: %w", err)
	}
	if d.VendorData, err = blob(doc["vendordata_raw"]); err != nil {
		return nil, fmt.Errorf("vendordata_raw: %w", err)
	}
	return d, nil
}
