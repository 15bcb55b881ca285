package digitalocean

import (
	"context"
	"testing"
	"time"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/internal/dstest"
	"github.com/cloudroot/cloudroot/pkg/netconfig"
)

const path = "/metadata/v1.json"

func env(url string) datasource.Env {
	return datasource.Env{NetworkUp: true, Budget: 5 * time.Second,
		Config: map[string]any{"DigitalOcean": map[string]any{"metadata_url": url}}}
}

// upstreamDiffers are the fields of each case's upstream golden where
// cloudroot deliberately differs (docs/datasources.md).
var upstreamDiffers = map[string]dstest.Differs{}

func TestGolden(t *testing.T) {
	dstest.GoldenTrees(t, dstest.Trees{
		Source:   &Source{},
		Env:      func(_, base string) datasource.Env { return env(base + path) },
		Differs:  upstreamDiffers,
		Requests: 1,
	})
}

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
	dstest.Converted(t, &Source{}, func(base string) datasource.Env { return env(base + path) }, "testdata/droplet/tree", NetworkKey,
		netconfig.ConvertDigitalOcean, netconfig.MACs{"d2:c4:7a:10:00:01": "ens3", "d2:c4:7a:10:00:02": "ens4"})
}

// TestConform: absent, slow, 404, 500, truncated, and this document's
// own broken forms.
func TestConform(t *testing.T) {
	dstest.Conform(t, dstest.Metadata{
		Source: &Source{},
		Env:    func(base string) datasource.Env { return env(base + path) },
		Root:   "testdata/droplet/tree",
		Doc:    path,
		JSON:   true,
		Broken: []dstest.Broken{
			{Name: "no droplet_id", Code: 200, Body: `{"hostname": "h"}`, Want: "no droplet_id"},
		},
	})
}

func FuzzBuild(f *testing.F) {
	dstest.Seed(f, path, `{"droplet_id": 1e30, "user_data": {"a": 1}, "public_keys": {"k": ["x"]}}`)
	dstest.FuzzData(f, func(b []byte) (*datasource.Data, error) { return Build("http://x", b) }, func(t *testing.T, d *datasource.Data) {
		if _, ok := d.DS["metadata_full"].(map[string]any)["user_data"]; ok {
			t.Fatal("user_data in ds")
		}
	})
}
