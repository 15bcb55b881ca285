package gce

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/internal/dstest"
)

var (
	onGCE = bootenv.DMI{ProductName: "Google Compute Engine", SysVendor: "Google"}
	now   = time.Date(2025, 3, 2, 9, 0, 0, 0, time.UTC)
)

// flavor answers like the metadata server: every request must carry
// Metadata-Flavor: Google, every reply does.
func flavor(t *testing.T) func(w http.ResponseWriter, r *http.Request) bool {
	return func(w http.ResponseWriter, r *http.Request) bool {
		w.Header().Set(FlavorHeader, Flavor)
		if r.Header.Get(FlavorHeader) != Flavor {
			t.Errorf("%s without %s", r.URL, FlavorHeader)
			http.Error(w, "", http.StatusForbidden)
			return true
		}
		return false
	}
}

// basePath is the metadata server's base path.
const basePath = "/computeMetadata/v1/"

func env(url, user string) datasource.Env {
	return datasource.Env{DMI: onGCE, NetworkUp: true, DefaultUser: user, Budget: 5 * time.Second,
		Config: map[string]any{"GCE": map[string]any{"metadata_url": url}}}
}

// upstreamDiffers are the fields of each case's upstream golden where
// cloudroot deliberately differs (docs/datasources.md).
var upstreamDiffers = map[string]dstest.Differs{}

func TestGolden(t *testing.T) {
	for _, name := range dstest.Cases(t, "testdata") {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join("testdata", name)
			var spec struct {
				DefaultUser string `json:"default_user"`
			}
			dstest.ReadJSON(t, filepath.Join(dir, "case.json"), &spec)
			srv := dstest.Serve(t, filepath.Join(dir, "tree"), flavor(t))
			base := srv.URL + basePath
			d, err := (&Source{Now: func() time.Time { return now }}).Get(context.Background(), env(base, spec.DefaultUser))
			dstest.Upstream(t, dir, d, err, srv.URL, upstreamDiffers[name])
			if err != nil {
				t.Fatal(err)
			}
			dstest.Golden(t, filepath.Join(dir, "want.json"), d, srv.URL)
			for _, r := range srv.Requests() {
				if strings.Contains(r.Path, "attributes") && r.Query != "recursive=true" {
					t.Errorf("%s?%s: attributes not fetched recursively", r.Path, r.Query)
				}
			}
		})
	}
}

// TestConform: the cases every metadata-URL source shares, every server
// speaking the Metadata-Flavor protocol (the "500" is then GCE's, not an
// unflavoured stranger's), the attributes served truncated; and GCE's
// own: not GCE by DMI, an unflavoured server, a required key missing,
// broken attributes.
func TestConform(t *testing.T) {
	tree := "testdata/no-attributes/tree"
	flavored := func(next func(w http.ResponseWriter, r *http.Request) bool) func(w http.ResponseWriter, r *http.Request) bool {
		return func(w http.ResponseWriter, r *http.Request) bool {
			w.Header().Set(FlavorHeader, Flavor)
			return next(w, r)
		}
	}
	envAt := func(base string) datasource.Env { return env(base+basePath, "") }
	dstest.Conform(t, dstest.Metadata{
		Source: &Source{},
		Env:    envAt,
		Root:   "testdata/instance-and-project-keys/tree",
		Hook:   flavor(t),
		Doc:    basePath + "instance/attributes/",
		NotFound: []dstest.NotFoundCase{
			{Name: "not GCE", Env: datasource.Env{NetworkUp: true}, Want: datasource.ErrNotFound},
			{Name: "network down, GCE by serial", Env: datasource.Env{DMI: bootenv.DMI{ProductSerial: "GoogleCloud-0A1B2C"}}, Want: datasource.ErrNeedNetwork},
			{Name: "no Metadata-Flavor in replies", Env: envAt(dstest.Serve(t, tree, nil).URL), Want: datasource.ErrNotFound},
			{Name: "required key missing", Env: envAt(dstest.Serve(t, tree, flavored(dstest.Answer("/hostname", http.StatusNotFound, ""))).URL), Want: datasource.ErrNotFound},
		},
		Broken: []dstest.Broken{
			{Name: "500 says where", Code: http.StatusInternalServerError, Want: "instance/id: status 500"},
			{Name: "attributes 503", Hook: func(w http.ResponseWriter, r *http.Request) bool {
				if strings.Contains(r.URL.Path, "attributes") {
					http.Error(w, "", http.StatusServiceUnavailable)
					return true
				}
				return false
			}, Want: "instance/attributes/?recursive=true: status 503"},
			{Name: "attributes not JSON", Hook: dstest.Answer("instance/attributes/", http.StatusOK, "user-data\nssh-keys\n"), Want: "instance/attributes: invalid character"},
			{Name: "attributes not an object", Hook: dstest.Answer("instance/attributes/", http.StatusOK, "[1]"), Want: "expected a JSON object"},
			{Name: "bad base64", Hook: dstest.Answer("instance/attributes/", http.StatusOK, `{"user-data": "abc", "user-data-encoding": "base64"}`), Want: "user-data: illegal base64"},
		},
	})
}

