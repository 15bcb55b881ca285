package upcloud

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/internal/dstest"
	"github.com/cloudroot/cloudroot/pkg/netconfig"
)

const path = "/metadata/v1.json"

func env(url string) datasource.Env {
	return datasource.Env{NetworkUp: true, Budget: 5 * time.Second,
		Config: map[string]any{"UpCloud": map[string]any{"metadata_url": url}}}
}

// upstreamDiffers are the fields of each case's upstream golden where
// cloudroot deliberately differs (docs/datasources.md).
var upstreamDiffers = map[string]dstest.Differs{
	"minimal": {"network_config": "metadata without interfaces: cloud-init renders an empty network config, pkg/netconfig's ConvertUpCloud reports an error (the boot then falls back)"},
}

func TestGolden(t *testing.T) {
	for _, name := range dstest.Cases(t, "testdata") {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join("testdata", name)
			var spec struct {
				ProductUUID string `json:"product_uuid"`
			}
			dstest.ReadJSON(t, filepath.Join(dir, "case.json"), &spec)
			srv := dstest.Serve(t, filepath.Join(dir, "tree"), nil)
			e := env(srv.URL + path)
			e.DMI = bootenv.DMI{SysVendor: "UpCloud", ProductUUID: spec.ProductUUID}
			d, err := (&Source{}).Get(context.Background(), e)
			dstest.Upstream(t, dir, d, err, srv.URL, upstreamDiffers[name])
			if err != nil {
				t.Fatal(err)
			}
			dstest.Golden(t, filepath.Join(dir, "want.json"), d, srv.URL)
			if n := len(srv.Requests()); n != 1 {
				t.Errorf("%d requests, want 1", n)
			}
		})
	}
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
	srv := dstest.Serve(t, "testdata/server/tree", nil)
	d, err := (&Source{}).Get(context.Background(), env(srv.URL+path))
	if err != nil {
		t.Fatal(err)
	}
	md, ok := d.NetworkConfig[NetworkKey].(map[string]any)
	if !ok {
		t.Fatalf("no %s in %v", NetworkKey, d.NetworkConfig)
	}
	macs := netconfig.MACs{"3a:d6:ba:4a:36:e7": "eth0", "3a:d6:ba:4a:84:cc": "eth1"}
	cfg, err := netconfig.ConvertUpCloud(md, macs)
	if err != nil || cfg == nil {
		t.Fatalf("ConvertUpCloud: %v", err)
	}
}

func TestNotFound(t *testing.T) {
	dstest.NotFound(t, &Source{}, dstest.NetworkCases(t, dstest.Network{
		Env: func(base string) datasource.Env { return env(base + path) },
		Up:  dstest.Serve(t, "testdata/server/tree", nil),
	}))
}

func TestErrors(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		code       int
		want       string
	}{
		{"500", "", http.StatusInternalServerError, "status 500"},
		{"not JSON", "instance_id: 1", 200, "invalid character"},
		{"not an object", "[1]", 200, "expected a JSON object"},
		{"no instance_id", `{"hostname": "h"}`, 200, "no instance_id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := dstest.Serve(t, "", func(w http.ResponseWriter, r *http.Request) bool {
				w.WriteHeader(tc.code)
				w.Write([]byte(tc.body))
				return true
			})
			_, err := (&Source{}).Get(context.Background(), env(srv.URL+path))
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), srv.URL) {
				t.Fatalf("err = %v, want containing %q and the URL", err, tc.want)
			}
			if errors.Is(err, datasource.ErrNotFound) {
				t.Errorf("a broken service is not ErrNotFound: %v", err)
			}
		})
	}
}

func FuzzBuild(f *testing.F) {
	for _, c := range []string{"server", "minimal"} {
		b, _ := os.ReadFile(filepath.Join("testdata", c, "tree", path))
		f.Add(b)
	}
	f.Add([]byte(`{"instance_id": 1e30, "user_data": {"a": 1}, "public_keys": {"k": ["x"]}, "network": []}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := Build("http://x", b, "uuid")
		if err != nil {
			return
		}
		if d.InstanceID() == "" {
			t.Fatal("no instance-id")
		}
		if _, err := json.Marshal(dstest.ViewOf(d)); err != nil {
			t.Fatal(err)
		}
		if _, ok := d.DS["metadata_full"].(map[string]any)["user_data"]; ok {
			t.Fatal("user_data in ds")
		}
	})
}
