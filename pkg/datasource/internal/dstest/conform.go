package dstest

// The conformance suite every metadata-URL source runs (Conform), and the
// fuzz target body every document parser shares (FuzzData).

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/netconfig"
)

// Broken is a service that answers, but wrongly: Get fails with an error
// that names the service's URL and contains Want, and is not
// ErrNotFound (a broken service is not an absent one).
type Broken struct {
	Name string
	// Code and Body answer every request, unless Hook is set.
	Code int
	Body string
	// Hook, when not nil, answers instead (a document served right and a
	// second one broken).
	Hook func(w http.ResponseWriter, r *http.Request) bool
	Want string
	// Env, when not nil, is the Env for this case instead of
	// Metadata.Env (a DMI serial that does not match).
	Env func(base string) datasource.Env
}

// Metadata is a metadata-URL source for Conform.
type Metadata struct {
	Source datasource.Source
	// Env is the source's Env, the network up, for a service at base (a
	// server's URL).
	Env func(base string) datasource.Env
	// Root is a golden case's tree (a service that answers).
	Root string
	// Hook, when not nil, is the protocol every server of Conform's
	// speaks: it sees each request first (a header every request must
	// carry, one every reply carries back, an authorization) and answers
	// it by returning true, before a case's own answer.
	Hook func(w http.ResponseWriter, r *http.Request) bool
	// Doc, when not "", is the request path of the document Conform's
	// "truncated" case serves cut in half (a directory's: its _index).
	Doc string
	// Broken are the source's own broken services, after Conform's "500"
	// and "truncated".
	Broken []Broken
	// AbsentBudget is Network.AbsentBudget.
	AbsentBudget time.Duration
	// NotFound are the source's own not-found cases, after
	// NetworkCases (platform detection, configuration).
	NotFound []NotFoundCase
	// Why404Broken, when not "", says why a service answering 404 to
	// everything is broken for this source rather than absent: the "404"
	// not-found case is left out, for one of m.Broken to cover.
	Why404Broken string
	// JSON is true for a service answering JSON objects: Conform adds
	// "not JSON" and "not an object" (every request so answered).
	JSON bool
}

// Conform runs the cases every metadata-URL source shares:
//   - NetworkCases (network down, absent, 404, slow) and m.NotFound
//     through NotFound;
//   - "500": every request answered 500: an error with "status 500";
//   - "truncated": the tree served with Doc cut in half: an error;
//   - with m.JSON, "not JSON" and "not an object";
//   - m.Broken.
func Conform(t *testing.T, m Metadata) {
	t.Helper()
	up := Serve(t, m.Root, m.Hook)
	t.Run("not found", func(t *testing.T) {
		var cases []NotFoundCase
		for _, c := range NetworkCases(t, Network{Env: m.Env, Up: up, AbsentBudget: m.AbsentBudget, Hook: m.Hook}) {
			if c.Name != "404" || m.Why404Broken == "" {
				cases = append(cases, c)
			}
		}
		NotFound(t, m.Source, append(cases, m.NotFound...))
	})
	cases := []Broken{{Name: "500", Code: http.StatusInternalServerError, Want: "status 500"}}
	if m.JSON {
		cases = append(cases,
			Broken{Name: "not JSON", Code: http.StatusOK, Body: "instance-id: 1", Want: "invalid character"},
			Broken{Name: "not an object", Code: http.StatusOK, Body: "[1]", Want: "expected a JSON object"})
	}
	if m.Doc != "" {
		p := filepath.Join(m.Root, filepath.FromSlash(m.Doc))
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			p = filepath.Join(p, "_index")
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, Broken{Name: "truncated", Hook: Answer(m.Doc, http.StatusOK, string(b[:len(b)/2]))})
	}
	for _, tc := range append(cases, m.Broken...) {
		t.Run(tc.Name, func(t *testing.T) {
			hook := tc.Hook
			if hook == nil {
				hook = func(w http.ResponseWriter, r *http.Request) bool {
					w.WriteHeader(tc.Code)
					w.Write([]byte(tc.Body))
					return true
				}
			}
			srv := Serve(t, m.Root, Chain(m.Hook, hook))
			env := m.Env
			if tc.Env != nil {
				env = tc.Env
			}
			_, err := m.Source.Get(context.Background(), env(srv.URL))
			Broke(t, err, srv.URL, tc.Want)
		})
	}
}

// Chain is a hook that asks each of hooks (nil ones left out) in turn
// until one answers.
func Chain(hooks ...func(w http.ResponseWriter, r *http.Request) bool) func(w http.ResponseWriter, r *http.Request) bool {
	return func(w http.ResponseWriter, r *http.Request) bool {
		for _, h := range hooks {
			if h != nil && h(w, r) {
				return true
			}
		}
		return false
	}
}

