package upcloud

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/internal/dstest"
	"github.com/cloudroot/cloudroot/pkg/netconfig"
)

const path = "/metadata/v1.json"

var doc = dstest.Doc{Source: &Source{}, Path: path}

// upstreamDiffers are the fields of each case's upstream golden where
// cloudroot deliberately differs (docs/datasources.md).
var upstreamDiffers = map[string]dstest.Differs{
	"minimal": {"network_config": "metadata without interfaces: cloud-init renders an empty network config, pkg/netconfig's ConvertUpCloud reports an error (the boot then falls back)"},
}

func TestGolden(t *testing.T) {
	dstest.GoldenTrees(t, dstest.Trees{
		Source: &Source{},
		Env: func(dir, base string) datasource.Env {
			var spec struct {
				ProductUUID string `json:"product_uuid"`
			}
			dstest.ReadJSON(t, filepath.Join(dir, "case.json"), &spec)
			e := doc.Env(base)
			e.DMI = bootenv.DMI{SysVendor: "UpCloud", ProductUUID: spec.ProductUUID}
			return e
		},
		Differs:  upstreamDiffers,
		Requests: 1,
	})
}

func TestSourceURL(t *testing.T) {
	srv := dstest.Serve(t, "testdata/minimal/tree", nil)
	_, err := (&Source{URL: srv.URL + path}).Get(context.Background(), datasource.Env{NetworkUp: true})
	if err == nil || !strings.Contains(err.Error(), "no instance_id") {
		t.Fatalf("no instance_id and no product UUID: %v", err)
	}
	d, err := (&Source{URL: srv.URL + path}).Get(context.Background(), datasource.Env{NetworkUp: true, DMI: bootenv.DMI{ProductUUID: "u"}})
	if err != nil {
		t.Fatal(err)
	}
	if d.InstanceID() != "u" {
		t.Errorf("instance-id %q, want the product UUID", d.InstanceID())
	}
	if d.LocalHostname() != "solo" || d.AvailabilityZone != "default" {
		t.Errorf("hostname %q az %q", d.LocalHostname(), d.AvailabilityZone)
	}
}

// TestNetworkKey: what is handed on converts with ConvertUpCloud.
func TestNetworkKey(t *testing.T) {
	dstest.Converted(t, &Source{}, doc.Env, "testdata/server/tree", NetworkKey,
		netconfig.ConvertUpCloud, netconfig.MACs{"3a:d6:ba:4a:36:e7": "eth0", "3a:d6:ba:4a:84:cc": "eth1"})
}

// TestConform: absent, slow, 404, 500, truncated, and this document's
// own broken forms.
func TestConform(t *testing.T) {
	doc.Conform(t, "testdata/server/tree", "",
		dstest.Broken{Name: "no instance_id", Code: 200, Body: `{"hostname": "h"}`, Want: "no instance_id"})
}

func FuzzBuild(f *testing.F) {
	dstest.Seed(f, path, `{"instance_id": 1e30, "user_data": {"a": 1}, "public_keys": {"k": ["x"]}, "network": []}`)
	dstest.FuzzData(f, func(b []byte) (*datasource.Data, error) { return Build("http://x", b, "uuid") }, func(t *testing.T, d *datasource.Data) {
		if _, ok := d.DS["metadata_full"].(map[string]any)["user_data"]; ok {
			t.Fatal("user_data in ds")
		}
	})
}
