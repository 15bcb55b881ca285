package gce

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/internal/dstest"
	"github.com/cloudroot/cloudroot/pkg/imds"
	"github.com/cloudroot/cloudroot/pkg/imds/imdstest"
)

var update = flag.Bool("update", false, "rewrite testdata/*/want.json")

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

func env(url, user string) datasource.Env {
	return datasource.Env{DMI: onGCE, NetworkUp: true, DefaultUser: user, Budget: 5 * time.Second,
		Config: map[string]any{"GCE": map[string]any{"metadata_url": url}}}
}

func TestGolden(t *testing.T) {
	for _, name := range dstest.Cases(t, "testdata") {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join("testdata", name)
			var spec struct {
				DefaultUser string `json:"default_user"`
			}
			b, err := os.ReadFile(filepath.Join(dir, "case.json"))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(b, &spec); err != nil {
				t.Fatal(err)
			}
			srv := dstest.Serve(t, filepath.Join(dir, "tree"), flavor(t))
			base := srv.URL + "/computeMetadata/v1/"
			d, err := (&Source{Now: func() time.Time { return now }}).Get(context.Background(), env(base, spec.DefaultUser))
			if err != nil {
				t.Fatal(err)
			}
			dstest.Golden(t, filepath.Join(dir, "want.json"), d, srv.URL, *update)
			for _, r := range srv.Requests() {
				if strings.Contains(r.Path, "attributes") && r.Query != "recursive=true" {
					t.Errorf("%s?%s: attributes not fetched recursively", r.Path, r.Query)
				}
			}
		})
	}
}

func TestNotFound(t *testing.T) {
	tree := "testdata/no-attributes/tree"
	slow := dstest.Serve(t, "", func(w http.ResponseWriter, r *http.Request) bool {
		select {
		case <-r.Context().Done():
		case <-time.After(time.Minute):
		}
		return true
	})
	unflavored := dstest.Serve(t, tree, nil)
	noHostname := dstest.Serve(t, tree, func(w http.ResponseWriter, r *http.Request) bool {
		w.Header().Set(FlavorHeader, Flavor)
		if strings.HasSuffix(r.URL.Path, "/hostname") {
			http.NotFound(w, r)
			return true
		}
		return false
	})
	for _, tc := range []struct {
		name     string
		env      datasource.Env
		want     error
		requests *dstest.Server
	}{
		{"not GCE", datasource.Env{NetworkUp: true}, datasource.ErrNotFound, nil},
		{"network down", datasource.Env{DMI: bootenv.DMI{ProductSerial: "GoogleCloud-0A1B2C"}}, datasource.ErrNeedNetwork, nil},
		{"absent", env(dstest.ClosedURL(t), ""), datasource.ErrNotFound, nil},
		{"slow", func() datasource.Env {
			e := env(slow.URL+"/computeMetadata/v1/", "")
			e.Budget = 300 * time.Millisecond
			return e
		}(), datasource.ErrNotFound, nil},
		{"no Metadata-Flavor in replies", env(unflavored.URL+"/computeMetadata/v1/", ""), datasource.ErrNotFound, nil},
		{"required key missing", env(noHostname.URL+"/computeMetadata/v1/", ""), datasource.ErrNotFound, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			_, err := (&Source{}).Get(context.Background(), tc.env)
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if el := time.Since(start); el > 20*time.Second {
				t.Errorf("took %v", el)
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
			w.Header().Set(FlavorHeader, Flavor)
			http.Error(w, "", http.StatusInternalServerError)
			return true
		}, "instance/id: status 500"},
		{"attributes 503", func(w http.ResponseWriter, r *http.Request) bool {
			w.Header().Set(FlavorHeader, Flavor)
			if strings.Contains(r.URL.Path, "attributes") {
				http.Error(w, "", http.StatusServiceUnavailable)
				return true
			}
			return false
		}, "instance/attributes/?recursive=true: status 503"},
		{"attributes not JSON", func(w http.ResponseWriter, r *http.Request) bool {
			w.Header().Set(FlavorHeader, Flavor)
			if strings.Contains(r.URL.Path, "instance/attributes") {
				w.Write([]byte("user-data\nssh-keys\n"))
				return true
			}
			return false
		}, "instance/attributes: invalid character"},
		{"bad base64", func(w http.ResponseWriter, r *http.Request) bool {
			w.Header().Set(FlavorHeader, Flavor)
			if strings.Contains(r.URL.Path, "instance/attributes") {
				w.Write([]byte(`{"user-data": "abc", "user-data-encoding": "base64"}`))
				return true
			}
			return false
		}, "user-data: illegal base64"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := dstest.Serve(t, "testdata/no-attributes/tree", tc.hook)
			_, err := (&Source{}).Get(context.Background(), env(srv.URL+"/computeMetadata/v1/", ""))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want containing %q", err, tc.want)
			}
			if errors.Is(err, datasource.ErrNotFound) {
				t.Errorf("a broken server is not ErrNotFound: %v", err)
			}
		})
	}
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

