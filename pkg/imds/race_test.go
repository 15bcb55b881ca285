package imds

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cloudroot/cloudroot/pkg/imds/imdstest"
)

// hosts is a transport calling a handler per host, in process, so races
// run on synctest's fake clock.
type hosts map[string]http.Handler

func (h hosts) RoundTrip(r *http.Request) (*http.Response, error) {
	hd, ok := h[r.URL.Host]
	if !ok {
		return nil, errors.New("dial " + r.URL.Host + ": connection refused")
	}
	return inProcess{hd}.RoundTrip(r)
}

// answer replies body after delay (status 200), or status when not 0.
type answer struct {
	delay  time.Duration
	status int
	body   string
	hits   atomic.Int32
}

func (a *answer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.hits.Add(1)
	select {
	case <-time.After(a.delay):
	case <-r.Context().Done():
		return
	}
	if a.status != 0 {
		http.Error(w, "", a.status)
		return
	}
	w.Write([]byte(a.body))
}

func TestProbeDeadFirst(t *testing.T) {
	live := serve(t, newFake("ec2"))
	c := &Client{BaseURLs: []string{closedURL(t), live}, Backoff: fastBackoff(), Budget: time.Minute}
	base, body, err := c.Probe(t.Context(), "latest/meta-data/instance-id")
	if err != nil || base != live || string(body) != "i-0123456789abcdef0" {
		t.Fatalf("Probe = %q, %q, %v; want the live base", base, body, err)
	}
}

// A first base that accepts connections and never answers, with a request
// timeout longer than the budget, must not keep the second from answering:
// before bases were raced it took the whole budget.
func TestBlackHoleFirst(t *testing.T) {
	hole := imdstest.NewBlackHole(t)
	f := newFake("ec2")
	live := serve(t, f)
	c := &Client{BaseURLs: []string{hole.URL, live}, Timeout: time.Hour, Budget: 30 * time.Second}

	base, body, err := c.Probe(t.Context(), "latest/meta-data/instance-id")
	if err != nil || base != live || string(body) != "i-0123456789abcdef0" {
		t.Fatalf("Probe = %q, %q, %v; want the live base", base, body, err)
	}
	got, err := c.Get(t.Context(), "latest/meta-data/local-hostname")
	if err != nil || string(got) != "ip-10-0-0-5.ec2.internal" {
		t.Fatalf("Get = %q, %v", got, err)
	}
	if n := hole.Accepted(); n < 2 {
		t.Errorf("black hole accepted %d connections, want one per call (it is tried first)", n)
	}
	if n := f.count("GET /latest/meta-data/local-hostname"); n != 1 {
		t.Errorf("live base hits = %d, want 1", n)
	}
}

// Nothing answers: the race ends with the budget, every base was tried,
// and the error says why and carries each base's failure.
func TestAllAbsent(t *testing.T) {
	h1, h2 := imdstest.NewBlackHole(t), imdstest.NewBlackHole(t)
	dead := closedURL(t)
	c := &Client{BaseURLs: []string{h1.URL, h2.URL, dead}, Timeout: time.Hour, Budget: time.Second}
	_, _, err := c.Probe(t.Context(), "x")
	var re *RaceError
	if !errors.Is(err, ErrBudget) || !errors.As(err, &re) {
		t.Fatalf("error = %v, want ErrBudget wrapping a *RaceError", err)
	}
	if len(re.Errs) != 3 || re.Bases[2] != dead {
		t.Fatalf("RaceError %+v, want three failures in base order", re)
	}
	if !re.Every(func(err error) bool { return Status(err) == 0 }) || Status(err) != 0 {
		t.Errorf("absent bases carry a status: %v", err)
	}
	if h1.Accepted() == 0 || h2.Accepted() == 0 {
		t.Errorf("accepted %d, %d: every base must be tried", h1.Accepted(), h2.Accepted())
	}
	_, err = c.Get(t.Context(), "y")
	if !errors.Is(err, ErrBudget) || !errors.As(err, &re) {
		t.Fatalf("Get error = %v, want ErrBudget wrapping a *RaceError", err)
	}
}

func closedURL(t *testing.T) string {
	s := httptest.NewServer(http.NotFoundHandler())
	u := s.URL
	s.Close()
	return u
}

