package maas

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/internal/dstest"
)

var testCreds = Credentials{ConsumerKey: "Cq4N3Z9pXf", TokenKey: "hTjDWn7aHw", TokenSecret: "sEcReT&k=y/ü"}

// maasAuth is a fake MAAS's OAuth check: every request must carry a
// PLAINTEXT header for creds with a new nonce and a timestamp within a
// minute of the server's clock (the real clock plus offset); otherwise
// the answer is 401 with the server's Date.
type maasAuth struct {
	creds  Credentials
	offset time.Duration

	mu       sync.Mutex
	nonces   map[string]bool
	refusals []string // why each refused request was refused
}

func newAuth(c Credentials, offset time.Duration) *maasAuth {
	return &maasAuth{creds: c, offset: offset, nonces: map[string]bool{}}
}

func (a *maasAuth) why(r *http.Request, now time.Time) string {
	ps, err := ParseHeader(r.Header.Get("Authorization"))
	if err != nil {
		return err.Error()
	}
	want := map[string]string{
		"oauth_version": "1.0", "oauth_signature_method": "PLAINTEXT", "oauth_consumer_key": a.creds.ConsumerKey,
		"oauth_token": a.creds.TokenKey, "oauth_signature": PlaintextSignature(a.creds.ConsumerSecret, a.creds.TokenSecret),
	}
	for k, v := range want {
		if got, _ := Lookup(ps, k); got != v {
			return k + " mismatch"
		}
	}
	nonce, _ := Lookup(ps, "oauth_nonce")
	if nonce == "" || a.nonces[nonce] {
		return "nonce reused"
	}
	a.nonces[nonce] = true
	ts, _ := Lookup(ps, "oauth_timestamp")
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return "bad timestamp"
	}
	if d := now.Unix() - sec; d > 60 || d < -60 {
		return "timestamp out of range"
	}
	return ""
}

// hook is a dstest hook: it answers refused requests.
func (a *maasAuth) hook(w http.ResponseWriter, r *http.Request) bool {
	now := time.Now().Add(a.offset)
	a.mu.Lock()
	why := a.why(r, now)
	if why != "" {
		a.refusals = append(a.refusals, why)
	}
	a.mu.Unlock()
	if why == "" {
		return false
	}
	w.Header().Set("Date", now.UTC().Format(http.TimeFormat))
	http.Error(w, "Authorization Error: "+why, http.StatusUnauthorized)
	return true
}

func (a *maasAuth) Refusals() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.refusals...)
}

func maasCfg(base string, c Credentials) map[string]any {
	return map[string]any{"MAAS": map[string]any{
		"metadata_url": base + "/MAAS/metadata/", "consumer_key": c.ConsumerKey, "token_key": c.TokenKey,
		"token_secret": c.TokenSecret, "consumer_secret": c.ConsumerSecret,
	}}
}

func netEnv(base string) datasource.Env {
	return datasource.Env{NetworkUp: true, Budget: 5 * time.Second, Config: maasCfg(base, testCreds)}
}

