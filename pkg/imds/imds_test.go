package imds

import (
	"context"
	"errors"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
)

// fakeIMDS serves testdata/<tree> EC2-style (files as bodies, directories
// as newline-separated listings, 404 otherwise) with the IMDSv2 token dance
// and knobs for failures. Tests reach it on 127.0.0.1 only.
type fakeIMDS struct {
	tree fs.FS
	// requireToken: GETs without the token get 401.
	requireToken bool
	// tokenStatus answers the PUT with this status instead of a token.
	tokenStatus int
	// fail answers the first n requests with failStatus.
	fail       atomic.Int32
	failStatus int
	// delay sleeps before answering the first delayed requests.
	delay   time.Duration
	delayed atomic.Int32

	mu       sync.Mutex
	hits     map[string]int
	inFlight int
	maxIn    int
	puts     []string // TTL header of each token PUT
}

const testToken = "AQAEAtokenvalue=="

func newFake(tree string) *fakeIMDS {
	return &fakeIMDS{tree: os.DirFS("testdata/" + tree), hits: map[string]int{}}
}

func (f *fakeIMDS) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.hits[r.Method+" "+r.URL.Path]++
	f.inFlight++
	f.maxIn = max(f.maxIn, f.inFlight)
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.inFlight--
		f.mu.Unlock()
	}()
	if f.delayed.Add(-1) >= 0 {
		select {
		case <-time.After(f.delay):
		case <-r.Context().Done():
			return
		}
	}
	if f.fail.Add(-1) >= 0 {
		http.Error(w, "busy", f.failStatus)
		return
	}
	if r.URL.Path == "/"+EC2TokenPath {
		if r.Method != http.MethodPut {
			http.Error(w, "method", http.StatusMethodNotAllowed)
			return
		}
		f.mu.Lock()
		f.puts = append(f.puts, r.Header.Get(EC2TokenTTLHeader))
		f.mu.Unlock()
		if f.tokenStatus != 0 {
			http.Error(w, "no token", f.tokenStatus)
			return
		}
		w.Write([]byte(testToken))
		return
	}
	if f.requireToken && r.Header.Get(EC2TokenHeader) != testToken {
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	p := strings.Trim(path.Clean(r.URL.Path), "/")
	if p == "" {
		p = "."
	}
	st, err := fs.Stat(f.tree, p)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	if st.IsDir() {
		ents, _ := fs.ReadDir(f.tree, p)
		var names []string
		for _, e := range ents {
			n := e.Name()
			if e.IsDir() {
				n += "/"
			}
			names = append(names, n)
		}
		w.Write([]byte(strings.Join(names, "\n")))
		return
	}
	b, _ := fs.ReadFile(f.tree, p)
	w.Write(b)
}

func (f *fakeIMDS) count(key string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.hits[key]
}

// serve starts f on 127.0.0.1.
func serve(t *testing.T, f http.Handler) string {
	t.Helper()
	s := httptest.NewServer(f)
	t.Cleanup(s.Close)
	return s.URL
}

// inProcess is a transport that calls the handler directly, so tests under
// testing/synctest run entirely on the fake clock (no sockets at all).
type inProcess struct{ h http.Handler }

func (t inProcess) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	done := make(chan struct{})
	go func() {
		defer close(done)
		t.h.ServeHTTP(rec, r)
	}()
	select {
	case <-done:
		return rec.Result(), nil
	case <-r.Context().Done():
		return nil, r.Context().Err()
	}
}

func fastBackoff() Backoff { return Backoff{Initial: time.Millisecond, Max: 5 * time.Millisecond} }

func TestDefaults(t *testing.T) {
	if !strings.HasPrefix(DefaultBaseURL, "http://") || !strings.HasSuffix(DefaultBaseURL, DefaultAddr) {
		t.Errorf("DefaultBaseURL %q does not point at DefaultAddr", DefaultBaseURL)
	}
}

