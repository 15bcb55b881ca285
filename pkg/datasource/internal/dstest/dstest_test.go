package dstest

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/imds"
)

// fake is the smallest network source: its instance-id is <base>/id, read
// with the metadata client built from its configuration.
type fake struct{}

func (fake) Name() string { return "Fake" }

func (fake) Get(ctx context.Context, env datasource.Env) (*datasource.Data, error) {
	if !env.NetworkUp {
		return nil, fmt.Errorf("fake: %w", datasource.ErrNeedNetwork)
	}
	c, err := env.IMDS("Fake", datasource.IMDSDefaults{Timeout: 2 * time.Second, Retries: 2})
	if err != nil {
		return nil, fmt.Errorf("fake: %w", err)
	}
	ctx, cancel := c.WithBudget(ctx)
	defer cancel()
	base, id, err := c.Probe(ctx, "id")
	if err != nil {
		if imds.Absent(err) {
			return nil, fmt.Errorf("fake: %w: %w", datasource.ErrNotFound, err)
		}
		return nil, fmt.Errorf("fake: %w", err)
	}
	return &datasource.Data{Name: "Fake", Subplatform: "metadata (" + base + ")", MetaData: map[string]any{"instance-id": string(id)}}, nil
}

// tree is a metadata tree with an instance-id.
func tree(t *testing.T) string {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "id"), []byte("i-1"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func fakeEnv(kv map[string]any, urls ...string) datasource.Env {
	cfg := map[string]any{"metadata_urls": urls}
	for k, v := range kv {
		cfg[k] = v
	}
	return datasource.Env{NetworkUp: true, Budget: 5 * time.Second, Config: map[string]any{"Fake": cfg}}
}

func TestNetworkCases(t *testing.T) {
	cases := NetworkCases(t, Network{
		Env: func(base string) datasource.Env { return fakeEnv(nil, base) },
		Up:  Serve(t, tree(t), nil),
	})
	var names []string
	for _, c := range cases {
		names = append(names, c.Name)
	}
	if diff := cmp.Diff([]string{"network down", "absent", "404", "slow"}, names); diff != "" {
		t.Errorf("cases (-want +got):\n%s", diff)
	}
	NotFound(t, fake{}, cases)
}

func TestURLSource(t *testing.T) {
	u := URLSource{Source: fake{}, Env: fakeEnv}
	id := Req{Path: "/id"}
	t.Run("failover", func(t *testing.T) { u.Failover(t, Serve(t, tree(t), nil).URL) })
	t.Run("retries", func(t *testing.T) {
		u.Retries(t, Status(http.StatusServiceUnavailable), "status 503", id,
			Attempts{KV: nil, N: 3},
			Attempts{KV: map[string]any{"retries": 1}, N: 2},
			Attempts{KV: map[string]any{"max_wait": 0}, N: 1},
		)
	})
	t.Run("timeout", func(t *testing.T) { u.Timeouts(t, Serve(t, "", Hang), id, 2) })
	t.Run("max_wait", func(t *testing.T) { u.MaxWait(t, "0.3") })
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

func TestServe(t *testing.T) {
	dir := tree(t)
	for _, d := range []string{"keys", "attrs"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "attrs", "_index"), []byte(`{"a": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	s := Serve(t, dir, Answer("/broken", http.StatusBadGateway, "down"))
	for _, tc := range []struct {
		path, body string
		code       int
	}{
		{"/id", "i-1", 200},
		{"/id/", "404 page not found\n", 404},
		{"/", "attrs/\nid\nkeys/", 200},
		{"/attrs/?recursive=true", `{"a": 1}`, 200},
		{"/keys/", "", 200},
		{"/none", "404 page not found\n", 404},
		{"/a/broken", "down", 502},
	} {
		if code, body := get(t, s.URL+tc.path); code != tc.code || body != tc.body {
			t.Errorf("GET %s = %d %q, want %d %q", tc.path, code, body, tc.code, tc.body)
		}
	}
	get(t, s.URL+"/id")
	if n := s.Count(http.MethodGet, "/id"); n != 2 {
		t.Errorf("Count(GET, /id) = %d, want 2", n)
	}
	if n := s.Count("", "/attrs/"); n != 1 {
		t.Errorf("Count(any, /attrs/) = %d, want 1", n)
	}
	if n := s.Count(http.MethodPut, "/id"); n != 0 {
		t.Errorf("Count(PUT, /id) = %d, want 0", n)
	}
	if r := s.Requests()[3]; r.Query != "recursive=true" {
		t.Errorf("query %q", r.Query)
	}
}

// TestHang: a held request is let go when the client gives up.
func TestHang(t *testing.T) {
	s := Serve(t, "", Hang)
	c := &http.Client{Timeout: 100 * time.Millisecond}
	start := time.Now()
	if _, err := c.Get(s.URL); err == nil {
		t.Fatal("a hung request answered")
	}
	s.Close() // waits for the handler to return
	if el := time.Since(start); el > 30*time.Second {
		t.Errorf("the handler held the request %v after the client left", el)
	}
}

func TestInFlight(t *testing.T) {
	var f InFlight
	s := Serve(t, tree(t), f.Hook(func(r *http.Request) bool { return r.URL.Path == "/id" }, 200*time.Millisecond, nil))
	var wg sync.WaitGroup
	for _, p := range []string{"/id", "/id", "/id", "/none", "/none"} {
		wg.Go(func() {
			if resp, err := http.Get(s.URL + p); err == nil {
				resp.Body.Close()
			}
		})
	}
	wg.Wait()
	if n := f.Most(); n < 2 || n > 3 {
		t.Errorf("at most %d in flight, want the three /id requests together and /none not held", n)
	}
}

func TestReadJSON(t *testing.T) {
	p := filepath.Join(t.TempDir(), "case.json")
	if err := os.WriteFile(p, []byte(`{"imds": "v2", "n": 2}`), 0o644); err != nil {
		t.Fatal(err)
	}
	var v struct {
		IMDS string `json:"imds"`
		N    int    `json:"n"`
	}
	ReadJSON(t, p, &v)
	if v.IMDS != "v2" || v.N != 2 {
		t.Errorf("got %+v", v)
	}
}

func TestGunzip(t *testing.T) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write([]byte("image"))
	zw.Close()
	p := filepath.Join(t.TempDir(), "img.gz")
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := string(Gunzip(t, p)); got != "image" {
		t.Errorf("Gunzip = %q", got)
	}
}

func TestDeadSocket(t *testing.T) {
	sock := DeadSocket(t)
	if fi, err := os.Stat(sock); err != nil || fi.Mode()&os.ModeSocket == 0 {
		t.Fatalf("%s: %v, %v; want a socket left behind", sock, fi, err)
	}
	if c, err := net.Dial("unix", sock); err == nil {
		c.Close()
		t.Error("someone listens on the dead socket")
	}
}
