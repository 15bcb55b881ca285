package cloudcix

// Pure parsing: the metadata document and Data.

import (
	"errors"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/internal/jsondoc"
)

// Build turns the document fetched from url and the user-data (nil:
// none) into Data as cloud-init's _get_data does: the document is the
// meta-data.
func Build(url string, b, userData []byte) (*datasource.Data, error) {
	md, err := jsondoc.Object(b)
	if err != nil {
		return nil, err
	}
	id := jsondoc.Scalar(md["instance-id"])
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
	if h := jsondoc.Scalar(md["local-hostname"]); h != "" {
		d.Hostname = h
	} else {
		d.Hostname = jsondoc.Scalar(md["hostname"])
	}
	// `network` is a network config document (v2 as CloudCIX serves it),
	// the network configuration as is, as cloud-init's network_config.
	if n, ok := md["network"].(map[string]any); ok && len(n) > 0 {
		d.NetworkConfig = n
	}
	return d, nil
}
