package cloudcix

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/internal/dstest"
)

const path = "/v1"

var doc = dstest.Doc{Source: &Source{}, Path: path}

// upstreamDiffers are the fields of each case's upstream golden where
// cloudroot deliberately differs (docs/datasources.md).
var upstreamDiffers = map[string]dstest.Differs{
	"minimal": {"found": "cloud-init's CloudCIX fails without a network key (KeyError); cloudroot reads the instance and falls back for the network"},
}

func TestGolden(t *testing.T) { doc.Golden(t, upstreamDiffers, 2) }

func TestSourceURL(t *testing.T) {
	srv := dstest.Serve(t, "testdata/minimal/tree", nil)
	d, err := (&Source{URL: srv.URL + path}).Get(context.Background(), datasource.Env{NetworkUp: true})
	if err != nil {
		t.Fatal(err)
	}
	if d.InstanceID() != "cix-min" || d.UserData != nil || d.NetworkConfig != nil {
		t.Errorf("instance-id %q user-data %q network %v", d.InstanceID(), d.UserData, d.NetworkConfig)
	}
}

// TestNetworkConfig: the document's network (a v2 document) is the
// network configuration as served.
func TestNetworkConfig(t *testing.T) {
	srv := dstest.Serve(t, "testdata/instance/tree", nil)
	d, err := (&Source{}).Get(context.Background(), doc.Env(srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	if d.NetworkConfig["version"] != float64(2) || d.NetworkConfig["ethernets"] == nil {
		t.Fatalf("network config is not the served v2 document: %v", d.NetworkConfig)
	}
	if len(d.UserData) == 0 {
		t.Error("no user-data")
	}
}

// TestConform: absent, slow, 404, 500, a truncated metadata document, and
// this service's own broken forms.
func TestConform(t *testing.T) {
	doc.Conform(t, "testdata/instance/tree", path+"/"+MetadataPath,
		dstest.Broken{Name: "no instance-id", Code: 200, Body: `{"hostname": "h"}`, Want: "no instance-id"},
		dstest.Broken{Name: "userdata 500", Hook: dstest.Answer(path+"/"+UserdataPath, http.StatusInternalServerError, ""), Want: "status 500"})
}

func FuzzBuild(f *testing.F) {
	for _, c := range []string{"instance", "minimal"} {
		b, _ := os.ReadFile(filepath.Join("testdata", c, "tree", path, MetadataPath))
		f.Add(b)
	}
	f.Add([]byte(`{"instance-id": 1e30, "public-keys": {"k": ["x"]}, "network": null}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := Build("http://x", b, nil)
		if err != nil {
			return
		}
		if d.InstanceID() == "" {
			t.Fatal("no instance-id")
		}
		if _, err := json.Marshal(dstest.ViewOf(d)); err != nil {
			t.Fatal(err)
		}
		if d.UserData != nil {
			t.Fatal("user-data from nowhere")
		}
	})
}