// count is how many requests srv saw for path.
func count(srv *dstest.Server, path string) int {
	n := 0
	for _, r := range srv.Requests() {
		if r.Path == path {
			n++
		}
	}
	return n
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

// TestSecondURL: the first URL refusing connections, or holding them
// without an answer past the budget, does not keep the second from
// answering.
func TestSecondURL(t *testing.T) {
	hole := imdstest.NewBlackHole(t)
	for _, first := range []string{dstest.ClosedURL(t), hole.URL} {
		srv := dstest.Serve(t, "testdata/no-attributes/tree", flavor(t))
		base := srv.URL + "/computeMetadata/v1/"
		d, err := (&Source{}).Get(context.Background(), envCfg(map[string]any{"timeout": 60, "max_wait": 30}, first, base))
		if err != nil {
			t.Fatalf("first %s: %v", first, err)
		}
		if d.InstanceID() == "" {
			t.Errorf("first %s: no instance-id", first)
		}
	}
	if hole.Accepted() == 0 {
		t.Error("the black hole was never tried")
	}
}

// TestAbsentTriesEveryURL: nothing answers; Get is ErrNotFound within the
// budget and the second URL was tried although the first holds every
// request past it.
func TestAbsentTriesEveryURL(t *testing.T) {
	h1, h2 := imdstest.NewBlackHole(t), imdstest.NewBlackHole(t)
	e := envCfg(map[string]any{"timeout": 60}, h1.URL, h2.URL)
	e.Budget = time.Second
	_, err := (&Source{}).Get(context.Background(), e)
	if !errors.Is(err, datasource.ErrNotFound) || !errors.Is(err, imds.ErrBudget) {
		t.Fatalf("err = %v, want ErrNotFound after the budget", err)
	}
	if h1.Accepted() == 0 || h2.Accepted() == 0 {
		t.Errorf("connections: first URL %d, second URL %d; want both tried", h1.Accepted(), h2.Accepted())
	}
}

// TestParallelKeys: the five keys are fetched together.
func TestParallelKeys(t *testing.T) {
	var mu sync.Mutex
	in, most := 0, 0
	srv := dstest.Serve(t, "testdata/no-attributes/tree", func(w http.ResponseWriter, r *http.Request) bool {
		mu.Lock()
		in++
		most = max(most, in)
		mu.Unlock()
		time.Sleep(100 * time.Millisecond)
		mu.Lock()
		in--
		mu.Unlock()
		return flavor(t)(w, r)
	})
	if _, err := (&Source{}).Get(context.Background(), env(srv.URL+"/computeMetadata/v1/", "")); err != nil {
		t.Fatal(err)
	}
	if most < 2 {
		t.Errorf("at most %d requests in flight, want the keys in parallel", most)
	}
}

// TestConfig: `retries`, `timeout` and `max_wait` under datasource: GCE:
// are honoured.
func TestConfig(t *testing.T) {
	const id = "/computeMetadata/v1/instance/id"
	t.Run("retries", func(t *testing.T) {
		for _, tc := range []struct {
			kv   map[string]any
			gets int
		}{
			{nil, 1 + DefaultRetries},
			{map[string]any{"retries": 1}, 2},
			{map[string]any{"retries": 0}, 1},
			{map[string]any{"max_wait": 0}, 1},
		} {
			srv := dstest.Serve(t, "", func(w http.ResponseWriter, r *http.Request) bool {
				w.Header().Set(FlavorHeader, Flavor)
				http.Error(w, "", http.StatusInternalServerError)
				return true
			})
			_, err := (&Source{}).Get(context.Background(), envCfg(tc.kv, srv.URL+"/computeMetadata/v1/"))
			if err == nil || errors.Is(err, datasource.ErrNotFound) || !strings.Contains(err.Error(), "status 500") {
				t.Errorf("%v: err = %v, want the 500", tc.kv, err)
			}
			if n := count(srv, id); n != tc.gets {
				t.Errorf("%v: %d instance/id requests, want %d", tc.kv, n, tc.gets)
			}
		}
	})
	t.Run("timeout", func(t *testing.T) {
		// instance/id is never answered: only the request timeout ends an
		// attempt. In a one-second budget, `timeout: 0.05` leaves room for
		// the two attempts `retries: 1` allows; the default two seconds for
		// one, cut short by the budget.
		hang := dstest.Serve(t, "testdata/no-attributes/tree", func(w http.ResponseWriter, r *http.Request) bool {
			if r.URL.Path != id {
				return flavor(t)(w, r)
			}
			select {
			case <-r.Context().Done():
			case <-time.After(time.Minute):
			}
			return true
		})
		base := hang.URL + "/computeMetadata/v1/"
		for _, tc := range []struct {
			kv     map[string]any
			gets   int
			budget bool
		}{
			{map[string]any{"timeout": 0.05, "retries": 1}, 2, false},
			{map[string]any{"retries": 1}, 1, true},
		} {
			before := count(hang, id)
			e := envCfg(tc.kv, base)
			e.Budget = time.Second
			_, err := (&Source{}).Get(context.Background(), e)
			if !errors.Is(err, datasource.ErrNotFound) || errors.Is(err, imds.ErrBudget) != tc.budget {
				t.Errorf("%v: err = %v, want ErrNotFound (budget exhausted: %v)", tc.kv, err, tc.budget)
			}
			if n := count(hang, id) - before; n != tc.gets {
				t.Errorf("%v: %d instance/id requests, want %d", tc.kv, n, tc.gets)
			}
		}
		// A slow server answers within a longer timeout.
		slow := dstest.Serve(t, "testdata/no-attributes/tree", func(w http.ResponseWriter, r *http.Request) bool {
			if r.URL.Path == id {
				time.Sleep(300 * time.Millisecond)
			}
			return flavor(t)(w, r)
		})
		if _, err := (&Source{}).Get(context.Background(), envCfg(map[string]any{"timeout": 3}, slow.URL+"/computeMetadata/v1/")); err != nil {
			t.Errorf("timeout 3: %v", err)
		}
	})
	t.Run("max_wait", func(t *testing.T) {
		h := imdstest.NewBlackHole(t)
		e := envCfg(map[string]any{"max_wait": 0.3, "timeout": 60}, h.URL)
		e.Budget = time.Hour
		start := time.Now()
		_, err := (&Source{}).Get(context.Background(), e)
		if !errors.Is(err, datasource.ErrNotFound) || !errors.Is(err, imds.ErrBudget) {
			t.Fatalf("err = %v, want ErrNotFound after the budget", err)
		}
		if el := time.Since(start); el > time.Minute {
			t.Errorf("took %v: max_wait 0.3 did not replace the one-hour budget", el)
		}
	})
}