// seedRoot puts the directory dir at var/lib/cloud/seed/maas of a root.
func seedRoot(t *testing.T, dir string) fstest.MapFS {
	t.Helper()
	root := fstest.MapFS{}
	src := os.DirFS(dir)
	err := fs.WalkDir(src, ".", func(p string, de fs.DirEntry, err error) error {
		if err == nil && !de.IsDir() {
			b, err := fs.ReadFile(src, p)
			if err != nil {
				return err
			}
			root["var/lib/cloud/seed/maas/"+p] = &fstest.MapFile{Data: b}
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// TestGolden: cases with a tree/ are served by a fake MAAS that checks the
// OAuth header; cases with a seed/ are the seed directory, read with the
// network down.
// upstreamDiffers are the fields of each case's upstream golden where
// cloudroot deliberately differs (docs/datasources.md).
var upstreamDiffers = map[string]dstest.Differs{
	"seed": {"vendordata_raw": "cloud-init keeps a vendor-data list as is (its user-data processing takes a list of parts); cloudroot hands on the same parts as one MIME multipart"},
}

func TestGolden(t *testing.T) {
	for _, name := range dstest.Cases(t, "testdata") {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join("testdata", name)
			if _, err := os.Stat(filepath.Join(dir, "seed")); err == nil {
				d, err := (&Source{}).Get(context.Background(), datasource.Env{Root: seedRoot(t, filepath.Join(dir, "seed"))})
				dstest.Upstream(t, dir, d, err, "", upstreamDiffers[name])
				if err != nil {
					t.Fatal(err)
				}
				dstest.Golden(t, filepath.Join(dir, "want.json"), d, "")
				return
			}
			auth := newAuth(testCreds, 0)
			srv := dstest.Serve(t, filepath.Join(dir, "tree"), auth.hook)
			d, err := (&Source{}).Get(context.Background(), netEnv(srv.URL))
			dstest.Upstream(t, dir, d, err, srv.URL, upstreamDiffers[name])
			if err != nil {
				t.Fatal(err)
			}
			if r := auth.Refusals(); len(r) != 0 {
				t.Errorf("requests refused: %v", r)
			}
			for _, r := range srv.Requests() {
				if !strings.HasPrefix(r.Path, "/MAAS/metadata/2012-03-01/") {
					t.Errorf("request for %s, outside the version", r.Path)
				}
			}
			dstest.Golden(t, filepath.Join(dir, "want.json"), d, srv.URL)
		})
	}
}

// TestClockSkew: a server an hour ahead refuses the first request with
// its Date; the request is retried once with the corrected timestamp and
// every later request uses it.
func TestClockSkew(t *testing.T) {
	for _, offset := range []time.Duration{time.Hour, -3 * time.Hour} {
		t.Run(offset.String(), func(t *testing.T) {
			auth := newAuth(testCreds, offset)
			srv := dstest.Serve(t, "testdata/url-full/tree", auth.hook)
			d, err := (&Source{}).Get(context.Background(), netEnv(srv.URL))
			if err != nil {
				t.Fatal(err)
			}
			if d.InstanceID() != "node-4y3h8a" {
				t.Errorf("instance-id %q", d.InstanceID())
			}
			if r := auth.Refusals(); len(r) != 1 || r[0] != "timestamp out of range" {
				t.Errorf("refusals %v, want one for the timestamp", r)
			}
			reqs := srv.Requests()
			if len(reqs) != 6 || reqs[0].Path != reqs[1].Path {
				t.Errorf("%d requests, want the version check twice and 4 more", len(reqs))
			}
		})
	}
}

// TestUnsigned: without credentials nothing is signed.
func TestUnsigned(t *testing.T) {
	srv := dstest.Serve(t, "testdata/url-minimal/tree", nil)
	e := datasource.Env{NetworkUp: true, Budget: 5 * time.Second, Config: maasCfg(srv.URL, Credentials{})}
	d, err := (&Source{}).Get(context.Background(), e)
	if err != nil {
		t.Fatal(err)
	}
	if d.LocalHostname() != "minimal" || d.UserData != nil {
		t.Errorf("hostname %q, user-data %q", d.LocalHostname(), d.UserData)
	}
	for _, r := range srv.Requests() {
		if r.Header.Get("Authorization") != "" {
			t.Errorf("%s signed without credentials", r.Path)
		}
	}
}

// TestSeedFirst: the seed wins over the URL and needs no network.
func TestSeedFirst(t *testing.T) {
	srv := dstest.Serve(t, "testdata/url-full/tree", nil)
	e := netEnv(srv.URL)
	e.NetworkUp = false
	e.Root = seedRoot(t, "testdata/seed/seed")
	d, err := (&Source{}).Get(context.Background(), e)
	if err != nil {
		t.Fatal(err)
	}
	if d.Subplatform != "seed-dir (/var/lib/cloud/seed/maas)" || d.InstanceID() != "iid-seed-maas" {
		t.Errorf("got %s %s, want the seed's", d.Subplatform, d.InstanceID())
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests with a seed present", n)
	}
}

// TestConform: the cases every metadata-URL source shares, every server
// checking the OAuth header; a transfer cut short (MAAS's documents are
// text: one cut in half still reads, so Conform's "truncated" is a body
// shorter than its Content-Length); and MAAS's own not-found cases. Its
// protocol's errors (credentials refused, malformed documents) are
// TestErrors'.
func TestConform(t *testing.T) {
	srv := dstest.Serve(t, "testdata/url-full/tree", nil)
	blank := dstest.Serve(t, "", func(w http.ResponseWriter, r *http.Request) bool { return true })
	emptySeed := fstest.MapFS{"var/lib/cloud/seed/maas": &fstest.MapFile{Mode: fs.ModeDir | 0o755}}
	maxWait := func(base string, v any) datasource.Env {
		e := netEnv(base)
		e.Config["MAAS"].(map[string]any)["max_wait"] = v
		return e
	}
	dstest.Conform(t, dstest.Metadata{
		Source: &Source{},
		Env: func(base string) datasource.Env {
			e := netEnv(base)
			e.Config["MAAS"].(map[string]any)["retries"] = 0
			return e
		},
		Root:         "testdata/url-full/tree",
		Hook:         newAuth(testCreds, 0).hook,
		AbsentBudget: time.Second,
		NotFound: []dstest.NotFoundCase{
			{Name: "nothing configured", Env: datasource.Env{NetworkUp: true}, Want: datasource.ErrNotFound},
			{Name: "empty seed, no URL", Env: datasource.Env{Root: emptySeed}, Want: datasource.ErrNotFound},
			{Name: "max_wait 0", Env: maxWait(srv.URL, 0), Want: datasource.ErrNotFound, Quiet: srv},
			{Name: "empty instance-id", Env: netEnv(blank.URL), Want: datasource.ErrNotFound},
			{Name: "slow, max_wait", Env: maxWait(dstest.Serve(t, "", dstest.Hang).URL, 0.3), Want: datasource.ErrNotFound},
		},
		Broken: []dstest.Broken{
			{Name: "truncated transfer", Want: "/MAAS/metadata/2012-03-01/user-data", Hook: func(w http.ResponseWriter, r *http.Request) bool {
				if !strings.HasSuffix(r.URL.Path, "/user-data") {
					return false
				}
				w.Header().Set("Content-Length", "100")
				w.Write([]byte("#!/bin/sh\n"))
				return true
			}},
		},
	})
}

func TestErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		creds Credentials // of the client; the server wants testCreds
		hook  func(w http.ResponseWriter, r *http.Request) bool
		want  string
		is    error
	}{
		{"bad signature", Credentials{ConsumerKey: testCreds.ConsumerKey, TokenKey: testCreds.TokenKey, TokenSecret: "wrong"}, nil,
			"refused the credentials", nil},
		{"wrong token", Credentials{ConsumerKey: testCreds.ConsumerKey, TokenKey: "other", TokenSecret: testCreds.TokenSecret}, nil,
			"status 401", nil},
		{"no local-hostname", testCreds, dstest.Answer("/local-hostname", 404, ""), "missing files meta-data/local-hostname", ErrMalformed},
		{"user-data 500", testCreds, dstest.Answer("/user-data", 500, ""), "/MAAS/metadata/2012-03-01/user-data: status 500", nil},
		{"vendor-data 403", testCreds, dstest.Answer("/vendor-data", 403, ""), "/MAAS/metadata/2012-03-01/meta-data/vendor-data: status 403", nil},
		{"vendor-data not YAML", testCreds, dstest.Answer("/vendor-data", 200, "a: [b"), "vendor-data was not loadable as yaml", ErrMalformed},
		{"hostname not UTF-8", testCreds, dstest.Answer("/local-hostname", 200, "\xff\xfe"), "meta-data/local-hostname is not UTF-8", ErrMalformed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			auth := newAuth(testCreds, 0)
			hook := func(w http.ResponseWriter, r *http.Request) bool {
				if auth.hook(w, r) {
					return true
				}
				return tc.hook != nil && tc.hook(w, r)
			}
			srv := dstest.Serve(t, "testdata/url-full/tree", hook)
			e := netEnv(srv.URL)
			e.Config = maasCfg(srv.URL, tc.creds)
			e.Config["MAAS"].(map[string]any)["retries"] = 0
			_, err := (&Source{}).Get(context.Background(), e)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want containing %q", err, tc.want)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("err = %v, want %v", err, tc.is)
			}
			if errors.Is(err, datasource.ErrNotFound) {
				t.Errorf("a broken service is not ErrNotFound: %v", err)
			}
			if strings.Contains(err.Error(), tc.creds.TokenSecret) || strings.Contains(err.Error(), Escape(tc.creds.TokenSecret)) {
				t.Errorf("error shows the token secret: %v", err)
			}
		})
	}
}

