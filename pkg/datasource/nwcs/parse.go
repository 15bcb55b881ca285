package nwcs

// Pure parsing: the metadata document and Data.

import (
	"errors"
	"fmt"
	"maps"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/internal/jsondoc"
)

// Build turns the document fetched from url into Data as cloud-init's
// _get_data does: the document without userdata and vendordata is the
// meta-data.
func Build(url string, b []byte) (*datasource.Data, error) {
	doc, err := jsondoc.Object(b)
	if err != nil {
		return nil, err
	}
	id := jsondoc.Scalar(doc["instance-id"])
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
		Hostname:    jsondoc.Scalar(doc["hostname"]),
		PublicKeys:  datasource.NormalizePubKeys(doc["public-keys"]),
	}
	if d.UserData, err = jsondoc.Blob(doc["userdata"]); err != nil {
		return nil, fmt.Errorf("userdata: %w", err)
	}
	if d.VendorData, err = jsondoc.Blob(doc["vendordata"]); err != nil {
		return nil, fmt.Errorf("vendordata: %w", err)
	}
	if n, ok := doc["network"]; ok && n != nil {
		d.NetworkConfig = map[string]any{NetworkKey: n}
	}
	return d, nil
}