func TestGetTree(t *testing.T) {
	f := newFake("ec2")
	c := &Client{BaseURLs: []string{serve(t, f) + "/"}}
	for p, want := range map[string]string{
		"latest/meta-data/instance-id":                 "i-0123456789abcdef0",
		"/latest/meta-data/":                           "instance-id\nlocal-hostname\nplacement/",
		"latest/user-data":                             "#cloud-config\nhostname: fromimds\n",
		"latest/meta-data/placement/availability-zone": "us-east-1a",
	} {
		got, err := c.Get(t.Context(), p)
		if err != nil {
			t.Errorf("Get(%q): %v", p, err)
			continue
		}
		if string(got) != want {
			t.Errorf("Get(%q) = %q, want %q", p, got, want)
		}
	}
}

func TestTokenDance(t *testing.T) {
	f := newFake("ec2")
	f.requireToken = true
	c := &Client{BaseURLs: []string{serve(t, f)}, Backoff: fastBackoff()}
	c.Token = (&EC2Token{Client: c}).Token
	for range 3 {
		got, err := c.Get(t.Context(), "latest/meta-data/instance-id")
		if err != nil || string(got) != "i-0123456789abcdef0" {
			t.Fatalf("Get = %q, %v", got, err)
		}
	}
	if n := f.count("PUT /" + EC2TokenPath); n != 1 {
		t.Errorf("token PUTs = %d, want 1 (cached)", n)
	}
	if !slices.Equal(f.puts, []string{"21600"}) {
		t.Errorf("TTL headers %q, want [21600]", f.puts)
	}
}

func TestTokenFallback(t *testing.T) {
	for _, status := range []int{http.StatusForbidden, http.StatusNotFound, http.StatusMethodNotAllowed} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			f := newFake("ec2")
			f.tokenStatus = status
			url := serve(t, f)

			c := &Client{BaseURLs: []string{url}}
			c.Token = (&EC2Token{Client: c, AllowV1: true}).Token
			for range 2 {
				if got, err := c.Get(t.Context(), "latest/meta-data/instance-id"); err != nil || string(got) != "i-0123456789abcdef0" {
					t.Fatalf("IMDSv1 fallback: Get = %q, %v", got, err)
				}
			}
			if n := f.count("PUT /" + EC2TokenPath); n != 1 {
				t.Errorf("token PUTs = %d, want 1 (v1 remembered)", n)
			}

			strict := &Client{BaseURLs: []string{url}}
			strict.Token = (&EC2Token{Client: strict}).Token
			_, err := strict.Get(t.Context(), "latest/meta-data/instance-id")
			var e *Error
			if !errors.Is(err, ErrTokenRequired) || !errors.As(err, &e) || e.Status != status {
				t.Fatalf("without AllowV1: %v, want ErrTokenRequired carrying status %d", err, status)
			}
		})
	}
}

func TestNotFoundIsNotRetried(t *testing.T) {
	f := newFake("ec2")
	url := serve(t, f)
	c := &Client{BaseURLs: []string{url, url + "/second"}}
	_, err := c.Get(t.Context(), "latest/meta-data/nope")
	var e *Error
	if !errors.Is(err, ErrNotFound) || !errors.As(err, &e) {
		t.Fatalf("error = %v, want *Error wrapping ErrNotFound", err)
	}
	if e.Status != 404 || e.URL != url+"/latest/meta-data/nope" || e.Method != "GET" {
		t.Errorf("error evidence %+v", e)
	}
	if n := f.count("GET /latest/meta-data/nope"); n != 1 {
		t.Errorf("hits = %d, want 1", n)
	}
	if n := f.count("GET /second/latest/meta-data/nope"); n != 0 {
		t.Errorf("second base URL tried after a 404")
	}
}

