package nwcs

import (
	"context"
	"testing"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/internal/dstest"
)

const path = "/api/v1/metadata"

var doc = dstest.Doc{Source: &Source{}, Path: path}

// upstreamDiffers are the fields of each case's upstream golden where
// cloudroot deliberately differs (docs/datasources.md).
var upstreamDiffers = map[string]dstest.Differs{
	"minimal": {"found": "cloud-init's NWCS requires public-keys (KeyError); cloudroot reads an instance without"},
}

func TestGolden(t *testing.T) { doc.Golden(t, upstreamDiffers, 1) }

func TestSourceURL(t *testing.T) {
	srv := dstest.Serve(t, "testdata/minimal/tree", nil)
	d, err := (&Source{URL: srv.URL + path}).Get(context.Background(), datasource.Env{NetworkUp: true})
	if err != nil {
		t.Fatal(err)
	}
	if d.InstanceID() != "42" || d.UserData != nil || d.NetworkConfig != nil {
		t.Errorf("instance-id %q user-data %q network %v", d.InstanceID(), d.UserData, d.NetworkConfig)
	}
}

// TestNetworkKey: the network config is handed on as served.
func TestNetworkKey(t *testing.T) {
	srv := dstest.Serve(t, "testdata/instance/tree", nil)
	d, err := (&Source{}).Get(context.Background(), doc.Env(srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	n, ok := d.NetworkConfig[NetworkKey].(map[string]any)
	if !ok || n["version"] != float64(1) {
		t.Fatalf("no version 1 %s in %v", NetworkKey, d.NetworkConfig)
	}
	if _, ok := d.MetaData["userdata"]; ok {
		t.Error("userdata in meta-data")
	}
}

// TestConform: absent, slow, 404, 500, truncated, and this document's
// own broken forms.
func TestConform(t *testing.T) {
	doc.Conform(t, "testdata/instance/tree", "",
		dstest.Broken{Name: "no instance-id", Code: 200, Body: `{"hostname": "h"}`, Want: "no instance-id"})
}

func FuzzBuild(f *testing.F) {
	dstest.Seed(f, path, `{"instance-id": 1e30, "userdata": {"a": 1}, "public-keys": {"k": ["x"]}, "network": null}`)
	dstest.FuzzData(f, func(b []byte) (*datasource.Data, error) { return Build("http://x", b) }, func(t *testing.T, d *datasource.Data) {
		if _, ok := d.MetaData["userdata"]; ok {
			t.Fatal("userdata in meta-data")
		}
	})
}
