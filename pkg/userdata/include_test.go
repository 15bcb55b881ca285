package userdata

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
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

// TestIncludeOverallDeadline: every #include URL shares one deadline
// (Options.IncludeBudget), so 256 URLs of a black-holed host cost the
// budget, not hours; URLs after it are reported, not fetched.
func TestIncludeOverallDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var calls atomic.Int32
		fetch := func(ctx context.Context, u string) ([]byte, error) {
			calls.Add(1)
			select {
			case <-time.After(time.Minute):
				return nil, errors.New("timed out")
			case <-ctx.Done():
				return nil, context.Cause(ctx)
			}
		}
		var in strings.Builder
		in.WriteString("#include\n")
		for i := range MaxIncludeURLs {
			fmt.Fprintf(&in, "http://127.0.0.1:9/%d\n", i)
		}
		res, err := Process(t.Context(), "user-data", []byte(in.String()), Options{Fetch: fetch, IncludeBudget: 2 * time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		if n := calls.Load(); n > 3 {
			t.Errorf("%d fetches under a 2 min budget of 1 min fetches, want at most 3", n)
		}
		if len(res.Errors) != MaxIncludeURLs {
			t.Fatalf("%d errors, want one per URL (%d)", len(res.Errors), MaxIncludeURLs)
		}
		if last := res.Errors[len(res.Errors)-1]; !errors.Is(last, ErrIncludeBudget) {
			t.Errorf("last URL: %v, want ErrIncludeBudget", last)
		}
	})
}

// TestIncludeRedirectLoop: an #include URL that redirects in a loop fails
// at once, without the retries a transport error gets.
func TestIncludeRedirectLoop(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if r.URL.Path == "/a" {
			http.Redirect(w, r, "/b", http.StatusFound)
			return
		}
		http.Redirect(w, r, "/a", http.StatusFound)
	}))
	defer srv.Close()
	f := &Fetcher{Client: &http.Client{}, Retries: 5, Delay: time.Millisecond}
	if _, err := f.Fetch(t.Context(), srv.URL+"/a"); err == nil {
		t.Fatal("a redirect loop was fetched")
	}
	if n := hits.Load(); n > 6 {
		t.Errorf("%d requests for a redirect loop, want it given up at once", n)
	}
}

// TestIncludeRedirectOffHost: an #include may be redirected to another
// host (cloud-init follows it), but nothing but User-Agent goes along.
func TestIncludeRedirectOffHost(t *testing.T) {
	var got atomic.Value
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.Store(r.Header.Get("Authorization") + "|" + r.Header.Get("Metadata-Flavor"))
		w.Write([]byte("#!/bin/sh\necho moved\n"))
	}))
	defer other.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/x", http.StatusFound)
	}))
	defer srv.Close()
	f := &Fetcher{Client: &http.Client{}}
	b, err := f.Fetch(t.Context(), srv.URL+"/x")
	if err != nil || !strings.Contains(string(b), "moved") {
		t.Fatalf("off-host include redirect: %q, %v", b, err)
	}
	if got.Load() != "|" {
		t.Errorf("headers carried off host: %v", got.Load())
	}
}
