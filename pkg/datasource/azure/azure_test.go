package azure

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/internal/dstest"
)

var update = flag.Bool("update", false, "rewrite testdata/*/want.json")

var onAzure = bootenv.DMI{ChassisAssetTag: ChassisAssetTag, SysVendor: "Microsoft Corporation"}

// imds answers like IMDS: the Metadata header is required, an api-version
// not in versions gets 400, and the newest version must ask for extended.
func imds(t *testing.T, versions []string) func(w http.ResponseWriter, r *http.Request) bool {
	return func(w http.ResponseWriter, r *http.Request) bool {
		if r.Header.Get(MetadataHeader) != MetadataValue {
			t.Errorf("%s without %s: %s", r.URL, MetadataHeader, MetadataValue)
			http.Error(w, `{"error": "Bad request. Required metadata header not specified"}`, http.StatusBadRequest)
			return true
		}
		q, _ := url.ParseQuery(r.URL.RawQuery)
		v := q.Get("api-version")
		if v == APIVersion && q.Get("extended") != "true" {
			t.Errorf("%s without extended=true", r.URL)
		}
		if !slices.Contains(versions, v) {
			http.Error(w, `{"error": "Bad request. api-version is invalid"}`, http.StatusBadRequest)
			return true
		}
		return false
	}
}

func env(url string) datasource.Env {
	return datasource.Env{DMI: onAzure, NetworkUp: true, Budget: 5 * time.Second,
		Config: map[string]any{"Azure": map[string]any{"metadata_url": url}}}
}

func TestGolden(t *testing.T) {
	for _, name := range dstest.Cases(t, "testdata") {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join("testdata", name)
			var spec struct {
				APIVersions []string `json:"api_versions"`
			}
			b, err := os.ReadFile(filepath.Join(dir, "case.json"))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(b, &spec); err != nil {
				t.Fatal(err)
			}
			srv := dstest.Serve(t, filepath.Join(dir, "tree"), imds(t, spec.APIVersions))
			d, err := (&Source{}).Get(context.Background(), env(srv.URL))
			if err != nil {
				t.Fatal(err)
			}
			dstest.Golden(t, filepath.Join(dir, "want.json"), d, srv.URL, *update)
			for _, r := range srv.Requests() {
				if r.Path != "/metadata/instance" {
					t.Errorf("request to %s", r.Path)
				}
			}
		})
	}
}

func TestInstanceURL(t *testing.T) {
	for _, tc := range []struct{ base, ver, want string }{
		{DefaultMetadataURL, APIVersion, "http://169.254.169.254/metadata/instance?api-version=2021-08-01&extended=true"},
		{DefaultMetadataURL + "/", FallbackAPIVersion, "http://169.254.169.254/metadata/instance?api-version=2019-06-01"},
	} {
		if got := InstanceURL(tc.base, tc.ver); got != tc.want {
			t.Errorf("InstanceURL(%q, %q) = %q, want %q", tc.base, tc.ver, got, tc.want)
		}
	}
}

func TestNotFound(t *testing.T) {
	slow := dstest.Serve(t, "", func(w http.ResponseWriter, r *http.Request) bool {
		select {
		case <-r.Context().Done():
		case <-time.After(time.Minute):
		}
		return true
	})
	empty := dstest.Serve(t, "", nil)
	srv := dstest.Serve(t, "testdata/extended/tree", nil)
	for _, tc := range []struct {
		name string
		env  datasource.Env
		want error
		srv  *dstest.Server
	}{
		{"not Azure", func() datasource.Env { e := env(srv.URL); e.DMI = bootenv.DMI{}; return e }(), datasource.ErrNotFound, srv},
		{"network down", func() datasource.Env { e := env(srv.URL); e.NetworkUp = false; return e }(), datasource.ErrNeedNetwork, srv},
		{"absent", env(dstest.ClosedURL(t)), datasource.ErrNotFound, nil},
		{"404", env(empty.URL), datasource.ErrNotFound, nil},
		{"slow", func() datasource.Env { e := env(slow.URL); e.Budget = 300 * time.Millisecond; return e }(), datasource.ErrNotFound, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			_, err := (&Source{}).Get(context.Background(), tc.env)
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if el := time.Since(start); el > 10*time.Second {
				t.Errorf("took %v", el)
			}
			if tc.srv != nil && len(tc.srv.Requests()) != 0 {
				t.Errorf("requests made")
			}
		})
	}
}

func TestErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		hook func(w http.ResponseWriter, r *http.Request) bool
		want string
	}{
		{"500", func(w http.ResponseWriter, r *http.Request) bool {
			http.Error(w, "", http.StatusInternalServerError)
			return true
		}, "status 500"},
		{"both versions refused", func(w http.ResponseWriter, r *http.Request) bool {
			http.Error(w, "", http.StatusBadRequest)
			return true
		}, "api-version=" + FallbackAPIVersion + ": status 400"},
		{"not JSON", func(w http.ResponseWriter, r *http.Request) bool {
			w.Write([]byte("<html>"))
			return true
		}, "invalid character"},
		{"no vmId", func(w http.ResponseWriter, r *http.Request) bool {
			w.Write([]byte(`{"compute": {"name": "x"}}`))
			return true
		}, "no compute.vmId"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := dstest.Serve(t, "testdata/extended/tree", tc.hook)
			_, err := (&Source{}).Get(context.Background(), env(srv.URL))
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), srv.URL) {
				t.Fatalf("err = %v, want containing %q and the URL", err, tc.want)
			}
			if errors.Is(err, datasource.ErrNotFound) {
				t.Errorf("a broken service is not ErrNotFound: %v", err)
			}
		})
	}
}

// TestBadUserData: undecodable userData is skipped, not fatal.
func TestBadUserData(t *testing.T) {
	in := Input{URL: "u", Document: []byte(`{"compute": {"vmId": "v", "userData": "not base64!"}}`)}
	d, err := Build(&in)
	if err != nil {
		t.Fatal(err)
	}
	if d.UserData != nil || in.BadUserData == nil {
		t.Errorf("user-data %q, warning %v", d.UserData, in.BadUserData)
	}
}

func FuzzBuild(f *testing.F) {
	for _, c := range []string{"extended", "fallback-2019", "no-network"} {
		b, _ := os.ReadFile(filepath.Join("testdata", c, "tree/metadata/instance"))
		f.Add(b)
	}
	f.Add([]byte(`{"compute": {"vmId": "x", "publicKeys": [1, {"keyData": 2}], "userData": "=="}, "network": []}`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		in := Input{URL: "u", Document: doc}
		d, err := Build(&in)
		if err != nil {
			return
		}
		if d.InstanceID() == "" {
			t.Fatal("Data without instance-id")
		}
		b, err := json.Marshal(dstest.ViewOf(d))
		if err != nil {
			t.Fatal(err)
		}
		if imds, _ := d.MetaData["imds"].(map[string]any); imds != nil {
			if c, _ := imds["compute"].(map[string]any); c != nil {
				if _, ok := c["userData"]; ok {
					t.Fatalf("userData kept in meta-data: %s", b)
				}
			}
		}
	})
}
