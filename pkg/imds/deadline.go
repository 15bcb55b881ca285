package imds

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The timing policy of a boot's metadata fetches (one Policy, applied to
// every Client the datasource search builds; datasource.Env.IMDS):
//
//   - Deadline bounds the whole datasource search, every network
//     datasource together, from its start: the caller puts it on the
//     search's context (WithTimeoutCause(..., ErrDeadline)). A search that
//     passes it ends with the fallback, whatever was half-read.
//   - Probe is the detection window of one datasource: until its service
//     has answered a request (any HTTP status, on any of the source's base
//     URLs), requests are bounded by what is left of the window and retries
//     stop when it closes (ErrNoAnswer, which datasources read as "not
//     here"). A machine without the service therefore spends at most
//     about Probe per network datasource.
//   - Once the service has answered, each request is bounded by Timeout,
//     long enough for a service that is slow but working, and retries
//     follow the source's rules, with Backoff (exponential, jittered)
//     between them, until the Deadline.
//   - Include bounds every #include fetch of one user-data together
//     (pkg/userdata's IncludeBudget), from the first.
//
// cloud-init's nearest equivalents: a datasource's `max_wait` is the
// window its wait_for_url gives the service to appear (here: Probe, per
// source), `timeout` bounds each request (Timeout), `retries` the
// retries of a read; it has no overall deadline (Ec2 waits up to 240 s,
// then crawls with 50 s per request).
const (
	// DefaultDeadline bounds the whole datasource search.
	DefaultDeadline = 2 * time.Minute
	// DefaultProbe is one datasource's detection window.
	DefaultProbe = 5 * time.Second
	// DefaultReadTimeout bounds each request once the service answered
	// (cloud-init's DataSource.url_timeout).
	DefaultReadTimeout = 10 * time.Second
	// DefaultIncludeBudget bounds every #include fetch of one user-data.
	DefaultIncludeBudget = 2 * time.Minute
)

// Policy errors.
var (
	// ErrNoAnswer: the detection window closed without any answer from
	// the service (refused, black-holed, too slow).
	ErrNoAnswer = errors.New("no answer within the detection window")
	// ErrDeadline: the datasource search's overall deadline passed.
	ErrDeadline = errors.New("datasource search deadline passed")
)

// Policy is the timing policy; zero fields take the defaults above
// (Resolve), except Backoff whose zero value is Client's default.
type Policy struct {
	Deadline time.Duration
	Probe    time.Duration
	Timeout  time.Duration
	Backoff  Backoff
	Include  time.Duration
}

// DefaultPolicy is the policy with every default.
func DefaultPolicy() Policy { return Policy{}.Resolve() }

// Resolve fills zero (or negative) durations with the defaults. A Probe or
// Timeout longer than the Deadline is cut to it.
func (p Policy) Resolve() Policy {
	if p.Deadline <= 0 {
		p.Deadline = DefaultDeadline
	}
	if p.Probe <= 0 {
		p.Probe = DefaultProbe
	}
	if p.Timeout <= 0 {
		p.Timeout = DefaultReadTimeout
	}
	if p.Include <= 0 {
		p.Include = DefaultIncludeBudget
	}
	p.Probe = min(p.Probe, p.Deadline)
	p.Timeout = min(p.Timeout, p.Deadline)
	return p
}

// String spells the policy as ParsePolicy reads it.
func (p Policy) String() string {
	return fmt.Sprintf("deadline=%s,probe=%s,timeout=%s,include=%s", p.Deadline, p.Probe, p.Timeout, p.Include)
}

// ParseDuration reads a policy duration: a number of seconds ("90",
// "1.5") or a Go duration ("90s", "2m"). Zero or negative is refused.
func ParseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	var d time.Duration
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		if math.IsNaN(f) || f > maxPolicySeconds {
			return 0, fmt.Errorf("%q: not a usable number of seconds", s)
		}
		d = time.Duration(f * float64(time.Second))
	} else if d, err = time.ParseDuration(s); err != nil {
		return 0, fmt.Errorf("%q is neither seconds nor a duration", s)
	}
	if d > maxPolicySeconds*time.Second {
		return 0, fmt.Errorf("%q: more than %d s", s, maxPolicySeconds)
	}
	if d <= 0 {
		return 0, fmt.Errorf("%q: must be positive", s)
	}
	return d, nil
}

// maxPolicySeconds bounds a configured duration (a day).
const maxPolicySeconds = 86400

// Apply sets c's detection window, per-request timeout, backoff and
// overall bound from p (resolved). Callers apply their own overrides
// (a datasource's `max_wait`, `timeout`) afterwards.
func (p Policy) Apply(c *Client) {
	p = p.Resolve()
	c.ProbeWindow = p.Probe
	c.Timeout = p.Timeout
	c.Budget = p.Deadline
	c.Backoff = p.Backoff
}

// detection is the state a Client and the clients pinned from it
// (WithBaseURL, Race) share: when the window opened, and whether the
// service has answered.
type detection struct {
	start    sync.Once
	opened   time.Time
	answered atomic.Bool
}

func (d *detection) open() time.Time {
	d.start.Do(func() { d.opened = time.Now() })
	return d.opened
}

// detect returns c's shared detection state (nil without a Probe).
func (c *Client) detect() *detection {
	if c.ProbeWindow <= 0 {
		return nil
	}
	c.detOnce.Do(func() {
		if c.det == nil {
			c.det = &detection{}
		}
	})
	return c.det
}

// Answered reports whether the service has answered a request of c (or
// of a client pinned from it) since the client was built. Without a Probe
// it is always false.
func (c *Client) Answered() bool {
	d := c.detect()
	return d != nil && d.answered.Load()
}

// probeLeft is what is left of the detection window, and whether the
// window still applies (no Probe, or an answer, means it does not).
func (c *Client) probeLeft() (time.Duration, bool) {
	d := c.detect()
	if d == nil || d.answered.Load() {
		return 0, false
	}
	return c.ProbeWindow - time.Since(d.open()), true
}

// sawAnswer records that the service answered (an HTTP status came back).
func (c *Client) sawAnswer() {
	if d := c.detect(); d != nil && d.answered.CompareAndSwap(false, true) {
		c.log().Debug("imds: service answered: detection window closed", "duration", time.Since(d.open()))
	}
}
