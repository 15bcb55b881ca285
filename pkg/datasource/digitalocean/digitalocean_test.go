package digitalocean

import (
	"context"
	"testing"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/internal/dstest"
	"github.com/cloudroot/cloudroot/pkg/netconfig"
)

const path = "/metadata/v1.json"

var doc = dstest.Doc{Source: &Source{}, Path: path}

// upstreamDiffers are the fields of each case's upstream golden where
// cloudroot deliberately differs (docs/datasources.md).
var upstreamDiffers = map[string]dstest.Differs{}

func TestGolden(t *testing.T) { doc.Golden(t, upstreamDiffers, 1) }

func TestSourceURL(t *testing.T) {
	srv := dstest.Serve(t, "testdata/minimal/tree", nil)
	d, err := (&Source{URL: srv.URL + path}).Get(context.Background(), datasource.Env{NetworkUp: true})
	if err != nil {
		t.Fatal(err)
	}
	if d.InstanceID() != "7" || d.AvailabilityZone != "default" || d.Region != "" {
		t.Errorf("instance-id %q az %q region %q", d.InstanceID(), d.AvailabilityZone, d.Region)
	}
}

// TestNetworkKey: what is handed on converts with ConvertDigitalOcean.
func TestNetworkKey(t *testing.T) {
	dstest.Converted(t, &Source{}, doc.Env, "testdata/droplet/tree", NetworkKey,
		netconfig.ConvertDigitalOcean, netconfig.MACs{"d2:c4:7a:10:00:01": "ens3", "d2:c4:7a:10:00:02": "ens4"})
}

// TestConform: absent, slow, 404, 500, truncated, and this document's
// own broken forms.
func TestConform(t *testing.T) {
	doc.Conform(t, "testdata/droplet/tree", "",
		dstest.Broken{Name: "no droplet_id", Code: 200, Body: `{"hostname": "h"}`, Want: "no droplet_id"})
}

func FuzzBuild(f *testing.F) {
	dstest.Seed(f, path, `{"droplet_id": 1e30, "user_data": {"a": 1}, "public_keys": {"k": ["x"]}}`)
	dstest.FuzzData(f, func(b []byte) (*datasource.Data, error) { return Build("http://x", b) }, func(t *testing.T, d *datasource.Data) {
		if _, ok := d.DS["metadata_full"].(map[string]any)["user_data"]; ok {
			t.Fatal("user_data in ds")
		}
	})
}
