package digitalocean

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
	for _, name := range dstest.Cases(t, "testdata") {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join("testdata", name)
			srv := dstest.Serve(t, filepath.Join(dir, "tree"), nil)
			d, err := (&Source{}).Get(context.Background(), env(srv.URL+path))
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
	srv := dstest.Serve(t, "testdata/droplet/tree", nil)
	d, err := (&Source{}).Get(context.Background(), env(srv.URL+path))
	if err != nil {
		t.Fatal(err)
	}
	md, ok := d.NetworkConfig[NetworkKey].(map[string]any)
	if !ok {
		t.Fatalf("no %s in %v", NetworkKey, d.NetworkConfig)
	}
	macs := netconfig.MACs{"d2:c4:7a:10:00:01": "ens3", "d2:c4:7a:10:00:02": "ens4"}
	cfg, err := netconfig.ConvertDigitalOcean(md, macs)
	if err != nil || cfg == nil {
		t.Fatalf("ConvertDigitalOcean: %v", err)
	}
}

func TestNotFound(t *testing.T) {
	dstest.NotFound(t, &Source{}, dstest.NetworkCases(t, dstest.Network{
		Env: func(base string) datasource.Env { return env(base + path) },
		Up:  dstest.Serve(t, "testdata/droplet/tree", nil),
	}))
}

func TestErrors(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		code       int
		want       string
	}{
		{"500", "", http.StatusInternalServerError, "status 500"},
		{"not JSON", "droplet_id: 1", 200, "invalid character"},
		{"not an object", "[1]", 200, "expected a JSON object"},
		{"no droplet_id", `{"hostname": "h"}`, 200, "no droplet_id"},
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
	for _, c := range []string{"droplet", "minimal"} {
		b, _ := os.ReadFile(filepath.Join("testdata", c, "tree", path))
		f.Add(b)
	}
	f.Add([]byte(`{"droplet_id": 1e30, "user_data": {"a": 1}, "public_keys": {"k": ["x"]}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := Build("http://x", b)
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
