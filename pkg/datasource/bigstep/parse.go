package bigstep

// Pure parsing: the document and Data.

import (
	"errors"
	"fmt"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/internal/jsondoc"
)

// Build turns the document fetched from url into Data as cloud-init's
// _get_data does.
func Build(url string, b []byte) (*datasource.Data, error) {
	doc, err := jsondoc.Object(b)
	if err != nil {
		return nil, err
	}
	md, ok := doc["metadata"].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("metadata is %T, not an object", doc["metadata"])
	}
	id := jsondoc.Scalar(md["instance-id"])
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
	if h := jsondoc.Scalar(md["local-hostname"]); h != "" {
		d.Hostname = h
	}
	if d.UserData, err = jsondoc.Blob(doc["userdata_raw"]); err != nil {
		return nil, fmt.Errorf("userdata_raw: %w", err)
	}
	if d.VendorData, err = jsondoc.Blob(doc["vendordata_raw"]); err != nil {
		return nil, fmt.Errorf("vendordata_raw: %w", err)
	}
	return d, nil
}