func TestForbiddenIsNotRetried(t *testing.T) {
	f := newFake("ec2")
	f.fail.Store(100)
	f.failStatus = http.StatusForbidden
	c := &Client{BaseURLs: []string{serve(t, f)}, Backoff: fastBackoff()}
	_, err := c.Get(t.Context(), "latest/user-data")
	var e *Error
	if !errors.As(err, &e) || e.Status != 403 || errors.Is(err, ErrNotFound) {
		t.Fatalf("error = %v, want *Error with status 403", err)
	}
	if n := f.count("GET /latest/user-data"); n != 1 {
		t.Errorf("hits = %d, want 1", n)
	}
}

func TestServerErrorThenSuccess(t *testing.T) {
	f := newFake("ec2")
	f.fail.Store(2)
	f.failStatus = http.StatusServiceUnavailable
	c := &Client{BaseURLs: []string{serve(t, f)}, Backoff: fastBackoff(), Budget: time.Minute}
	got, err := c.Get(t.Context(), "latest/meta-data/instance-id")
	if err != nil || string(got) != "i-0123456789abcdef0" {
		t.Fatalf("Get = %q, %v", got, err)
	}
	if n := f.count("GET /latest/meta-data/instance-id"); n != 3 {
		t.Errorf("hits = %d, want 3", n)
	}
}

func TestConnectionRefusedFallsThrough(t *testing.T) {
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close() // 127.0.0.1:<port> now refuses connections
	f := newFake("ec2")
	c := &Client{BaseURLs: []string{deadURL, serve(t, f)}, Backoff: fastBackoff(), Budget: time.Minute}
	got, err := c.Get(t.Context(), "latest/meta-data/local-hostname")
	if err != nil || string(got) != "ip-10-0-0-5.ec2.internal" {
		t.Fatalf("Get = %q, %v", got, err)
	}

	only := &Client{BaseURLs: []string{deadURL}, Backoff: fastBackoff(), Retries: 2, Budget: time.Minute}
	_, err = only.Get(t.Context(), "x")
	var e *Error
	if !errors.As(err, &e) || e.Status != 0 || e.Attempts != 3 || e.URL != deadURL+"/x" {
		t.Fatalf("refused: %v (%+v), want *Error after 3 attempts", err, e)
	}
}

func TestRetriesLimit(t *testing.T) {
	f := newFake("ec2")
	f.fail.Store(100)
	f.failStatus = http.StatusInternalServerError
	c := &Client{BaseURLs: []string{serve(t, f)}, Backoff: fastBackoff(), Retries: 2, Budget: time.Minute}
	_, err := c.Get(t.Context(), "latest/user-data")
	var e *Error
	if !errors.As(err, &e) || e.Status != 500 || errors.Is(err, ErrBudget) {
		t.Fatalf("error = %v, want *Error 500", err)
	}
	if n := f.count("GET /latest/user-data"); n != 3 {
		t.Errorf("hits = %d, want 3", n)
	}
	none := &Client{BaseURLs: c.BaseURLs, Retries: -1}
	_, _ = none.Get(t.Context(), "latest/meta-data/")
	if n := f.count("GET /latest/meta-data/"); n != 1 {
		t.Errorf("Retries<0: hits = %d, want 1", n)
	}
}

func TestMaxBytes(t *testing.T) {
	f := newFake("ec2")
	c := &Client{BaseURLs: []string{serve(t, f)}, MaxBytes: 20}
	_, err := c.Get(t.Context(), "latest/user-data")
	var e *Error
	if !errors.Is(err, ErrTooLarge) || !errors.As(err, &e) {
		t.Fatalf("error = %v, want ErrTooLarge", err)
	}
	if n := f.count("GET /latest/user-data"); n != 1 {
		t.Errorf("hits = %d, want 1 (too large is not retried)", n)
	}
	if got, err := c.Get(t.Context(), "latest/meta-data/placement/"); err != nil || string(got) != "availability-zone" {
		t.Errorf("within limit: %q, %v", got, err)
	}
}