func TestConfigErrors(t *testing.T) {
	srv := dstest.Serve(t, "testdata/url-full/tree", nil)
	for name, mod := range map[string]func(m map[string]any){
		"token_secret missing": func(m map[string]any) { delete(m, "token_secret") },
		"consumer_key missing": func(m map[string]any) { delete(m, "consumer_key") },
		"token_key not text":   func(m map[string]any) { m["token_key"] = map[string]any{"a": 1} },
		"max_wait not number":  func(m map[string]any) { m["max_wait"] = "soon" },
	} {
		t.Run(name, func(t *testing.T) {
			e := netEnv(srv.URL)
			mod(e.Config["MAAS"].(map[string]any))
			_, err := (&Source{}).Get(context.Background(), e)
			if err == nil || errors.Is(err, datasource.ErrNotFound) || !strings.Contains(err.Error(), "datasource MAAS") {
				t.Fatalf("err = %v, want a configuration error", err)
			}
		})
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests with a broken configuration", n)
	}
}

func TestSeedErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"no instance-id", map[string]string{"user-data": "#cloud-config\n"}, "missing files meta-data/instance-id, meta-data/local-hostname"},
		{"unrelated files", map[string]string{"README": "x"}, "missing files meta-data/instance-id"},
		{"bad vendor-data", map[string]string{"meta-data/instance-id": "i", "meta-data/local-hostname": "h", "meta-data/vendor-data": "{"}, "vendor-data was not loadable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := fstest.MapFS{}
			for p, s := range tc.files {
				root["var/lib/cloud/seed/maas/"+p] = &fstest.MapFile{Data: []byte(s)}
			}
			_, err := (&Source{}).Get(context.Background(), datasource.Env{Root: root})
			if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), SeedDir) {
				t.Fatalf("err = %v, want ErrMalformed containing %q and the seed dir", err, tc.want)
			}
		})
	}
}

