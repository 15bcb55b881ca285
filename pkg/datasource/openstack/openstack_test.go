package openstack

import (
	"context"
	"errors"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/internal/dstest"
)

func env(urls ...string) datasource.Env {
	var u []any
	for _, s := range urls {
		u = append(u, s)
	}
	return datasource.Env{NetworkUp: true, Budget: 5 * time.Second,
		Config: map[string]any{"OpenStack": map[string]any{"metadata_urls": u}}}
}

// upstreamDiffers are the fields of each case's upstream golden where
// cloudroot deliberately differs (docs/datasources.md).
var upstreamDiffers = map[string]dstest.Differs{
	"latest-ec2-iid": {"found": "cloudroot takes the EC2 meta-data's instance-id when meta_data.json has no uuid; cloud-init rejects the service (BrokenMetadata)"},
}

func TestGolden(t *testing.T) {
	for _, name := range dstest.Cases(t, "testdata") {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join("testdata", name)
			srv := dstest.Serve(t, filepath.Join(dir, "tree"), nil)
			d, err := (&Source{}).Get(context.Background(), env(srv.URL))
			dstest.Upstream(t, dir, d, err, srv.URL, upstreamDiffers[name])
			if err != nil {
				t.Fatal(err)
			}
			dstest.Golden(t, filepath.Join(dir, "want.json"), d, srv.URL)
		})
	}
}

