package userdata

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// includeServer serves include documents on 127.0.0.1 with the failure
// modes cloud-init meets: 404, slow replies, oversize bodies, flaky 5xx.
func includeServer(t *testing.T) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var flaky, hits atomic.Int32
	release := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/ok.yaml", func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Write([]byte("#cloud-config\nhostname: fetched\n"))
	})
	mux.HandleFunc("/nested", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("#include\nhttp://" + r.Host + "/script\n"))
	})
	mux.HandleFunc("/script", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("#!/bin/sh\necho nested\n"))
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(strings.Repeat("#", 4096)))
	})
	mux.HandleFunc("/flaky", func(w http.ResponseWriter, r *http.Request) {
		if flaky.Add(1) < 3 {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte("#!/bin/sh\necho third time\n"))
	})
	srv := httptest.NewServer(mux) // listens on 127.0.0.1
	t.Cleanup(func() { close(release); srv.Close() })
	return srv, &hits
}

func testFetcher(srv *httptest.Server) *Fetcher {
	return &Fetcher{Client: srv.Client(), MaxBytes: 1024, Retries: 3, Timeout: 200 * time.Millisecond, Delay: time.Millisecond}
}

func TestIncludeHTTP(t *testing.T) {
	srv, _ := includeServer(t)
	f := testFetcher(srv)
	in := "#include\n" + strings.Join([]string{
		srv.URL + "/ok.yaml",
		srv.URL + "/missing",
		srv.URL + "/slow",
		srv.URL + "/big",
		srv.URL + "/flaky",
		srv.URL + "/nested",
	}, "\n") + "\n"
	res, err := Process(context.Background(), "user-data", []byte(in), Options{Fetch: f.Fetch})
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, p := range res.Parts {
		types = append(types, p.Type+" "+p.Filename)
	}
	want := []string{"text/cloud-config part-001", "text/x-shellscript part-002", "text/x-shellscript part-003"}
	if strings.Join(types, ",") != strings.Join(want, ",") {
		t.Errorf("parts = %v, want %v", types, want)
	}
	if len(res.Errors) != 3 {
		t.Fatalf("errors = %v, want 3 (404, slow, big)", res.Errors)
	}
	checks := []struct {
		line int
		url  string
		test func(error) bool
	}{
		{3, "/missing", func(err error) bool {
			var he *HTTPError
			return errors.As(err, &he) && he.Status == 404
		}},
		{4, "/slow", func(err error) bool { return errors.Is(err, context.DeadlineExceeded) }},
		{5, "/big", func(err error) bool { return errors.Is(err, ErrTooLarge) }},
	}
	for i, c := range checks {
		var e *Error
		if !errors.As(res.Errors[i], &e) {
			t.Fatalf("error %d is %T", i, res.Errors[i])
		}
		if e.Line != c.line || !strings.HasSuffix(e.URL, c.url) || !c.test(e) {
			t.Errorf("error %d = %v (line %d, url %s)", i, e, e.Line, e.URL)
		}
		if !strings.HasPrefix(e.Error(), "user-data: #include: line ") {
			t.Errorf("error does not name source, part and line: %v", e)
		}
	}
}

func TestHTTPFetcherNoRetryOn404(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		http.NotFound(w, r)
	}))
	defer srv.Close()
	fetch := HTTPFetcher(srv.Client(), 0, 5)
	if _, err := fetch(context.Background(), srv.URL+"/x"); err == nil {
		t.Fatal("want an error")
	}
	if n.Load() != 1 {
		t.Errorf("404 fetched %d times, want 1", n.Load())
	}
	if _, err := fetch(context.Background(), "ftp://127.0.0.1/x"); err == nil || !strings.Contains(err.Error(), "only http and https") {
		t.Errorf("ftp: err = %v", err)
	}
}

func TestFetcherDefaults(t *testing.T) {
	f := &Fetcher{}
	if cmpOr(f.Timeout, DefaultIncludeTimeout) != 5*time.Second {
		t.Error("default timeout is not cloud-init's 5 s")
	}
}

func TestIncludeOnceDirCache(t *testing.T) {
	srv, hits := includeServer(t)
	dir := t.TempDir()
	cache := &DirCache{
		Dir:      filepath.Join(dir, "urlcache"),
		ReadFile: os.ReadFile,
		WriteFile: func(name string, b []byte, perm os.FileMode) error {
			if err := os.MkdirAll(filepath.Dir(name), 0o700); err != nil {
				return err
			}
			return os.WriteFile(name, b, perm)
		},
	}
	u := srv.URL + "/ok.yaml"
	in := []byte("#include-once\n" + u + "\n")
	opts := Options{Fetch: testFetcher(srv).Fetch, IncludeOnceCache: cache}
	for i := 0; i < 2; i++ {
		res, err := Process(context.Background(), "user-data", in, opts)
		if err != nil || len(res.CloudConfigs) != 1 || len(res.Errors) != 0 {
			t.Fatalf("run %d: %v %v %v", i, err, res.CloudConfigs, res.Errors)
		}
	}
	if hits.Load() != 1 {
		t.Errorf("fetched %d times, want once", hits.Load())
	}
	fi, err := os.Stat(filepath.Join(dir, "urlcache", CacheKey(u)))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("cache file mode %v, want 0600", fi.Mode().Perm())
	}
	// #include (not once) always fetches.
	if _, err := Process(context.Background(), "user-data", []byte("#include\n"+u+"\n"), opts); err != nil {
		t.Fatal(err)
	}
	if hits.Load() != 2 {
		t.Errorf("fetched %d times, want 2", hits.Load())
	}
}

func TestCacheKeyIsMD5(t *testing.T) {
	// md5("http://example.com/") as cloud-init names the urlcache file.
	if got := CacheKey("http://example.com/"); got != "a6bf1757fff057f266b697df9cf176fd" {
		t.Errorf("CacheKey = %s", got)
	}
}
