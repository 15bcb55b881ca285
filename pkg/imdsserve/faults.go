package imdsserve

// Fault injection: a flaky cloud, for load and chaos tests. A request is
// first (with probability SpikeRate) held back for a random time up to
// Spike, then (with probability ErrorRate) answered with a 5xx instead of
// being served. The draws come from one generator seeded with Seed, so a
// run with the same seed and the same arrival order fails the same
// requests.

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Faults configures injected failures; the zero value injects none.
type Faults struct {
	// ErrorRate is the fraction of requests (0..1) answered with a 5xx
	// (500, 502 and 503 in turn) instead of being served.
	ErrorRate float64
	// SpikeRate is the fraction of requests (0..1) delayed by a latency
	// spike, drawn uniformly from (0, Spike].
	SpikeRate float64
	Spike     time.Duration
	// Seed seeds the draws.
	Seed uint64
}

// Enabled reports whether f injects anything.
func (f Faults) Enabled() bool {
	return f.ErrorRate > 0 || (f.SpikeRate > 0 && f.Spike > 0)
}

// Validate checks the rates are fractions and the spike is not negative.
func (f Faults) Validate() error {
	for _, r := range []struct {
		name string
		v    float64
	}{{"error rate", f.ErrorRate}, {"spike rate", f.SpikeRate}} {
		if r.v < 0 || r.v > 1 || r.v != r.v {
			return fmt.Errorf("faults: %s %v is not a fraction between 0 and 1", r.name, r.v)
		}
	}
	if f.Spike < 0 {
		return fmt.Errorf("faults: negative spike %v", f.Spike)
	}
	return nil
}

// String is the flags' form: "errors=0.1,spikes=0.05,spike=300ms,seed=1".
func (f Faults) String() string {
	return fmt.Sprintf("errors=%g,spikes=%g,spike=%v,seed=%d", f.ErrorRate, f.SpikeRate, f.Spike, f.Seed)
}

// ParseFaults reads the String form; keys may be left out (zero).
func ParseFaults(s string) (Faults, error) {
	var f Faults
	for kv := range strings.SplitSeq(s, ",") {
		kv = strings.TrimSpace(kv)
		if kv == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return f, fmt.Errorf("faults %q: %q is not key=value", s, kv)
		}
		var err error
		switch k {
		case "errors":
			f.ErrorRate, err = strconv.ParseFloat(v, 64)
		case "spikes":
			f.SpikeRate, err = strconv.ParseFloat(v, 64)
		case "spike":
			f.Spike, err = time.ParseDuration(v)
		case "seed":
			f.Seed, err = strconv.ParseUint(v, 10, 64)
		default:
			return f, fmt.Errorf("faults %q: unknown key %q (want errors, spikes, spike, seed)", s, k)
		}
		if err != nil {
			return f, fmt.Errorf("faults %q: %s: %w", s, k, err)
		}
	}
	if err := f.Validate(); err != nil {
		return f, fmt.Errorf("faults %q: %w", s, err)
	}
	return f, nil
}

// FaultStats counts what a FaultHandler injected.
type FaultStats struct {
	Requests, Errors, Spikes int64
}

// FaultHandler wraps a handler with Faults.
type FaultHandler struct {
	next   http.Handler
	faults Faults

	mu  sync.Mutex
	rng *rand.Rand

	requests, errors, spikes atomic.Int64
}

// WithFaults wraps next so that it fails and stalls as f says.
func WithFaults(next http.Handler, f Faults) *FaultHandler {
	return &FaultHandler{next: next, faults: f, rng: rand.New(rand.NewPCG(f.Seed, f.Seed^0x9e3779b97f4a7c15))}
}

// Stats returns the counts so far.
func (h *FaultHandler) Stats() FaultStats {
	return FaultStats{Requests: h.requests.Load(), Errors: h.errors.Load(), Spikes: h.spikes.Load()}
}

// draw returns the spike to wait (0: none) and the status to fail with
// (0: serve).
func (h *FaultHandler) draw() (time.Duration, int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	var spike time.Duration
	if h.faults.Spike > 0 && h.rng.Float64() < h.faults.SpikeRate {
		spike = time.Duration(h.rng.Int64N(int64(h.faults.Spike))) + 1
	}
	status := 0
	if h.rng.Float64() < h.faults.ErrorRate {
		status = []int{http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable}[h.rng.IntN(3)]
	}
	return spike, status
}

// ServeHTTP implements http.Handler.
func (h *FaultHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.requests.Add(1)
	spike, status := h.draw()
	if spike > 0 {
		h.spikes.Add(1)
		t := time.NewTimer(spike)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return
		}
	}
	if status != 0 {
		h.errors.Add(1)
		text(w, status, http.StatusText(status)+" (injected)\n")
		return
	}
	h.next.ServeHTTP(w, r)
}