// TestSecondURL: an absent first URL and a non-OpenStack one (404 on
// openstack/) are skipped.
func TestSecondURL(t *testing.T) {
	ec2Only := dstest.Serve(t, "", nil)
	srv := dstest.Serve(t, "testdata/rocky/tree", nil)
	d, err := (&Source{}).Get(context.Background(), env(dstest.ClosedURL(t), ec2Only.URL, srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	if d.Subplatform != "metadata ("+srv.URL+")" {
		t.Errorf("subplatform = %q", d.Subplatform)
	}
}

// TestConform: the cases every metadata-URL source shares (its "404" is
// a service that is not OpenStack's), and OpenStack's own.
func TestConform(t *testing.T) {
	dstest.Conform(t, dstest.Metadata{
		Source: &Source{},
		Env:    func(base string) datasource.Env { return env(base) },
		Root:   "testdata/rocky/tree",
		Doc:    "openstack/2018-08-27/meta_data.json",
		NotFound: []dstest.NotFoundCase{
			{Name: "network down, nothing configured", Env: datasource.Env{}, Want: datasource.ErrNeedNetwork},
		},
		Broken: []dstest.Broken{
			{Name: "meta_data.json missing", Hook: dstest.Answer("meta_data.json", http.StatusNotFound, ""), Want: "meta_data.json: status 404"},
			{Name: "meta_data.json not JSON", Hook: dstest.Answer("meta_data.json", http.StatusOK, "{"), Want: "2018-08-27/meta_data.json: unexpected end of JSON input"},
		},
	})
}

func TestPickVersion(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want string
	}{
		{[]string{"2012-08-10", "2018-08-27", "latest"}, "2018-08-27"},
		{[]string{"2012-08-10", "2020-10-14", "latest"}, "2012-08-10"},
		{[]string{"2020-10-14", "latest"}, "latest"},
		{[]string{"2020-10-14", "2019-01-01"}, "2020-10-14"},
		{[]string{"content", "junk"}, "latest"},
		{nil, "latest"},
		{[]string{"2016-06-30/", " latest "}, "2016-06-30"},
	} {
		if got := PickVersion(tc.in); got != tc.want {
			t.Errorf("PickVersion(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestConvertVendorData(t *testing.T) {
	for _, tc := range []struct {
		in, want, err string
	}{
		{`null`, "", ""},
		{`""`, "", ""},
		{`{}`, "", ""},
		{`"#cloud-config\n"`, "#cloud-config\n", ""},
		{`{"cloud-init": "#!/bin/sh\n", "other": 1}`, "#!/bin/sh\n", ""},
		{`{"other": {"cloud-init": "x"}}`, "", ""},
		{`{"cloud-init": {"a": 1}}`, "", "cannot be an object"},
		{`{"cloud-init": ["a", "b"]}`, "Content-Type: multipart/mixed", ""},
		{`["a", 1]`, "", "item 1 is a number"},
		{`42`, "", "unknown type"},
		{`{`, "", "unexpected end"},
	} {
		got, err := ConvertVendorData([]byte(tc.in))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ConvertVendorData(%s) err = %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || !strings.HasPrefix(string(got), tc.want) || (tc.want == "" && got != nil) {
			t.Errorf("ConvertVendorData(%s) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func TestContentPath(t *testing.T) {
	for in, want := range map[string]string{"/content/0000": "content/0000", "content//0001": "content/0001", "/": "", "": "", "/../etc/passwd": ""} {
		got, err := ContentPath(in)
		if got != want || (want == "") != (err != nil) {
			t.Errorf("ContentPath(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

func TestBuildErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   Input
		want string
	}{
		{"no uuid", Input{MetaData: []byte(`{"hostname": "h"}`)}, "no 'uuid' entry"},
		{"not an object", Input{MetaData: []byte(`[]`)}, "expected a JSON object, got a list"},
		{"bad seed", Input{MetaData: []byte(`{"uuid": "u", "random_seed": "%%%"}`)}, "random_seed"},
		{"missing file", Input{MetaData: []byte(`{"uuid": "u", "files": [{"path": "/a", "content_path": "/content/0000"}]}`)}, "file /a: content_path \"/content/0000\": missing"},
		{"bad network_data", Input{MetaData: []byte(`{"uuid": "u"}`), NetworkData: []byte(`[1]`)}, "network_data.json: expected a JSON object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.in.Source, tc.in.Version = "src", "latest"
			_, err := Build(tc.in)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want containing %q", err, tc.want)
			}
		})
	}
	if _, err := Build(Input{}); !errors.Is(err, datasource.ErrNotFound) {
		t.Errorf("no meta_data.json: err = %v, want ErrNotFound", err)
	}
}

// FuzzBuild feeds arbitrary meta_data.json, vendor data and network_data
// through Build: no panics, and what comes out is consistent.
func FuzzBuild(f *testing.F) {
	f.Add([]byte(`{"uuid": "u", "hostname": "h", "public_keys": {"k": "ssh-rsa A"}, "meta": {"dsmode": "local"}}`), []byte(`{"cloud-init": "x"}`), []byte(`{"links": [], "networks": [], "services": []}`))
	f.Add([]byte(`{"uuid": 1, "files": [{"path": "/p", "content_path": "/content/0000"}], "network_config": {"content_path": "/content/0000"}}`), []byte(`["a"]`), []byte(`null`))
	f.Add([]byte(`{"random_seed": "AAAA", "uuid": null}`), []byte(`{"cloud-init": {}}`), []byte(`{`))
	f.Fuzz(func(t *testing.T, md, vd, nd []byte) {
		in := Input{Source: "fuzz", Version: "latest", MetaData: md, VendorData: vd, NetworkData: nd,
			Content: map[string][]byte{"/content/0000": []byte("c")}}
		if m, err := ParseMetaData(md); err == nil {
			for _, ref := range ContentRefs(m) {
				_, _ = ContentPath(ref)
			}
		}
		d, err := Build(in)
		if err != nil {
			return
		}
		if d.InstanceID() == "" && d.MetaData["instance-id"] == nil {
			t.Fatalf("no instance-id from %s", md)
		}
		if nc := d.NetworkConfig[datasource.NetworkKeyOpenStack]; nc != nil {
			if diff := cmp.Diff(nc, d.DS["network_json"]); diff != "" {
				t.Fatalf("network_json differs from network config:\n%s", diff)
			}
		}
	})
}

// cfg is env(urls...) with more OpenStack settings.
func cfg(kv map[string]any, urls ...string) datasource.Env {
	e := env(urls...)
	for k, v := range kv {
		e.Config["OpenStack"].(map[string]any)[k] = v
	}
	return e
}

var (
	urlSource = dstest.URLSource{Source: &Source{}, Env: cfg}
	// listing is the request for the version listing, the first of Get.
	listing = dstest.Req{Path: "/openstack"}
)

func TestURLFailover(t *testing.T) {
	urlSource.Failover(t, dstest.Serve(t, "testdata/rocky/tree", nil).URL)
}

// TestConfig: `retries`, `timeout` and `max_wait` under datasource:
// OpenStack: are honoured.
func TestConfig(t *testing.T) {
	t.Run("retries", func(t *testing.T) {
		urlSource.Retries(t, dstest.Status(http.StatusBadGateway), "status 502", listing,
			// A service answering 5xx is there: read retries.
			dstest.Attempts{KV: nil, N: 1 + DefaultReadRetries},
			dstest.Attempts{KV: map[string]any{"retries": 3}, N: 4},
			dstest.Attempts{KV: map[string]any{"retries": -1}, N: 1},
			dstest.Attempts{KV: map[string]any{"max_wait": -1}, N: 1},
		)
	})
	t.Run("timeout", func(t *testing.T) {
		// The listing is never answered.
		urlSource.Timeouts(t, dstest.Serve(t, "", dstest.Hang), listing, 2)
		// A slow service answers within a longer timeout.
		slow := dstest.Serve(t, "testdata/rocky/tree", func(w http.ResponseWriter, r *http.Request) bool {
			if r.URL.Path == "/openstack" {
				time.Sleep(300 * time.Millisecond)
			}
			return false
		})
		if _, err := (&Source{}).Get(context.Background(), cfg(map[string]any{"timeout": 3}, slow.URL)); err != nil {
			t.Errorf("timeout 3: %v", err)
		}
	})
	t.Run("max_wait", func(t *testing.T) { urlSource.MaxWait(t, "0.3") })
}

// TestParallelFiles: the optional files are fetched together, not one
// after the other.
func TestParallelFiles(t *testing.T) {
	var f dstest.InFlight
	files := func(r *http.Request) bool { return strings.HasPrefix(r.URL.Path, "/openstack/2018-08-27/") }
	srv := dstest.Serve(t, "testdata/rocky/tree", f.Hook(files, 100*time.Millisecond, nil))
	if _, err := (&Source{}).Get(context.Background(), env(srv.URL)); err != nil {
		t.Fatal(err)
	}
	if most := f.Most(); most < 2 {
		t.Errorf("at most %d requests in flight for the version's files, want them in parallel", most)
	}
}

// Once the service has answered, each read is retried DefaultReadRetries
// times (cloud-init's url_retries); a configured `retries` applies to reads
// too.
func TestReadRetries(t *testing.T) {
	flaky := func() func(w http.ResponseWriter, r *http.Request) bool {
		var mu sync.Mutex
		n := 0
		return func(w http.ResponseWriter, r *http.Request) bool {
			if !strings.HasSuffix(r.URL.Path, "/meta_data.json") {
				return false
			}
			mu.Lock()
			defer mu.Unlock()
			if n++; n <= DefaultReadRetries {
				http.Error(w, "", http.StatusServiceUnavailable)
				return true
			}
			return false
		}
	}
	srv := dstest.Serve(t, "testdata/rocky/tree", flaky())
	d, err := (&Source{}).Get(context.Background(), env(srv.URL))
	if err != nil {
		t.Fatalf("meta_data.json failing %d times: %v", DefaultReadRetries, err)
	}
	if d.InstanceID() == "" {
		t.Error("no instance-id")
	}
	srv = dstest.Serve(t, "testdata/rocky/tree", flaky())
	if _, err := (&Source{}).Get(context.Background(), cfg(map[string]any{"retries": 2}, srv.URL)); err == nil || !strings.Contains(err.Error(), "meta_data.json") {
		t.Errorf("retries: 2 and meta_data.json failing %d times: %v", DefaultReadRetries, err)
	}
}