// Broke checks the error of a Get from a broken service at url: it
// contains want and url, and is not ErrNotFound (a broken service is not
// an absent one).
func Broke(t testing.TB, err error, url, want string) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), url) {
		t.Fatalf("err = %v, want containing %q and the URL", err, want)
	}
	if errors.Is(err, datasource.ErrNotFound) {
		t.Errorf("a broken service is not ErrNotFound: %v", err)
	}
}

// Seed adds to f the file doc (a request path) of every golden case's
// tree under testdata, and extra.
func Seed(f *testing.F, doc string, extra ...string) {
	ents, _ := os.ReadDir("testdata")
	for _, e := range ents {
		if b, err := os.ReadFile(filepath.Join("testdata", e.Name(), "tree", filepath.FromSlash(doc))); err == nil {
			f.Add(b)
		}
	}
	for _, s := range extra {
		f.Add([]byte(s))
	}
}

// FuzzData is the fuzz body every document parser shares: build must not
// panic; Data it accepts has an instance-id, its golden view marshals,
// and check (when not nil) holds.
func FuzzData(f *testing.F, build func(b []byte) (*datasource.Data, error), check func(t *testing.T, d *datasource.Data)) {
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := build(b)
		if err != nil {
			return
		}
		if d.InstanceID() == "" {
			t.Fatal("no instance-id")
		}
		if _, err := json.Marshal(ViewOf(d)); err != nil {
			t.Fatal(err)
		}
		if check != nil {
			check(t, d)
		}
	})
}

// Trees is the golden test of a metadata-URL source, for GoldenTrees.
type Trees struct {
	Source datasource.Source
	// Env is the source's Env for the case in dir (its case.json, when it
	// has one) and a service at base.
	Env func(dir, base string) datasource.Env
	// Hook, when not nil, is the server's hook (header checks).
	Hook func(w http.ResponseWriter, r *http.Request) bool
	// Differs are the fields of a case's upstream golden where cloudroot
	// deliberately differs, by case name.
	Differs map[string]Differs
	// Requests, when not 0, is how many requests a Get makes.
	Requests int
}

// GoldenTrees runs, for each case testdata/<case>/, a Get against its
// tree/ served on 127.0.0.1, and compares Data with upstream-26.json
// (Upstream) and want.json (Golden).
func GoldenTrees(t *testing.T, g Trees) {
	t.Helper()
	for _, name := range Cases(t, "testdata") {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join("testdata", name)
			srv := Serve(t, filepath.Join(dir, "tree"), g.Hook)
			d, err := g.Source.Get(context.Background(), g.Env(dir, srv.URL))
			Upstream(t, dir, d, err, srv.URL, g.Differs[name])
			if err != nil {
				t.Fatal(err)
			}
			Golden(t, filepath.Join(dir, "want.json"), d, srv.URL)
			if n := len(srv.Requests()); g.Requests != 0 && n != g.Requests {
				t.Errorf("%d requests, want %d", n, g.Requests)
			}
		})
	}
}

// TreeBroken are the broken services of an EC2-style tree (a meta-data/
// listing and a user-data leaf, as CloudStack's virtual router and
// Exoscale serve): user-data answering 503, a listing without
// instance-id.
var TreeBroken = []Broken{
	{Name: "user-data 503", Want: "user-data: status 503", Hook: func(w http.ResponseWriter, r *http.Request) bool {
		if strings.HasSuffix(r.URL.Path, "/user-data") {
			http.Error(w, "", http.StatusServiceUnavailable)
			return true
		}
		return false
	}},
	{Name: "no instance-id", Want: "meta-data has no instance-id", Hook: Answer("/meta-data/", http.StatusOK, "local-hostname\n")},
}

// Converted checks the network description a source hands on raw: Get on
// tree (served at env's base) puts a mapping under key in
// Data.NetworkConfig, and convert makes a configuration of it for a
// machine with macs.
func Converted(t *testing.T, src datasource.Source, env func(base string) datasource.Env, tree, key string,
	convert func(map[string]any, netconfig.Links) (*netconfig.Config, error), macs netconfig.MACs) {
	t.Helper()
	srv := Serve(t, tree, nil)
	d, err := src.Get(context.Background(), env(srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	md, ok := d.NetworkConfig[key].(map[string]any)
	if !ok {
		t.Fatalf("no %s in %v", key, d.NetworkConfig)
	}
	if cfg, err := convert(md, macs); err != nil || cfg == nil {
		t.Fatalf("converting %s: %v", key, err)
	}
}
