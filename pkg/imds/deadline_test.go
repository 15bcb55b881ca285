package imds

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cloudroot/cloudroot/pkg/imds/imdstest"
)

func TestPolicyResolve(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   Policy
		want Policy
	}{
		{"zero is the defaults", Policy{}, Policy{Deadline: DefaultDeadline, Probe: DefaultProbe, Timeout: DefaultReadTimeout, Include: DefaultIncludeBudget}},
		{"negative is the default", Policy{Deadline: -1, Probe: -time.Second}, Policy{Deadline: DefaultDeadline, Probe: DefaultProbe, Timeout: DefaultReadTimeout, Include: DefaultIncludeBudget}},
		{"set values kept", Policy{Deadline: 5 * time.Minute, Probe: 20 * time.Second, Timeout: 50 * time.Second, Include: time.Minute},
			Policy{Deadline: 5 * time.Minute, Probe: 20 * time.Second, Timeout: 50 * time.Second, Include: time.Minute}},
		{"probe and timeout cut to the deadline", Policy{Deadline: 3 * time.Second},
			Policy{Deadline: 3 * time.Second, Probe: 3 * time.Second, Timeout: 3 * time.Second, Include: DefaultIncludeBudget}},
		{"backoff kept", Policy{Backoff: Backoff{Initial: time.Second}},
			Policy{Deadline: DefaultDeadline, Probe: DefaultProbe, Timeout: DefaultReadTimeout, Include: DefaultIncludeBudget, Backoff: Backoff{Initial: time.Second}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.in.Resolve(); got != tc.want {
				t.Errorf("Resolve() = %+v, want %+v", got, tc.want)
			}
		})
	}
	// The probe must be shorter than the per-request timeout after an
	// answer, and both within the deadline: the point of the policy.
	if p := DefaultPolicy(); !(p.Probe < p.Timeout && p.Timeout < p.Deadline) {
		t.Errorf("DefaultPolicy() = %+v: want probe < timeout < deadline", p)
	}
}

func TestParseDuration(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
		err  bool
	}{
		{"120", 2 * time.Minute, false},
		{"1.5", 1500 * time.Millisecond, false},
		{" 90s ", 90 * time.Second, false},
		{"2m", 2 * time.Minute, false},
		{"0", 0, true},
		{"-5", 0, true},
		{"-1s", 0, true},
		{"soon", 0, true},
		{"", 0, true},
		{"NaN", 0, true},
		{"1e300", 0, true},
		{"48h", 0, true},
	} {
		got, err := ParseDuration(tc.in)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v, error %v", tc.in, got, err, tc.want, tc.err)
		}
	}
}

func TestPolicyApply(t *testing.T) {
	c := &Client{Timeout: time.Second, Budget: 2 * time.Second}
	Policy{Probe: 3 * time.Second, Backoff: Backoff{Initial: time.Second}}.Apply(c)
	if c.ProbeWindow != 3*time.Second || c.Timeout != DefaultReadTimeout || c.Budget != DefaultDeadline || c.Backoff.Initial != time.Second {
		t.Errorf("after Apply: probe %v timeout %v budget %v backoff %+v", c.ProbeWindow, c.Timeout, c.Budget, c.Backoff)
	}
}

// late serves "ok" d late.
func late(t *testing.T, d time.Duration) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
			return
		case <-time.After(d):
		}
		w.Write([]byte("ok"))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestProbeWindow: until the service answers, a request may take what is
// left of the window, however short Timeout is; once it answered, Timeout
// bounds each request. Pinned clients share what was learnt.
func TestProbeWindow(t *testing.T) {
	srv := late(t, 300*time.Millisecond)
	c := &Client{BaseURLs: []string{srv.URL}, ProbeWindow: 10 * time.Second, Timeout: 50 * time.Millisecond, Retries: -1, Budget: -1}
	if c.Answered() {
		t.Fatal("answered before any request")
	}
	pc := c.WithBaseURL(srv.URL)
	if b, err := pc.Get(t.Context(), "a"); err != nil || string(b) != "ok" {
		t.Fatalf("probe request: %q, %v; want the late answer within the window", b, err)
	}
	if !c.Answered() {
		t.Error("the pinned client's answer was not shared with its parent")
	}
	_, err := c.Get(t.Context(), "b")
	if err == nil || Status(err) != 0 || errors.Is(err, ErrNoAnswer) {
		t.Errorf("after an answer: err = %v, want Timeout (50ms) to cut the 300ms reply", err)
	}
}

// TestProbeNoAnswer: a black hole, or a refused address retried without
// limit, ends at the window with ErrNoAnswer, an absent service, even
// when Timeout and Budget are long.
func TestProbeNoAnswer(t *testing.T) {
	hole := imdstest.NewBlackHole(t)
	for _, tc := range []struct{ name, url string }{
		{"black hole", hole.URL},
		{"refused", closedURL(t)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &Client{BaseURLs: []string{tc.url}, ProbeWindow: 300 * time.Millisecond, Timeout: time.Hour, Budget: time.Hour,
				Backoff: Backoff{Initial: 10 * time.Millisecond, Max: 20 * time.Millisecond}}
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			_, err := c.Get(ctx, "meta-data/")
			if !errors.Is(err, ErrNoAnswer) || !Absent(err) {
				t.Fatalf("err = %v, want ErrNoAnswer (absent)", err)
			}
			if ctx.Err() != nil || c.Answered() {
				t.Errorf("ctx %v, answered %v: the window did not end the wait", ctx.Err(), c.Answered())
			}
		})
	}
	if hole.Accepted() == 0 {
		t.Error("the black hole was never tried")
	}
}

// TestProbeAnyStatusIsAnAnswer: a 503 is the service answering: the
// window no longer applies, retries go on under the Budget.
func TestProbeAnyStatusIsAnAnswer(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) < 4 {
			time.Sleep(60 * time.Millisecond)
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte("ok"))
	}))
	t.Cleanup(srv.Close)
	// The window closes during the retries: after the first 503 it no
	// longer matters.
	c := &Client{BaseURLs: []string{srv.URL}, ProbeWindow: 100 * time.Millisecond, Timeout: time.Minute, Budget: time.Minute,
		Backoff: Backoff{Initial: 50 * time.Millisecond, Max: 50 * time.Millisecond, Jitter: 1}}
	b, err := c.Get(t.Context(), "x")
	if err != nil || string(b) != "ok" {
		t.Fatalf("Get = %q, %v; want ok after the 503s", b, err)
	}
	if !c.Answered() {
		t.Error("a 503 did not count as an answer")
	}
}
