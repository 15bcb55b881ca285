package exoscale

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/internal/dstest"
)

// passwordServer answers DomU_Request requests under /1.0/ like the
// password server: send_my_password gets reply, saved_password is counted.
func passwordServer(t *testing.T, reply string, acks *atomic.Int32) func(w http.ResponseWriter, r *http.Request) bool {
	return func(w http.ResponseWriter, r *http.Request) bool {
		req := r.Header.Get(RequestHeader)
		if req == "" {
			return false
		}
		if r.URL.Path != "/"+APIVersion+"/" {
			t.Errorf("password request to %s", r.URL.Path)
		}
		switch req {
		case SendPassword:
			w.Write([]byte(reply))
		case SavedPassword:
			acks.Add(1)
			w.Write([]byte(SavedPassword))
		default:
			t.Errorf("%s: %s", RequestHeader, req)
			http.Error(w, "bad_request", http.StatusBadRequest)
		}
		return true
	}
}

func port(t *testing.T, srv *dstest.Server) int {
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	p, err := strconv.Atoi(u.Port())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func env(base string, pwPort int) datasource.Env {
	return datasource.Env{NetworkUp: true, Budget: 5 * time.Second,
		Config: map[string]any{"Exoscale": map[string]any{"metadata_url": base, "password_server_port": pwPort}}}
}

// upstreamDiffers are the fields of each case's upstream golden where
// cloudroot deliberately differs (docs/datasources.md).
var upstreamDiffers = map[string]dstest.Differs{
	"new-password": {"config_obj": "cloudroot trims the line end the password server sends; cloud-init keeps it in `password` (chpasswd reads lines, so the password set is the same)"},
}

func TestGolden(t *testing.T) {
	for _, name := range dstest.Cases(t, "testdata") {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join("testdata", name)
			var spec struct {
				PasswordReply string `json:"password_reply"`
				Acknowledged  bool   `json:"acknowledged"`
			}
			dstest.ReadJSON(t, filepath.Join(dir, "case.json"), &spec)
			var acks atomic.Int32
			srv := dstest.Serve(t, filepath.Join(dir, "tree"), passwordServer(t, spec.PasswordReply, &acks))
			d, err := (&Source{}).Get(context.Background(), env(srv.URL, port(t, srv)))
			dstest.Upstream(t, dir, d, err, srv.URL, upstreamDiffers[name])
			if err != nil {
				t.Fatal(err)
			}
			dstest.Golden(t, filepath.Join(dir, "want.json"), d, srv.URL)
			if got := acks.Load() == 1; got != spec.Acknowledged || acks.Load() > 1 {
				t.Errorf("%d saved_password acknowledgements, want acknowledged=%v", acks.Load(), spec.Acknowledged)
			}
		})
	}
}

// TestPasswordPort: the password server is asked on its own port, given
// by the Source when not configured.
func TestPasswordPort(t *testing.T) {
	var acks atomic.Int32
	pw := dstest.Serve(t, "", passwordServer(t, "pw", &acks))
	md := dstest.Serve(t, "testdata/saved-password/tree", func(w http.ResponseWriter, r *http.Request) bool {
		if r.Header.Get(RequestHeader) != "" {
			t.Errorf("password request on the metadata port")
		}
		return false
	})
	d, err := (&Source{URL: md.URL, PasswordPort: port(t, pw)}).Get(context.Background(), datasource.Env{NetworkUp: true})
	if err != nil {
		t.Fatal(err)
	}
	if d.Config["password"] != "pw" || acks.Load() != 1 {
		t.Errorf("config %v, %d acks", d.Config, acks.Load())
	}
}

// TestPasswordServerFails: the instance is still found, without password.
func TestPasswordServerFails(t *testing.T) {
	srv := dstest.Serve(t, "testdata/new-password/tree", func(w http.ResponseWriter, r *http.Request) bool {
		if r.Header.Get(RequestHeader) != "" {
			http.Error(w, "", http.StatusInternalServerError)
			return true
		}
		return false
	})
	d, err := (&Source{}).Get(context.Background(), env(srv.URL, port(t, srv)))
	if err != nil {
		t.Fatal(err)
	}
	if d.Config != nil {
		t.Errorf("config %v without a password", d.Config)
	}
	// Nothing on the password port at all.
	srv2 := dstest.Serve(t, "testdata/new-password/tree", nil)
	closed, _ := url.Parse(dstest.ClosedURL(t))
	p, _ := strconv.Atoi(closed.Port())
	if _, err := (&Source{}).Get(context.Background(), env(srv2.URL, p)); err != nil {
		t.Fatal(err)
	}
}

func TestPasswordURL(t *testing.T) {
	for base, want := range map[string]string{
		DefaultMetadataURL:             DefaultMetadataURL + ":8080/1.0/",
		"http://127.0.0.1:1234/":       "http://127.0.0.1:8080/1.0/",
		"http://[fd00::1]:80/x?y=z":    "http://[fd00::1]:8080/1.0/",
		"http://metadata.example/1.0/": "http://metadata.example:8080/1.0/",
	} {
		if got, err := PasswordURL(base, DefaultPasswordPort); err != nil || got != want {
			t.Errorf("PasswordURL(%q) = %q, %v; want %q", base, got, err, want)
		}
	}
	if _, err := PasswordURL("no-scheme", 1); err == nil {
		t.Error("PasswordURL accepted a URL without host")
	}
}

func TestNotFound(t *testing.T) {
	dstest.NotFound(t, &Source{}, dstest.NetworkCases(t, dstest.Network{
		Env: func(base string) datasource.Env { return env(base, 1) },
		Up:  dstest.Serve(t, "testdata/new-password/tree", nil),
	}))
}

func TestErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		hook func(w http.ResponseWriter, r *http.Request) bool
		want string
	}{
		{"500", dstest.Status(http.StatusInternalServerError), "status 500"},
		{"user-data 503", func(w http.ResponseWriter, r *http.Request) bool {
			if strings.HasSuffix(r.URL.Path, "/user-data") {
				http.Error(w, "", http.StatusServiceUnavailable)
				return true
			}
			return false
		}, "user-data: status 503"},
		{"no instance-id", func(w http.ResponseWriter, r *http.Request) bool {
			if strings.HasSuffix(r.URL.Path, "/meta-data/") {
				w.Write([]byte("local-hostname\n"))
				return true
			}
			return false
		}, "meta-data has no instance-id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := dstest.Serve(t, "testdata/saved-password/tree", tc.hook)
			_, err := (&Source{}).Get(context.Background(), env(srv.URL, port(t, srv)))
			dstest.Broke(t, err, srv.URL, tc.want)
		})
	}
}

func FuzzPassword(f *testing.F) {
	f.Add([]byte("s3cr3t\n"), "id")
	f.Add([]byte("saved_password"), "id")
	f.Add([]byte(" \n"), "")
	f.Fuzz(func(t *testing.T, reply []byte, id string) {
		pw, ok := ParsePassword(reply)
		if ok != (pw != "") || pw == SavedPassword || strings.TrimSpace(pw) != pw {
			t.Fatalf("ParsePassword(%q) = %q, %v", reply, pw, ok)
		}
		d, err := Build(Input{MetaData: map[string]any{"instance-id": id}, Password: pw})
		if err != nil {
			if id != "" {
				t.Fatal(err)
			}
			return
		}
		if (d.Config != nil) != ok || (ok && d.Config["password"] != pw) {
			t.Fatalf("config %v for password %q", d.Config, pw)
		}
		if _, err := json.Marshal(dstest.ViewOf(d)); err != nil {
			t.Fatal(err)
		}
	})
}
