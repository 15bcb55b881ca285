package scaleway

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/internal/dstest"
)

// ports is the unprivileged range the tests connect from.
var ports = PortRange{Low: 47100, High: 47199}

func env(url string) datasource.Env {
	return datasource.Env{NetworkUp: true, Budget: 5 * time.Second,
		Config: map[string]any{"Scaleway": map[string]any{"metadata_url": url, "source_ports": []any{float64(ports.Low), float64(ports.High)}}}}
}

// portCheck fails requests not from the range, as the API refuses
// unprivileged ports, and the metadata request without format=json.
func portCheck(t *testing.T, p PortRange) func(w http.ResponseWriter, r *http.Request) bool {
	return func(w http.ResponseWriter, r *http.Request) bool {
		_, ps, _ := net.SplitHostPort(r.RemoteAddr)
		n, _ := strconv.Atoi(ps)
		if n < p.Low || n > p.High {
			t.Errorf("request from port %d, not in %s", n, p)
			http.Error(w, "forbidden", http.StatusForbidden)
			return true
		}
		if r.URL.Path == "/conf" && r.URL.RawQuery != "format=json" {
			t.Errorf("metadata query %q", r.URL.RawQuery)
		}
		return false
	}
}

// upstreamDiffers are the fields of each case's upstream golden where
// cloudroot deliberately differs (docs/datasources.md).
var upstreamDiffers = map[string]dstest.Differs{}

func TestGolden(t *testing.T) {
	for _, name := range dstest.Cases(t, "testdata") {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join("testdata", name)
			srv := dstest.Serve(t, filepath.Join(dir, "tree"), portCheck(t, ports))
			d, err := (&Source{}).Get(context.Background(), env(srv.URL))
			dstest.Upstream(t, dir, d, err, srv.URL, upstreamDiffers[name])
			if err != nil {
				t.Fatal(err)
			}
			dstest.Golden(t, filepath.Join(dir, "want.json"), d, srv.URL)
			if n := len(srv.Requests()); n != 3 {
				t.Errorf("%d requests, want 3", n)
			}
		})
	}
}

// TestSourcePorts: Source.Ports is used without configuration, and busy
// ports (here the even ones, which have listeners) are skipped.
func TestSourcePorts(t *testing.T) {
	p := PortRange{Low: 47300, High: 47309}
	var held []net.Listener
	for port := p.Low; port <= p.High; port += 2 {
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			t.Skipf("port %d: %v", port, err)
		}
		held = append(held, l)
	}
	defer func() {
		for _, l := range held {
			l.Close()
		}
	}()
	srv := dstest.Serve(t, "testdata/minimal/tree", func(w http.ResponseWriter, r *http.Request) bool {
		_, ps, _ := net.SplitHostPort(r.RemoteAddr)
		if n, _ := strconv.Atoi(ps); n < p.Low || n > p.High || n%2 == 0 {
			t.Errorf("request from port %d", n)
		}
		return false
	})
	d, err := (&Source{URL: srv.URL, Ports: p}).Get(context.Background(), datasource.Env{NetworkUp: true})
	if err != nil {
		t.Fatal(err)
	}
	if d.InstanceID() != "min-1" || d.UserData != nil || d.VendorData != nil {
		t.Errorf("instance-id %q user-data %q vendor-data %q", d.InstanceID(), d.UserData, d.VendorData)
	}
}

func TestDefaults(t *testing.T) {
	base, p := (&Source{}).config(datasource.Env{})
	if base != DefaultMetadataURL || p != DefaultPorts || p.Low != 1 || p.High != 1023 {
		t.Errorf("defaults %s %s", base, p)
	}
	_, p = (&Source{Ports: PortRange{5, 4}}).config(datasource.Env{})
	if p != DefaultPorts {
		t.Errorf("invalid range used: %s", p)
	}
}

func TestPrivilegedPort(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root may bind privileged ports")
	}
	srv := dstest.Serve(t, "testdata/minimal/tree", nil)
	_, err := (&Source{URL: srv.URL, Ports: PortRange{1, 1}}).Get(context.Background(), datasource.Env{NetworkUp: true, Budget: 2 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "needs root") {
		t.Fatalf("err = %v, want a privilege error", err)
	}
}

// TestConform: the cases every metadata-URL source shares, and
// Scaleway's broken services.
func TestConform(t *testing.T) {
	dstest.Conform(t, dstest.Metadata{
		Source: &Source{},
		Env:    func(base string) datasource.Env { return env(base) },
		Root:   "testdata/instance/tree",
		Doc:    "conf",
		Broken: []dstest.Broken{
			{Name: "403", Hook: dstest.Answer("/conf", http.StatusForbidden, ""), Want: "status 403"},
			{Name: "not JSON", Hook: dstest.Answer("/conf", 200, "id=1"), Want: "invalid character"},
			{Name: "no id", Hook: dstest.Answer("/conf", 200, `{"hostname": "h"}`), Want: "no id"},
			{Name: "user-data 500", Hook: dstest.Answer("/"+UserDataPath, http.StatusInternalServerError, ""), Want: "status 500"},
		},
	})
}

func FuzzBuild(f *testing.F) {
	for _, c := range []string{"instance", "minimal"} {
		b, _ := os.ReadFile(filepath.Join("testdata", c, "tree", "conf"))
		f.Add(b)
	}
	f.Add([]byte(`{"id": 1e30, "tags": ["AUTHORIZED_KEY=", 3], "ssh_public_keys": [{"key": 5}, null], "location": {"zone_id": "-1"}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := Build(Input{URL: "http://x", MetaData: b})
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