// The stagger, on the fake clock: the second base starts Stagger after the
// first, or at once when the first has failed, or never when the first
// answered in time.
func TestStagger(t *testing.T) {
	for _, tc := range []struct {
		name    string
		stagger time.Duration
		first   *answer
		second  *answer
		want    string
		at      time.Duration
		hits2   int32
	}{
		{"slow first", 0, &answer{delay: time.Second, body: "a"}, &answer{delay: 10 * time.Millisecond, body: "b"},
			"b", DefaultStagger + 10*time.Millisecond, 1},
		{"custom stagger", 40 * time.Millisecond, &answer{delay: time.Second, body: "a"}, &answer{body: "b"},
			"b", 40 * time.Millisecond, 1},
		{"all at once", -1, &answer{delay: time.Second, body: "a"}, &answer{delay: 10 * time.Millisecond, body: "b"},
			"b", 10 * time.Millisecond, 1},
		{"fast first", 0, &answer{delay: 100 * time.Millisecond, body: "a"}, &answer{body: "b"},
			"a", 100 * time.Millisecond, 0},
		{"first fails", 0, &answer{delay: 20 * time.Millisecond, status: http.StatusNotFound}, &answer{delay: 10 * time.Millisecond, body: "b"},
			"b", 30 * time.Millisecond, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := &Client{
					BaseURLs: []string{"http://one", "http://two"},
					HTTP:     &http.Client{Transport: hosts{"one": tc.first, "two": tc.second}},
					Stagger:  tc.stagger,
					Timeout:  time.Minute,
				}
				start := time.Now()
				base, body, err := c.Probe(t.Context(), "p")
				if err != nil || string(body) != tc.want {
					t.Fatalf("Probe = %q, %q, %v; want %q", base, body, err, tc.want)
				}
				if el := time.Since(start); el != tc.at {
					t.Errorf("answer after %v of fake time, want %v", el, tc.at)
				}
				if n := tc.second.hits.Load(); n != tc.hits2 {
					t.Errorf("second base hit %d times, want %d", n, tc.hits2)
				}
			})
		})
	}
}

// Get takes the first answer, a 404 included; Probe wants a 2xx and lets a
// 404 drop the base.
func TestProbeSkipsNotFound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		nf := &answer{status: http.StatusNotFound}
		ok := &answer{delay: 5 * time.Millisecond, body: "here"}
		c := &Client{BaseURLs: []string{"http://one", "http://two"}, HTTP: &http.Client{Transport: hosts{"one": nf, "two": ok}}}
		base, body, err := c.Probe(t.Context(), "p")
		if err != nil || base != "http://two" || string(body) != "here" {
			t.Fatalf("Probe = %q, %q, %v", base, body, err)
		}
		_, err = c.Get(t.Context(), "p")
		var e *Error
		if !errors.Is(err, ErrNotFound) || !errors.As(err, &e) || e.URL != "http://one/p" {
			t.Fatalf("Get error = %v, want the first base's 404", err)
		}

		all := &Client{BaseURLs: []string{"http://one", "http://one/again"}, HTTP: c.HTTP}
		_, _, err = all.Probe(t.Context(), "p")
		var re *RaceError
		if !errors.As(err, &re) || !errors.Is(err, ErrNotFound) || Status(err) != http.StatusNotFound || errors.Is(err, ErrBudget) {
			t.Fatalf("Probe with 404 everywhere: %v", err)
		}
	})
}

// Race hands the winner's value and client back, cancels the losers and
// waits for them.
func TestRace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := &Client{BaseURLs: []string{"http://slow", "http://fast"}, Stagger: -1}
		var mu sync.Mutex
		cancelled := map[string]bool{}
		pc, v, err := Race(t.Context(), c, func(ctx context.Context, pc *Client) (int, error) {
			if pc.BaseURLs[0] == "http://fast" {
				return 42, nil
			}
			<-ctx.Done()
			mu.Lock()
			cancelled[pc.BaseURLs[0]] = true
			mu.Unlock()
			return 0, ctx.Err()
		})
		if err != nil || v != 42 || len(pc.BaseURLs) != 1 || pc.BaseURLs[0] != "http://fast" {
			t.Fatalf("Race = %v, %d, %v", pc, v, err)
		}
		if !cancelled["http://slow"] {
			t.Error("the loser was not cancelled before Race returned")
		}

		boom := errors.New("boom")
		_, _, err = Race(t.Context(), c, func(ctx context.Context, pc *Client) (int, error) { return 0, boom })
		var re *RaceError
		if !errors.Is(err, boom) || !errors.As(err, &re) || len(re.Errs) != 2 {
			t.Fatalf("all failing: %v", err)
		}
		if _, _, err := Race(t.Context(), &Client{}, func(context.Context, *Client) (int, error) { return 0, nil }); err == nil {
			t.Error("no base URL: no error")
		}
	})
}