func TestVendorData(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"cloud-init key", "cloud-init: |\n  #cloud-config\n  a: 1\n", "#cloud-config\na: 1\n"},
		{"string", "just text", "just text"},
		{"empty mapping", "{}", ""},
		{"no cloud-init key", "other: x\n", ""},
		{"null", "~", ""},
		{"false", "false", ""},
		{"zero", "0", ""},
		{"list", "- '#!/bin/sh'\n", "Content-Type: multipart/mixed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Build(Input{Source: "s", Files: map[string][]byte{PathInstanceID: []byte("i"), PathLocalHostname: []byte("h"), PathVendorData: []byte(tc.in)}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(string(d.VendorData), tc.want) || (tc.want == "") != (d.VendorData == nil) {
				t.Errorf("vendor-data %q, want %q", d.VendorData, tc.want)
			}
		})
	}
	// Structures convert_vendordata rejects are dropped with a warning.
	var b strings.Builder
	d, err := Build(Input{Source: "s", Files: map[string][]byte{PathInstanceID: []byte("i"), PathLocalHostname: []byte("h"),
		PathVendorData: []byte("cloud-init: {a: 1}\n")}}, slog.New(slog.NewTextHandler(&b, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if d.VendorData != nil || !strings.Contains(b.String(), "invalid content in vendor-data") {
		t.Errorf("vendor-data %q, log %q: want none and a warning", d.VendorData, b.String())
	}
}

// FuzzBuild feeds arbitrary seed files to the seed parser.
func FuzzBuild(f *testing.F) {
	for _, dir := range []string{"testdata/url-full/tree/MAAS/metadata/2012-03-01", "testdata/seed/seed"} {
		read := func(p string) []byte { b, _ := os.ReadFile(filepath.Join(dir, p)); return b }
		f.Add(read(PathInstanceID), read(PathLocalHostname), read(PathPublicKeys), read(PathVendorData), read(PathUserData), uint8(0xff))
	}
	f.Add([]byte("i"), []byte{0xff}, []byte("- a\n- {b: c}"), []byte("cloud-init: [1, 2]"), []byte(nil), uint8(3))
	f.Fuzz(func(t *testing.T, iid, host, keys, vd, ud []byte, present uint8) {
		files := map[string][]byte{}
		for i, b := range [][]byte{iid, host, keys, vd, ud} {
			if present&(1<<i) != 0 {
				files[Fields()[i].Path] = b
			}
		}
		d, err := Build(Input{Source: "fuzz", Files: files}, nil)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v is not ErrMalformed", err)
			}
			return
		}
		if d.Name != "MAAS" || d.MetaData["instance-id"] != string(iid) || d.LocalHostname() != string(host) {
			t.Fatalf("bad data %+v", d)
		}
		if _, err := json.Marshal(dstest.ViewOf(d)); err != nil {
			t.Fatal(err)
		}
		_ = d.Description()
	})
}

// TestCheckInstanceID: cloud-init's get_id_from_ds_cfg hash (the value was
// computed with Python's hashlib) decides whether the cache is this node's.
func TestCheckInstanceID(t *testing.T) {
	cfg := map[string]any{"consumer_key": "ck", "token_key": "tk", "token_secret": "ts", "consumer_secret": "ignored"}
	const want = "v1:d2e2c5e781d7d073e5a7910ad88554e86bfa35c0dc35c74a08a8bfb87d3de026"
	if got := IDHash(cfg); got != want {
		t.Fatalf("IDHash = %s, want %s", got, want)
	}
	cached := &datasource.Data{DS: map[string]any{"id_hash": want}}
	env := func(c map[string]any) datasource.Env { return datasource.Env{Config: map[string]any{"MAAS": c}} }
	if !(&Source{}).CheckInstanceID(env(cfg), cached) {
		t.Error("same credentials not accepted")
	}
	if (&Source{}).CheckInstanceID(env(map[string]any{"consumer_key": "ck", "token_key": "tk2", "token_secret": "ts"}), cached) {
		t.Error("other credentials accepted")
	}
	if (&Source{}).CheckInstanceID(env(cfg), &datasource.Data{}) {
		t.Error("a cache without a hash accepted")
	}
}