func TestHeaders(t *testing.T) {
	var got http.Header
	c := &Client{
		BaseURLs: []string{serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got = r.Header.Clone() }))},
		Headers:  http.Header{"Metadata-Flavor": {"Google"}},
	}
	if _, err := c.Get(t.Context(), "computeMetadata/v1/instance/id"); err != nil {
		t.Fatal(err)
	}
	if got.Get("Metadata-Flavor") != "Google" || got.Get("User-Agent") != DefaultUserAgent {
		t.Errorf("headers %v", got)
	}
}

// The budget ends the retries; the error says so and carries the last
// answer. synctest's clock makes the two seconds instant and exact.
func TestBudgetExhausted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFake("ec2")
		f.fail.Store(1 << 20)
		f.failStatus = http.StatusServiceUnavailable
		c := &Client{
			BaseURLs: []string{"http://imds.test"},
			HTTP:     &http.Client{Transport: inProcess{f}},
			Backoff:  Backoff{Initial: 100 * time.Millisecond, Max: 400 * time.Millisecond},
			Rand:     func() float64 { return 0 },
		}
		start := time.Now()
		_, err := c.Get(t.Context(), "latest/meta-data/instance-id")
		if elapsed := time.Since(start); elapsed != DefaultBudget {
			t.Errorf("gave up after %v of fake time, want the default budget %v", elapsed, DefaultBudget)
		}
		var e *Error
		if !errors.Is(err, ErrBudget) || !errors.As(err, &e) || e.Status != 503 {
			t.Fatalf("error = %v, want ErrBudget wrapping *Error 503", err)
		}
		// Delays with Rand=0 are half of 100,200,400,400... ms: 50,100,200,200,...
		// so 2 s hold 1 + ⌊(2000-350)/200⌋+3 = 12 attempts.
		if n := f.count("GET /latest/meta-data/instance-id"); n != 12 {
			t.Errorf("attempts = %d, want 12", n)
		}
	})
}

// A slow reply hits the per-request timeout and is retried.
func TestSlowReply(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFake("ec2")
		f.delay = time.Hour
		f.delayed.Store(1)
		c := &Client{
			BaseURLs: []string{"http://imds.test"},
			HTTP:     &http.Client{Transport: inProcess{f}},
			Timeout:  time.Second,
			Backoff:  Backoff{Initial: 100 * time.Millisecond},
			Rand:     func() float64 { return 1 },
			Budget:   10 * time.Second,
		}
		start := time.Now()
		got, err := c.Get(t.Context(), "latest/meta-data/instance-id")
		if err != nil || string(got) != "i-0123456789abcdef0" {
			t.Fatalf("Get = %q, %v", got, err)
		}
		if elapsed := time.Since(start); elapsed != time.Second+100*time.Millisecond {
			t.Errorf("answer after %v of fake time, want timeout 1s + backoff 100ms", elapsed)
		}
	})
}

func TestCallerCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFake("ec2")
		f.fail.Store(1 << 20)
		f.failStatus = http.StatusBadGateway
		c := &Client{BaseURLs: []string{"http://imds.test"}, HTTP: &http.Client{Transport: inProcess{f}}, Budget: -1}
		ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
		defer cancel()
		_, err := c.Get(ctx, "x")
		if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrBudget) {
			t.Fatalf("error = %v, want the caller's deadline", err)
		}
	})
}