func TestParseKeys(t *testing.T) {
	lines := []string{
		"ubuntu:ssh-rsa A u",
		"cloudinit:ssh-rsa B c",
		"root:ssh-rsa C r",
		":ssh-rsa D empty-user",
		"ubuntu:ssh-rsa E google-ssh {\"expireOn\":\"2020-01-01T00:00:00+0000\"}",
		"ubuntu:ssh-rsa F google-ssh {\"expireOn\":\"2030-01-01T00:00:00+0000\"}",
		"ubuntu:ssh-rsa G google-ssh {\"expireOn\":\"2020-01-01T00:00:00Z\"}",
		"ubuntu:ssh-rsa H google-ssh",
		"ubuntu:ssh-rsa I google-ssh {\"expireOn\":\"2020-01-01T00:00:00+0000\"} trailing",
		"ubuntu:ssh-rsa J other {\"expireOn\":\"2020-01-01T00:00:00+0000\"}",
	}
	want := []string{"ssh-rsa A u", "ssh-rsa B c", "ssh-rsa F google-ssh {\"expireOn\":\"2030-01-01T00:00:00+0000\"}",
		"ssh-rsa G google-ssh {\"expireOn\":\"2020-01-01T00:00:00Z\"}", "ssh-rsa H google-ssh",
		"ssh-rsa I google-ssh {\"expireOn\":\"2020-01-01T00:00:00+0000\"} trailing",
		"ssh-rsa J other {\"expireOn\":\"2020-01-01T00:00:00+0000\"}"}
	if diff := cmp.Diff(want, ParseKeys(lines, "ubuntu", now)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if got := ParseKeys(lines, "", now); len(got) != 1 || got[0] != "ssh-rsa B c" {
		t.Errorf("no default user: %q, want only cloudinit's key", got)
	}
}

func TestKeyLines(t *testing.T) {
	proj := map[string]any{"ssh-keys": "p:1", "sshKeys": "p:2"}
	for _, tc := range []struct {
		inst map[string]any
		want []string
	}{
		{map[string]any{"ssh-keys": "i:1\ni:2"}, []string{"i:1", "i:2", "p:1", "p:2"}},
		{map[string]any{"ssh-keys": "i:1", "block-project-ssh-keys": "True"}, []string{"i:1"}},
		{map[string]any{"sshKeys": "i:0", "ssh-keys": "i:1"}, []string{"i:0", "i:1"}},
		{map[string]any{"ssh-keys": 5}, []string{"p:1", "p:2"}},
	} {
		if diff := cmp.Diff(tc.want, KeyLines(tc.inst, proj)); diff != "" {
			t.Errorf("KeyLines(%v) (-want +got):\n%s", tc.inst, diff)
		}
	}
}

func FuzzAttributes(f *testing.F) {
	for _, c := range []string{"instance-and-project-keys", "blocked-project-keys"} {
		i, _ := os.ReadFile(filepath.Join("testdata", c, "tree/computeMetadata/v1/instance/attributes/_index"))
		p, _ := os.ReadFile(filepath.Join("testdata", c, "tree/computeMetadata/v1/project/attributes/_index"))
		f.Add(i, p, "projects/1/zones/us-east1-b")
	}
	f.Add([]byte(`{"user-data": "", "user-data-encoding": "base64"}`), []byte(`[]`), "")
	f.Fuzz(func(t *testing.T, inst, proj []byte, zone string) {
		d, err := Build(Input{InstanceID: "1", Zone: zone, Hostname: "h.x", Instance: inst, Project: proj, DefaultUser: "ubuntu", Now: now})
		if err != nil {
			return
		}
		if strings.Contains(d.AvailabilityZone, "/") || !strings.HasPrefix(d.AvailabilityZone, d.Region) {
			t.Fatalf("zone %q → az %q region %q", zone, d.AvailabilityZone, d.Region)
		}
		for _, k := range d.PublicKeys {
			if !ascii(k) {
				t.Fatalf("non-ASCII key %q kept", k)
			}
		}
		if _, err := json.Marshal(d.MetaData); err != nil {
			t.Fatal(err)
		}
	})
}

func FuzzParseKeys(f *testing.F) {
	f.Add("ubuntu:ssh-rsa A google-ssh {\"expireOn\":\"2020-01-01T00:00:00+0000\"}")
	f.Add("cloudinit:ssh-ed25519 B  \t c")
	f.Fuzz(func(t *testing.T, line string) {
		for _, k := range ParseKeys(strings.Split(line, "\n"), "ubuntu", now) {
			if strings.Contains(k, "\n") {
				t.Fatalf("key %q has a newline", k)
			}
		}
		if f := splitN(line, 4); len(f) > 4 {
			t.Fatalf("splitN gave %d fields", len(f))
		}
	})
}

// envCfg is env with metadata_urls and more GCE settings.
func envCfg(kv map[string]any, urls ...string) datasource.Env {
	e := env("", "")
	m := map[string]any{"metadata_urls": urls}
	for k, v := range kv {
		m[k] = v
	}
	e.Config = map[string]any{"GCE": m}
	return e
}

var (
	urlSource = dstest.URLSource{Source: &Source{}, Env: envCfg, Path: basePath}
	// idReq is the request for instance/id, the first of Get.
	idReq = dstest.Req{Path: basePath + "instance/id"}
)

func TestURLFailover(t *testing.T) {
	srv := dstest.Serve(t, "testdata/no-attributes/tree", flavor(t))
	urlSource.Failover(t, srv.URL+basePath)
}

// TestParallelKeys: the five keys are fetched together.
func TestParallelKeys(t *testing.T) {
	var f dstest.InFlight
	srv := dstest.Serve(t, "testdata/no-attributes/tree", f.Hook(nil, 100*time.Millisecond, flavor(t)))
	if _, err := (&Source{}).Get(context.Background(), env(srv.URL+basePath, "")); err != nil {
		t.Fatal(err)
	}
	if most := f.Most(); most < 2 {
		t.Errorf("at most %d requests in flight, want the keys in parallel", most)
	}
}

// TestConfig: `retries`, `timeout` and `max_wait` under datasource: GCE:
// are honoured.
func TestConfig(t *testing.T) {
	t.Run("retries", func(t *testing.T) {
		broken := func(w http.ResponseWriter, r *http.Request) bool {
			w.Header().Set(FlavorHeader, Flavor)
			return dstest.Status(http.StatusInternalServerError)(w, r)
		}
		urlSource.Retries(t, broken, "status 500", idReq,
			dstest.Attempts{KV: nil, N: 1 + DefaultRetries},
			dstest.Attempts{KV: map[string]any{"retries": 1}, N: 2},
			dstest.Attempts{KV: map[string]any{"retries": 0}, N: 1},
			dstest.Attempts{KV: map[string]any{"max_wait": 0}, N: 1},
		)
	})
	t.Run("timeout", func(t *testing.T) {
		// instance/id is never answered.
		hang := dstest.Serve(t, "testdata/no-attributes/tree", func(w http.ResponseWriter, r *http.Request) bool {
			if r.URL.Path != idReq.Path {
				return flavor(t)(w, r)
			}
			return dstest.Hang(w, r)
		})
		urlSource.Timeouts(t, hang, idReq, 1)
		// A slow server answers within a longer timeout.
		slow := dstest.Serve(t, "testdata/no-attributes/tree", func(w http.ResponseWriter, r *http.Request) bool {
			if r.URL.Path == idReq.Path {
				time.Sleep(300 * time.Millisecond)
			}
			return flavor(t)(w, r)
		})
		if _, err := (&Source{}).Get(context.Background(), envCfg(map[string]any{"timeout": 3}, slow.URL+basePath)); err != nil {
			t.Errorf("timeout 3: %v", err)
		}
	})
	t.Run("max_wait", func(t *testing.T) { urlSource.MaxWait(t, 0.3) })
}
