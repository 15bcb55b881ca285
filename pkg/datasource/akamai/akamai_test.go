package akamai

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/internal/dstest"
)

const testToken = "akamai-test-token"

// tokenHook fakes the token dance: PUT /v1/token with the expiry header
// answers a token; every other request must carry it.
func tokenHook(t *testing.T) func(w http.ResponseWriter, r *http.Request) bool {
	return func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path == DefaultTokenPath {
			if r.Method != http.MethodPut || r.Header.Get(TokenExpiryHeader) != TokenExpiry {
				t.Errorf("token request %s %v", r.Method, r.Header)
				http.Error(w, "", http.StatusBadRequest)
				return true
			}
			w.Write([]byte(testToken))
			return true
		}
		if r.Header.Get(TokenHeader) != testToken {
			t.Errorf("%s %s without the token", r.Method, r.URL.Path)
			http.Error(w, "", http.StatusUnauthorized)
			return true
		}
		if r.URL.Path == DefaultMetadataPath && r.Header.Get("Accept") != "application/json" {
			t.Errorf("instance request without Accept: application/json")
		}
		return false
	}
}

// env uses url as the IPv4 base and a closed port as the IPv6 one.
func env(t *testing.T, url string) datasource.Env {
	return datasource.Env{NetworkUp: true, Budget: 5 * time.Second,
		Config: map[string]any{"Akamai": map[string]any{"base_urls": map[string]any{
			"ipv4": url, "ipv6": dstest.ClosedURL(t),
		}}}}
}

// upstreamDiffers are the fields of each case's upstream golden where
// cloudroot deliberately differs (docs/datasources.md).
var upstreamDiffers = map[string]dstest.Differs{
	"no-userdata": {"instance_id": "cloud-init loses the instance-id when /v1/user-data is 404 (its metadata dict is replaced and the fetch counted as failed: iid-datasource); cloudroot keeps the metadata's id"},
}

func TestGolden(t *testing.T) {
	for _, name := range dstest.Cases(t, "testdata") {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join("testdata", name)
			var spec struct {
				Serial string `json:"serial"`
			}
			dstest.ReadJSON(t, filepath.Join(dir, "case.json"), &spec)
			srv := dstest.Serve(t, filepath.Join(dir, "tree"), tokenHook(t))
			e := env(t, srv.URL)
			e.DMI = bootenv.DMI{SysVendor: "Akamai", ProductSerial: spec.Serial}
			d, err := (&Source{}).Get(context.Background(), e)
			dstest.Upstream(t, dir, d, err, srv.URL, upstreamDiffers[name])
			if err != nil {
				t.Fatal(err)
			}
			dstest.Golden(t, filepath.Join(dir, "want.json"), d, srv.URL)
		})
	}
}

// TestOrder: IPv6 is tried first, and skipped when not allowed.
func TestOrder(t *testing.T) {
	v6 := dstest.Serve(t, "testdata/instance/tree", tokenHook(t))
	v4 := dstest.Serve(t, "testdata/no-userdata/tree", tokenHook(t))
	cfg := map[string]any{"base_urls": map[string]any{"ipv4": v4.URL, "ipv6": v6.URL}}
	e := datasource.Env{NetworkUp: true, DMI: bootenv.DMI{ProductSerial: "1"}, Config: map[string]any{"akamai": cfg}}
	d, err := (&Source{}).Get(context.Background(), e)
	if err != nil || d.InstanceID() != "51234567" {
		t.Fatalf("IPv6 first: %v, %v", d, err)
	}
	cfg["allow_ipv6"] = false
	d, err = (&Source{}).Get(context.Background(), e)
	if err != nil || d.InstanceID() != "1" {
		t.Fatalf("allow_ipv6 false: %v, %v", d, err)
	}
	cfg["allow_ipv4"] = false
	if _, err := (&Source{}).Get(context.Background(), e); !errors.Is(err, datasource.ErrNotFound) {
		t.Fatalf("nothing allowed: %v", err)
	}
}

func TestPaths(t *testing.T) {
	srv := dstest.Serve(t, "", func(w http.ResponseWriter, r *http.Request) bool {
		switch r.URL.Path {
		case "/t":
			w.Write([]byte("tok"))
		case "/m":
			w.Write([]byte(`{"id": 3}`))
		case "/u":
			w.Write([]byte("aGk="))
		default:
			http.NotFound(w, r)
		}
		return true
	})
	e := datasource.Env{NetworkUp: true, Config: map[string]any{"Akamai": map[string]any{
		"metadata_url": srv.URL, "paths": map[string]any{"token": "/t", "metadata": "/m", "userdata": "/u"}}}}
	d, err := (&Source{}).Get(context.Background(), e)
	if err != nil || d.InstanceID() != "3" || string(d.UserData) != "hi" {
		t.Fatalf("%v, %v", d, err)
	}
}

// TestConform: the cases every metadata-URL source shares (on the "404"
// service the token request, the first, is 404; its "500" is the
// token's), and Akamai's broken services.
func TestConform(t *testing.T) {
	answer := func(p string, code int, body string) func(w http.ResponseWriter, r *http.Request) bool {
		hook := tokenHook(t)
		return func(w http.ResponseWriter, r *http.Request) bool {
			if r.URL.Path == p {
				w.WriteHeader(code)
				w.Write([]byte(body))
				return true
			}
			return hook(w, r)
		}
	}
	dstest.Conform(t, dstest.Metadata{
		Source: &Source{},
		Env:    func(base string) datasource.Env { return env(t, base) },
		Root:   "testdata/instance/tree",
		Broken: []dstest.Broken{
			{Name: "token 403", Hook: answer(DefaultTokenPath, 403, ""), Want: "status 403"},
			{Name: "empty token", Hook: answer(DefaultTokenPath, 200, " \n"), Want: "empty token"},
			{Name: "instance 500", Hook: answer(DefaultMetadataPath, 500, ""), Want: "/v1/instance: status 500"},
			{Name: "instance not JSON", Hook: answer(DefaultMetadataPath, 200, "id: 1"), Want: "invalid character"},
			{Name: "no id", Hook: answer(DefaultMetadataPath, 200, "{}"), Want: "no instance id"},
			{Name: "user-data 503", Hook: answer(DefaultUserdataPath, 503, ""), Want: "/v1/user-data: status 503"},
		},
	})
}

func TestDecodeUserData(t *testing.T) {
	for in, want := range map[string]string{"aGk=": "hi", "aG\nk=": "hi", "aGk": "aGk", "#!/bin/sh": "#!/bin/sh", "": ""} {
		if got := string(DecodeUserData([]byte(in))); got != want {
			t.Errorf("DecodeUserData(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzBuild(f *testing.F) {
	for _, c := range []string{"instance", "no-userdata"} {
		i, _ := os.ReadFile(filepath.Join("testdata", c, "tree/v1/instance"))
		u, _ := os.ReadFile(filepath.Join("testdata", c, "tree/v1/user-data"))
		f.Add(i, u, "1")
	}
	f.Add([]byte(`{"id": 1e300, "region": 5}`), []byte("====\x00"), "")
	f.Fuzz(func(t *testing.T, inst, ud []byte, serial string) {
		d, err := Build(Input{URL: "http://x", Instance: inst, UserData: ud, Serial: serial})
		if err != nil {
			return
		}
		if d.InstanceID() == "" {
			t.Fatal("no instance-id")
		}
		if _, err := json.Marshal(dstest.ViewOf(d)); err != nil {
			t.Fatal(err)
		}
	})
}
