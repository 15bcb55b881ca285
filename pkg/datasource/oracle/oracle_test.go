package oracle

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/internal/dstest"
)

var update = flag.Bool("update", false, "rewrite testdata/*/want.json")

var onOCI = bootenv.DMI{ChassisAssetTag: ChassisAssetTag}

// auth answers like the metadata service: /opc/v2/ requires the Bearer
// header, /opc/v1/ must not get it.
func auth(t *testing.T) func(w http.ResponseWriter, r *http.Request) bool {
	return func(w http.ResponseWriter, r *http.Request) bool {
		got := r.Header.Get(AuthHeader)
		switch {
		case strings.HasPrefix(r.URL.Path, "/opc/v2/") && got != AuthValue:
			t.Errorf("%s without %s: %s", r.URL, AuthHeader, AuthValue)
			http.Error(w, "", http.StatusUnauthorized)
			return true
		case strings.HasPrefix(r.URL.Path, "/opc/v1/") && got != "":
			t.Errorf("%s with %s", r.URL, AuthHeader)
		}
		return false
	}
}

func env(url string) datasource.Env {
	return datasource.Env{DMI: onOCI, NetworkUp: true, Budget: 5 * time.Second,
		Config: map[string]any{"Oracle": map[string]any{"metadata_url": url}}}
}

func TestGolden(t *testing.T) {
	for _, name := range dstest.Cases(t, "testdata") {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join("testdata", name)
			srv := dstest.Serve(t, filepath.Join(dir, "tree"), auth(t))
			d, err := (&Source{}).Get(context.Background(), env(srv.URL))
			if err != nil {
				t.Fatal(err)
			}
			dstest.Golden(t, filepath.Join(dir, "want.json"), d, srv.URL, *update)
		})
	}
}

// TestV2First: v1 is not asked when v2 answers.
func TestV2First(t *testing.T) {
	srv := dstest.Serve(t, "testdata/v2/tree", auth(t))
	if _, err := (&Source{URL: srv.URL}).Get(context.Background(), datasource.Env{DMI: onOCI, NetworkUp: true}); err != nil {
		t.Fatal(err)
	}
	for _, r := range srv.Requests() {
		if strings.HasPrefix(r.Path, "/opc/v1/") {
			t.Errorf("v1 asked: %s", r.Path)
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
	srv := dstest.Serve(t, "testdata/v2/tree", nil)
	for _, tc := range []struct {
		name string
		env  datasource.Env
		want error
		srv  *dstest.Server
	}{
		{"not OCI", func() datasource.Env { e := env(srv.URL); e.DMI = bootenv.DMI{}; return e }(), datasource.ErrNotFound, srv},
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
		{"not JSON", func(w http.ResponseWriter, r *http.Request) bool {
			if strings.HasSuffix(r.URL.Path, "/instance/") {
				w.Write([]byte("id: x\n"))
				return true
			}
			return false
		}, "instance: invalid character"},
		{"no id", func(w http.ResponseWriter, r *http.Request) bool {
			if strings.HasSuffix(r.URL.Path, "/instance/") {
				w.Write([]byte(`{"hostname": "h"}`))
				return true
			}
			return false
		}, "instance: no id"},
		{"bad base64", func(w http.ResponseWriter, r *http.Request) bool {
			if strings.HasSuffix(r.URL.Path, "/instance/") {
				w.Write([]byte(`{"id": "i", "metadata": {"user_data": "abc"}}`))
				return true
			}
			return false
		}, "user_data: illegal base64"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := dstest.Serve(t, "testdata/v2/tree", tc.hook)
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

// TestVnicsFail: a failing vnics endpoint costs only the network config.
func TestVnicsFail(t *testing.T) {
	srv := dstest.Serve(t, "testdata/v2/tree", func(w http.ResponseWriter, r *http.Request) bool {
		if strings.HasSuffix(r.URL.Path, "/vnics/") {
			http.Error(w, "", http.StatusInternalServerError)
			return true
		}
		return false
	})
	d, err := (&Source{}).Get(context.Background(), env(srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	if d.NetworkConfig != nil {
		t.Errorf("network config %v without vnics", d.NetworkConfig)
	}
}

func FuzzBuild(f *testing.F) {
	for _, c := range []string{"v2/tree/opc/v2", "v1-fallback/tree/opc/v1"} {
		i, _ := os.ReadFile(filepath.Join("testdata", c, "instance/_index"))
		v, _ := os.ReadFile(filepath.Join("testdata", c, "vnics/_index"))
		f.Add(i, v)
	}
	f.Add([]byte(`{"id": "x", "metadata": {"user_data": "", "ssh_authorized_keys": ["a", 1]}}`), []byte(`null`))
	f.Fuzz(func(t *testing.T, inst, vnics []byte) {
		d, err := Build(Input{URL: "http://x/opc/v2/", Instance: inst, Vnics: vnics})
		if err != nil {
			return
		}
		if d.InstanceID() == "" {
			t.Fatal("Data without instance-id")
		}
		if _, err := json.Marshal(dstest.ViewOf(d)); err != nil {
			t.Fatal(err)
		}
	})
}
