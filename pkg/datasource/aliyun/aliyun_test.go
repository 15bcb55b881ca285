package aliyun

import (
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/internal/dstest"
)

const token = "AQAEAliyunTestToken=="

func env(url string) datasource.Env {
	return datasource.Env{NetworkUp: true, Budget: 5 * time.Second,
		Config: map[string]any{"AliYun": map[string]any{"metadata_urls": []any{url}}}}
}

// tokenHook serves the token and refuses GETs without it, as the
// security-enhanced mode does.
func tokenHook(t *testing.T) func(w http.ResponseWriter, r *http.Request) bool {
	return func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path == "/"+TokenPath {
			if r.Method != http.MethodPut || r.Header.Get(TokenTTLHeader) != TokenTTL {
				t.Errorf("token request %s %v", r.Method, r.Header)
			}
			w.Write([]byte(token))
			return true
		}
		if r.Header.Get(TokenHeader) != token {
			t.Errorf("GET %s without token", r.URL.Path)
			http.Error(w, "forbidden", http.StatusForbidden)
			return true
		}
		return false
	}
}

// upstreamDiffers are the fields of each case's upstream golden where
// cloudroot deliberately differs (docs/datasources.md).
var upstreamDiffers = map[string]dstest.Differs{
	"normal": {"found": "cloud-init 26.x's AliYun requires the security-enhanced mode's token (no token: \"IMDS's HTTP endpoint is probably disabled\"); cloudroot falls back to plain GETs"},
}

func TestGolden(t *testing.T) {
	for _, name := range dstest.Cases(t, "testdata") {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join("testdata", name)
			var hook func(w http.ResponseWriter, r *http.Request) bool
			if name == "token" {
				hook = tokenHook(t)
			}
			srv := dstest.Serve(t, filepath.Join(dir, "tree"), hook)
			d, err := (&Source{}).Get(context.Background(), env(srv.URL))
			dstest.Upstream(t, dir, d, err, srv.URL, upstreamDiffers[name])
			if err != nil {
				t.Fatal(err)
			}
			dstest.Golden(t, filepath.Join(dir, "want.json"), d, srv.URL)
			if r := srv.Requests(); r[0].Method != http.MethodPut || r[0].Path != "/"+TokenPath {
				t.Errorf("first request %s %s, want the token PUT", r[0].Method, r[0].Path)
			}
		})
	}
}

func TestSourceURL(t *testing.T) {
	srv := dstest.Serve(t, "testdata/normal/tree", nil)
	d, err := (&Source{URL: srv.URL}).Get(context.Background(), datasource.Env{NetworkUp: true})
	if err != nil {
		t.Fatal(err)
	}
	if d.InstanceID() != "i-normal01" || d.Subplatform != "metadata ("+srv.URL+")" {
		t.Errorf("instance-id %q subplatform %q", d.InstanceID(), d.Subplatform)
	}
}

func TestPublicKeys(t *testing.T) {
	got := PublicKeys(map[string]any{
		"a": " ssh-rsa A \n",
		"b": []any{"ssh-rsa B1", "ssh-rsa B2"},
		"c": map[string]any{"openssh-key": "ssh-rsa C"},
		"d": map[string]any{"openssh-key": []any{"ssh-rsa D"}},
		"e": 5,
	})
	want := []string{"ssh-rsa A", "ssh-rsa B1", "ssh-rsa B2", "ssh-rsa C", "ssh-rsa D"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestConform: the cases every metadata-URL source shares (its "500" is
// the token's, the first request), and AliYun's broken services.
func TestConform(t *testing.T) {
	status500 := func(path string) func(w http.ResponseWriter, r *http.Request) bool {
		return func(w http.ResponseWriter, r *http.Request) bool {
			if r.URL.Path != path {
				return false
			}
			w.WriteHeader(http.StatusInternalServerError)
			return true
		}
	}
	dstest.Conform(t, dstest.Metadata{
		Source: &Source{},
		Env:    func(base string) datasource.Env { return env(base) },
		Root:   "testdata/token/tree",
		Broken: []dstest.Broken{
			{Name: "tree 500", Hook: status500("/" + APIVersion + "/meta-data/"), Want: "status 500"},
			{Name: "user-data 500", Hook: status500("/" + APIVersion + "/user-data"), Want: "status 500"},
			{Name: "no instance-id", Hook: dstest.Answer("/"+APIVersion+"/meta-data/", 200, "hostname\nregion-id"), Want: "no instance-id"},
		},
	})
}

func FuzzBuild(f *testing.F) {
	f.Add([]byte(`{"instance-id": "i-1", "hostname": "h", "public-keys": {"k": {"openssh-key": ["x"]}}}`))
	f.Add([]byte(`{"instance-id": ["i-2", "x"], "region-id": 5, "public-keys": {"a": "y", "b": [1, "z"]}}`))
	f.Add([]byte(`{"public-keys": []}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var md map[string]any
		if json.Unmarshal(b, &md) != nil {
			return
		}
		d, err := Build(Input{URL: "http://x", MetaData: md})
		if err != nil {
			return
		}
		if d.InstanceID() == "" {
			t.Fatal("no instance-id")
		}
		for _, k := range d.PublicKeys {
			if strings.TrimSpace(k) == "" {
				t.Fatal("empty key")
			}
		}
		if _, err := json.Marshal(dstest.ViewOf(d)); err != nil {
			t.Fatal(err)
		}
	})
}