func TestGetMany(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFake("ec2")
		f.delay = 100 * time.Millisecond
		f.delayed.Store(1 << 20)
		c := &Client{BaseURLs: []string{"http://imds.test"}, HTTP: &http.Client{Transport: inProcess{f}}, Concurrency: 2}
		paths := []string{
			"latest/meta-data/instance-id", "latest/meta-data/local-hostname",
			"latest/meta-data/placement/availability-zone", "latest/user-data", "latest/meta-data/missing",
			"latest/user-data",
		}
		start := time.Now()
		got := c.GetMany(t.Context(), paths)
		if elapsed := time.Since(start); elapsed != 300*time.Millisecond {
			t.Errorf("5 distinct paths, 2 at a time, 100ms each took %v of fake time, want 300ms", elapsed)
		}
		if f.maxIn > 2 {
			t.Errorf("%d requests in flight, Concurrency is 2", f.maxIn)
		}
		if !errors.Is(got["latest/meta-data/missing"].Err, ErrNotFound) {
			t.Errorf("missing: %v", got["latest/meta-data/missing"].Err)
		}
		data := map[string]string{}
		for p, r := range got {
			if r.Err == nil {
				data[p] = string(r.Data)
			}
		}
		want := map[string]string{
			"latest/meta-data/instance-id":                 "i-0123456789abcdef0",
			"latest/meta-data/local-hostname":              "ip-10-0-0-5.ec2.internal",
			"latest/meta-data/placement/availability-zone": "us-east-1a",
			"latest/user-data":                             "#cloud-config\nhostname: fromimds\n",
		}
		if diff := cmp.Diff(want, data); diff != "" {
			t.Errorf("GetMany (-want +got):\n%s", diff)
		}
	})
}

func TestBackoffDelay(t *testing.T) {
	b := Backoff{Initial: 100 * time.Millisecond, Max: time.Second, Jitter: 0.5}
	for _, tc := range []struct {
		n    int
		r    float64
		want time.Duration
	}{
		{0, 0, 50 * time.Millisecond},
		{0, 1, 100 * time.Millisecond},
		{1, 0.5, 150 * time.Millisecond},
		{3, 1, 800 * time.Millisecond},
		{4, 1, time.Second},
		{40, 0, 500 * time.Millisecond},
	} {
		if got := b.Delay(tc.n, tc.r); got != tc.want {
			t.Errorf("Delay(%d, %v) = %v, want %v", tc.n, tc.r, got, tc.want)
		}
	}
	if got := (Backoff{}).Delay(0, 1); got != DefaultInitialBackoff {
		t.Errorf("zero Backoff: %v", got)
	}
}

func TestCheck(t *testing.T) {
	f := newFake("ec2")
	c := &Client{
		BaseURLs: []string{serve(t, f)},
		Check: func(r *http.Response) error {
			if r.Header.Get("Metadata-Flavor") != "Google" {
				return errors.New("not a GCE metadata server")
			}
			return nil
		},
	}
	_, err := c.Get(t.Context(), "latest/user-data")
	var e *Error
	if !errors.As(err, &e) || !strings.Contains(err.Error(), "not a GCE") {
		t.Fatalf("error = %v, want the Check failure", err)
	}
	if n := f.count("GET /latest/user-data"); n != 1 {
		t.Errorf("hits = %d, want 1 (Check failures are not retried)", n)
	}
	c.CloseIdleConnections()
}

func TestTokenNotLogged(t *testing.T) {
	var s secret = testToken
	if strings.Contains(s.String(), "AQAE") {
		t.Error("token visible in String()")
	}
}

// TestBudgetKeepsTheAnswer: a service answering 500 until the budget cuts
// an attempt short is reported with its 500, not with the deadline.
func TestBudgetKeepsTheAnswer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(40 * time.Millisecond)
		http.Error(w, "boom", http.StatusInternalServerError)
	}))
	t.Cleanup(srv.Close)
	c := &Client{BaseURLs: []string{srv.URL}, Budget: 300 * time.Millisecond, Timeout: time.Second,
		Backoff: Backoff{Initial: 10 * time.Millisecond, Max: 20 * time.Millisecond}}
	_, err := c.Get(context.Background(), "metadata")
	if err == nil || Status(err) != http.StatusInternalServerError || !strings.Contains(err.Error(), "status 500") {
		t.Fatalf("err = %v, want the 500", err)
	}
	if !errors.Is(err, ErrBudget) {
		t.Errorf("err = %v, want it to say the budget ended", err)
	}
}
