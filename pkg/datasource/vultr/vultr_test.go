package vultr

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/internal/dstest"
	"github.com/cloudroot/cloudroot/pkg/netconfig"
	"github.com/cloudroot/cloudroot/pkg/userdata"
)

const path = "/v1.json"

// env configures the base URL (v1.json is below it); a url ending in
// path is cut back to its base.
func env(url string) datasource.Env {
	return datasource.Env{NetworkUp: true, Budget: 5 * time.Second,
		Config: map[string]any{"Vultr": map[string]any{"url": strings.TrimSuffix(url, path)}}}
}

// headers checks every request carries the token and a User-Agent.
func headers(t *testing.T, agent string) func(w http.ResponseWriter, r *http.Request) bool {
	return func(w http.ResponseWriter, r *http.Request) bool {
		if r.Header.Get(TokenHeader) != Token || r.Header.Get("User-Agent") != agent {
			t.Errorf("%s: headers %v", r.URL, r.Header)
			http.Error(w, "", http.StatusForbidden)
			return true
		}
		return false
	}
}

// upstreamDiffers are the fields of each case's upstream golden where
// cloudroot deliberately differs (docs/datasources.md).
var upstreamDiffers = map[string]dstest.Differs{
	"both-ipv6": {"vendordata_raw": "cloud-init keeps Vultr's vendor-data list as is (its user-data processing takes a list of parts); cloudroot hands on the same parts as one MIME multipart"},
	"current":   {"found": "cloud-init's Vultr fails (KeyError 'ipv6') on a private interface without an ipv6 section; cloudroot configures it"},
	"legacy":    {"found": "cloud-init requires instance-v2-id; cloudroot falls back to the legacy instanceid"},
}

func TestGolden(t *testing.T) {
	dstest.GoldenTrees(t, dstest.Trees{
		Source:   &Source{},
		Env:      func(_, base string) datasource.Env { return env(base + path) },
		Hook:     headers(t, DefaultUserAgent),
		Differs:  upstreamDiffers,
		Requests: 1,
	})
}

func TestConfig(t *testing.T) {
	const agent = "Cloud-Init/24.4 - OS: Linux Variant: debian"
	srv := dstest.Serve(t, "testdata/legacy/tree", headers(t, agent))
	d, err := (&Source{URL: srv.URL, UserAgent: "ignored"}).Get(context.Background(), datasource.Env{NetworkUp: true,
		Config: map[string]any{"vultr": map[string]any{"metadata_url": srv.URL, "user-agent": agent}}})
	if err != nil {
		t.Fatal(err)
	}
	if d.InstanceID() != "42872224" || d.LocalHostname() != "guest" || d.Region != "ewr" {
		t.Errorf("instance-id %q hostname %q region %q", d.InstanceID(), d.LocalHostname(), d.Region)
	}
	srv = dstest.Serve(t, "testdata/legacy/tree", headers(t, "custom"))
	if _, err := (&Source{URL: srv.URL, UserAgent: "custom"}).Get(context.Background(), datasource.Env{NetworkUp: true}); err != nil {
		t.Fatal(err)
	}
}

func TestVendorData(t *testing.T) {
	for _, tc := range []struct {
		in   any
		want string
		err  bool
	}{
		{nil, "", false},
		{"", "", false},
		{"#cloud-config\na: 1\n", "#cloud-config\na: 1\n", false},
		{[]any{}, "", false},
		{[]any{map[string]any{"a": 1.0}}, "#cloud-config\n{\"a\":1}", false},
		{map[string]any{"cloud-init": []any{"x"}}, "x", false},
		{map[string]any{"cloud-init": map[string]any{}}, "", true},
		{[]any{1.0}, "", true},
		{5.0, "", true},
	} {
		got, err := VendorData(tc.in)
		if (err != nil) != tc.err || string(got) != tc.want {
			t.Errorf("VendorData(%#v) = %q, %v", tc.in, got, err)
		}
	}
	// A list is two cloud-configs for user-data processing to merge.
	b, err := VendorData([]any{"#cloud-config\na: 1\n", map[string]any{"b": 2.0}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := userdata.Decode("vendor-data", b)
	if err != nil || len(res.CloudConfigs) != 2 {
		t.Fatalf("vendor-data list decodes to %d cloud-configs (%v):\n%s", len(res.CloudConfigs), err, b)
	}
	b, err = VendorData([]any{"a --" + Boundary, "b"})
	if err != nil || !strings.Contains(string(b), "boundary=\""+Boundary+".0\"") {
		t.Errorf("boundary clash: %s %v", b, err)
	}
}

// TestNetworkKey: what is handed on converts with ConvertVultr.
func TestNetworkKey(t *testing.T) {
	dstest.Converted(t, &Source{}, func(base string) datasource.Env { return env(base + path) }, "testdata/current/tree", NetworkKey,
		netconfig.ConvertVultr, netconfig.MACs{"56:00:04:aa:bb:01": "enp1s0", "5a:00:04:aa:bb:02": "enp6s0"})
}

// TestConform: absent, slow, 404, 500, truncated, and this document's
// own broken forms.
func TestConform(t *testing.T) {
	dstest.Conform(t, dstest.Metadata{
		Source: &Source{},
		Env:    func(base string) datasource.Env { return env(base + path) },
		Root:   "testdata/current/tree",
		Doc:    path,
		JSON:   true,
		Broken: []dstest.Broken{
			{Name: "no instance id", Code: 200, Body: `{"hostname": "h"}`, Want: "no instance-v2-id or instanceid"},
		},
	})
}

func FuzzBuild(f *testing.F) {
	for _, c := range []string{"current", "legacy"} {
		b, _ := os.ReadFile(filepath.Join("testdata", c, "tree", path))
		f.Add(b)
	}
	f.Add([]byte(`{"instanceid": 1e30, "user-data": [{"a": 1}], "region": "X", "public-keys": {"k": ["x"]}}`))
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
		if _, ok := d.MetaData["user-data"]; ok {
			t.Fatal("user-data in meta-data")
		}
		if d.Region != strings.ToLower(d.Region) {
			t.Fatalf("region %q not lower-case", d.Region)
		}
	})
}
