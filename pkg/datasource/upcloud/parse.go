package upcloud

// Pure parsing: the metadata document and Data.

import (
	"cmp"
	"errors"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/internal/jsondoc"
)

// Build turns the document fetched from url into Data as cloud-init's
// _get_data does: meta-data holds instance-id (instance_id, else
// systemUUID), local-hostname, network, public-keys and availability_zone
// (region, "default" when missing); ds.metadata_full holds the document
// without user_data and vendor_data.
func Build(url string, b []byte, systemUUID string) (*datasource.Data, error) {
	md, err := jsondoc.Object(b)
	if err != nil {
		return nil, err
	}
	id := jsondoc.Scalar(md["instance_id"])
	if _, ok := md["instance_id"]; !ok {
		id = systemUUID
	}
	if id == "" {
		return nil, errors.New("no instance_id")
	}
	az := cmp.Or(jsondoc.Scalar(md["region"]), "default")
	hostname := jsondoc.Scalar(md["hostname"])
	d := &datasource.Data{
		Name:        "UpCloud",
		Platform:    "upcloud",
		CloudName:   "upcloud",
		Subplatform: "metadata (" + url + ")",
		Mode:        "net",
		MetaData: map[string]any{
			"instance-id":       id,
			"local-hostname":    hostname,
			"network":           md["network"],
			"public-keys":       md["public_keys"],
			"availability_zone": az,
		},
		Hostname:         hostname,
		AvailabilityZone: az,
		PublicKeys:       datasource.NormalizePubKeys(md["public_keys"]),
	}
	_, err = jsondoc.Full(d, md)
	if err != nil {
		return nil, err
	}
	if n, ok := md["network"].(map[string]any); ok {
		d.NetworkConfig = map[string]any{NetworkKey: n}
	}
	return d, nil
}
