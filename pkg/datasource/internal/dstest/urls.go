package dstest

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/imds"
	"github.com/cloudroot/cloudroot/pkg/imds/imdstest"
)

// URLSource is a source that tries a list of metadata URLs with
// cloud-init's url_helper settings (`retries`, `timeout`, `max_wait`), for
// the checks below.
type URLSource struct {
	Source datasource.Source
	// Env is the source's Env, the network up, with metadata_urls set to
	// urls and the settings kv under the source's `datasource:` key.
	Env func(kv map[string]any, urls ...string) datasource.Env
	// Path, appended to a fake service's URL, makes its base URL (GCE's
	// "/computeMetadata/v1/"); "" for most sources.
	Path string
}

// Req names the request a check counts: Method ("" for any) and Path.
type Req struct {
	Method, Path string
}

func (r Req) count(s *Server) int { return s.Count(r.Method, r.Path) }

// Attempts is a configuration and the attempts at a request it allows.
type Attempts struct {
	KV map[string]any
	N  int
}

// Failover checks that URLs which do not answer neither keep a later one
// from answering nor make an absent service cost more than the budget:
//   - "refused", "black hole": before good, a URL that refuses
//     connections, or accepts them and never answers (`timeout: 60`, the
//     request timeout, outlasting `max_wait: 30`): Get reads good (an
//     instance-id, the subplatform "metadata (good)"), having tried the
//     black hole;
//   - "nothing answers": two black holes in a one-second budget: Get is
//     ErrNotFound with the budget exhausted, both tried.
func (u URLSource) Failover(t *testing.T, good string) {
	t.Helper()
	for _, tc := range []struct {
		name  string
		first func(t *testing.T) (url string, tried func() bool)
	}{
		{"refused", func(t *testing.T) (string, func() bool) { return ClosedURL(t), nil }},
		{"black hole", func(t *testing.T) (string, func() bool) {
			h := imdstest.NewBlackHole(t)
			return h.URL, func() bool { return h.Accepted() > 0 }
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			first, tried := tc.first(t)
			d, err := u.Source.Get(context.Background(), u.Env(map[string]any{"timeout": 60, "max_wait": 30}, first, good))
			if err != nil {
				t.Fatal(err)
			}
			if d.InstanceID() == "" {
				t.Error("no instance-id")
			}
			if d.Subplatform != "metadata ("+good+")" {
				t.Errorf("subplatform = %q, want the second URL", d.Subplatform)
			}
			if tried != nil && !tried() {
				t.Error("the first URL was never tried")
			}
		})
	}
	t.Run("nothing answers", func(t *testing.T) {
		h1, h2 := imdstest.NewBlackHole(t), imdstest.NewBlackHole(t)
		e := u.Env(map[string]any{"timeout": 60}, h1.URL, h2.URL)
		e.Budget = time.Second
		_, err := u.Source.Get(context.Background(), e)
		if !errors.Is(err, datasource.ErrNotFound) || !errors.Is(err, imds.ErrBudget) {
			t.Fatalf("err = %v, want ErrNotFound after the budget", err)
		}
		if h1.Accepted() == 0 || h2.Accepted() == 0 {
			t.Errorf("connections: first URL %d, second URL %d; want both tried", h1.Accepted(), h2.Accepted())
		}
	})
}

// Retries checks `retries` (and `max_wait` 0 or less: one try): against a
// service whose hook fail answers every request with an error status, Get
// with each case's settings fails with an error containing want, not
// ErrNotFound, after exactly N attempts at req.
func (u URLSource) Retries(t *testing.T, fail func(w http.ResponseWriter, r *http.Request) bool, want string, req Req, cases ...Attempts) {
	t.Helper()
	for _, tc := range cases {
		srv := Serve(t, "", fail)
		_, err := u.Source.Get(context.Background(), u.Env(tc.KV, srv.URL+u.Path))
		if err == nil || errors.Is(err, datasource.ErrNotFound) || !strings.Contains(err.Error(), want) {
			t.Errorf("%v: err = %v, want %q", tc.KV, err, want)
		}
		if n := req.count(srv); n != tc.N {
			t.Errorf("%v: %d %s requests, want %d", tc.KV, n, req.Path, tc.N)
		}
	}
}

// Timeouts checks `timeout` on hang, a service that never answers req: only the request timeout ends an attempt. In
// a one-second budget, `timeout: 0.05` leaves room for the 1+retries
// attempts `retries` allows, the budget not exhausted; the default timeout
// (longer than that budget) for one, cut short by the budget. Both are
// ErrNotFound.
func (u URLSource) Timeouts(t *testing.T, hang *Server, req Req, retries int) {
	t.Helper()
	for _, tc := range []struct {
		kv     map[string]any
		n      int
		budget bool
	}{
		{map[string]any{"timeout": 0.05, "retries": retries}, 1 + retries, false},
		{map[string]any{"retries": retries}, 1, true},
	} {
		before := req.count(hang)
		e := u.Env(tc.kv, hang.URL+u.Path)
		e.Budget = time.Second
		_, err := u.Source.Get(context.Background(), e)
		if !errors.Is(err, datasource.ErrNotFound) || errors.Is(err, imds.ErrBudget) != tc.budget {
			t.Errorf("%v: err = %v, want ErrNotFound (budget exhausted: %v)", tc.kv, err, tc.budget)
		}
		if n := req.count(hang) - before; n != tc.n {
			t.Errorf("%v: %d %s requests, want %d", tc.kv, n, req.Path, tc.n)
		}
	}
}

// MaxWait checks `max_wait`: set to maxWait (0.3 seconds, as a number or
// as text) against a black hole whose request timeout (60s) outlasts it,
// it replaces a one-hour budget: Get is ErrNotFound, the budget
// exhausted, well within a minute.
func (u URLSource) MaxWait(t *testing.T, maxWait any) {
	t.Helper()
	h := imdstest.NewBlackHole(t)
	e := u.Env(map[string]any{"max_wait": maxWait, "timeout": 60}, h.URL)
	e.Budget = time.Hour
	start := time.Now()
	_, err := u.Source.Get(context.Background(), e)
	if !errors.Is(err, datasource.ErrNotFound) || !errors.Is(err, imds.ErrBudget) {
		t.Fatalf("err = %v, want ErrNotFound after the budget", err)
	}
	if el := time.Since(start); el > time.Minute {
		t.Errorf("took %v: max_wait %v did not replace the one-hour budget", el, maxWait)
	}
}
