package digitalocean

// Pure parsing: the metadata document and Data.

import (
	"cmp"
	"errors"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/internal/jsondoc"
)

// Build turns the document fetched from url into Data as cloud-init's
// _get_data does: meta-data holds instance-id (droplet_id), local-hostname,
// public-keys, availability_zone (region, "default" when missing) and
// interfaces, and there is no region (cloud-init's v1.region is null
// here); ds.metadata_full holds the document without user_data and
// vendor_data.
func Build(url string, b []byte) (*datasource.Data, error) {
	md, err := jsondoc.Object(b)
	if err != nil {
		return nil, err
	}
	id := jsondoc.Scalar(md["droplet_id"])
	if id == "" {
		return nil, errors.New("no droplet_id")
	}
	az := cmp.Or(jsondoc.Scalar(md["region"]), "default")
	hostname := jsondoc.Scalar(md["hostname"])
	d := &datasource.Data{
		Name:        "DigitalOcean",
		Platform:    "digitalocean",
		CloudName:   "digitalocean",
		Subplatform: "metadata (" + url + ")",
		Mode:        "net",
		MetaData: map[string]any{
			"instance-id":       id,
			"local-hostname":    hostname,
			"public-keys":       md["public_keys"],
			"availability_zone": az,
			"interfaces":        md["interfaces"],
		},
		// No Region: cloud-init's DigitalOcean keeps the region only as
		// the availability zone, so instance-data v1.region is null.
		Hostname:         hostname,
		AvailabilityZone: az,
		PublicKeys:       datasource.NormalizePubKeys(md["public_keys"]),
	}
	full, err := jsondoc.Full(d, md)
	if err != nil {
		return nil, err
	}
	if _, ok := md["interfaces"]; ok {
		d.NetworkConfig = map[string]any{NetworkKey: full}
	}
	return d, nil
}