// The budget bounds the whole race, tries included.
func TestRaceBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := &Client{BaseURLs: []string{"http://a", "http://b"}, Budget: 3 * time.Second}
		start := time.Now()
		_, _, err := Race(t.Context(), c, func(ctx context.Context, pc *Client) (int, error) {
			<-ctx.Done()
			return 0, ctx.Err()
		})
		if !errors.Is(err, ErrBudget) {
			t.Fatalf("error = %v, want ErrBudget", err)
		}
		if el := time.Since(start); el != 3*time.Second {
			t.Errorf("race ended after %v of fake time, want the 3s budget", el)
		}
	})
}

// WithBaseURL copies every setting but the base URLs and shares the
// transport; no field is forgotten when one is added.
func TestWithBaseURL(t *testing.T) {
	c := &Client{
		BaseURLs: []string{"http://a", "http://b"}, Stagger: time.Second, Timeout: 2 * time.Second,
		Retries: 3, Backoff: Backoff{Initial: time.Millisecond}, MaxBytes: 9,
		Headers: http.Header{"X": {"y"}}, Token: func(context.Context) (string, error) { return "", nil },
		TokenHeader: "T", Budget: time.Minute, Concurrency: 7,
		Check: func(*http.Response) error { return nil }, Logger: nil, Rand: func() float64 { return 0 },
		UnixSocket: "/run/sock", Retry: func(*Error) bool { return true },
	}
	pc := c.WithBaseURL("http://b")
	if len(pc.BaseURLs) != 1 || pc.BaseURLs[0] != "http://b" {
		t.Fatalf("BaseURLs = %q", pc.BaseURLs)
	}
	if pc.HTTP == nil || pc.HTTP != c.httpClient() {
		t.Error("the pinned client does not share the transport")
	}
	cv, pv := reflect.ValueOf(c).Elem(), reflect.ValueOf(pc).Elem()
	for i := range cv.NumField() {
		f := cv.Type().Field(i)
		if !f.IsExported() || f.Name == "BaseURLs" || f.Name == "HTTP" {
			continue
		}
		a, b := cv.Field(i), pv.Field(i)
		same := false
		switch f.Type.Kind() {
		case reflect.Func, reflect.Map, reflect.Pointer:
			same = a.Pointer() == b.Pointer()
		default:
			same = reflect.DeepEqual(a.Interface(), b.Interface())
		}
		if !same {
			t.Errorf("field %s not copied", f.Name)
		}
	}
}

func TestStatus(t *testing.T) {
	e404 := &Error{Method: "GET", URL: "u", Status: 404, Err: ErrNotFound}
	e0 := &Error{Method: "GET", URL: "v", Err: context.DeadlineExceeded}
	for _, tc := range []struct {
		err  error
		want int
	}{
		{nil, 0},
		{e0, 0},
		{e404, 404},
		{errors.Join(e0, e404), 404},
		{&RaceError{Errs: []error{e0, errors.Join(errors.New("x"), e404)}}, 404},
		{errors.New("plain"), 0},
	} {
		if got := Status(tc.err); got != tc.want {
			t.Errorf("Status(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
}

// Off AWS any 4xx to the token PUT means IMDSv1; strictly, a 400 is its
// own error, not ErrTokenRequired.
func TestTokenFallbackAny4xx(t *testing.T) {
	f := newFake("ec2")
	f.tokenStatus = http.StatusBadRequest
	url := serve(t, f)
	c := &Client{BaseURLs: []string{url}}
	c.Token = (&EC2Token{Client: c, AllowV1: true}).Token
	if got, err := c.Get(t.Context(), "latest/meta-data/instance-id"); err != nil || string(got) != "i-0123456789abcdef0" {
		t.Fatalf("IMDSv1 fallback on 400: %q, %v", got, err)
	}
	strict := &Client{BaseURLs: []string{url}}
	strict.Token = (&EC2Token{Client: strict}).Token
	_, err := strict.Get(t.Context(), "latest/meta-data/instance-id")
	var e *Error
	if errors.Is(err, ErrTokenRequired) || !errors.As(err, &e) || e.Status != http.StatusBadRequest {
		t.Fatalf("strict on 400: %v, want the 400 itself", err)
	}
}

func TestAbsent(t *testing.T) {
	e404 := &Error{Status: 404, Err: ErrNotFound}
	e500 := &Error{Status: 500}
	e0 := &Error{Err: context.DeadlineExceeded}
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{e0, true},
		{e404, true},
		{e500, false},
		{&RaceError{Errs: []error{e0, e404}}, true},
		{&RaceError{Errs: []error{e0, e500}}, false},
		{fmt.Errorf("%w after 2s: %w", ErrBudget, &RaceError{Errs: []error{e0, e0}}), true},
	} {
		if got := Absent(tc.err); got != tc.want {
			t.Errorf("Absent(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
