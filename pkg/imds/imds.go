// Package imds is the HTTP client every network datasource uses to read a
// metadata service.
//
// # Contract
//
//   - Every URL comes from configuration: Client.BaseURLs (DefaultBaseURL is
//     only a default a datasource may choose). Paths are joined to a base
//     URL with exactly one slash between them.
//   - A 404 (or 410) is an answer, returned at once as an *Error wrapping
//     ErrNotFound and never retried. 5xx, 408, 429, timeouts, connection
//     refused and other transport errors are retried at the same base URL
//     with exponential backoff and jitter until Retries or the Budget runs
//     out; other statuses (401, 403, ...) fail at once with an *Error.
//     Client.Retry replaces that choice for a service with other rules
//     (Azure's wireserver retries 404, devlxd only 500); failures retrying
//     cannot fix (ErrTooLarge, Check's error, certificate errors, a
//     cancelled context) are never retried.
//   - UnixSocket sends every request over a unix socket (LXD's devlxd)
//     under the same rules.
//   - Several base URLs are raced, as cloud-init's wait_for_url does with
//     connect_synchronously=False: the first starts at once, each next one
//     Stagger later (or as soon as all those started have failed), and the
//     first answer wins, the others being cancelled. A base that does not
//     answer (black-holed, refused) therefore never keeps a later one from
//     answering within the budget. Probe and Race pick a base this way and
//     return a client pinned to it (WithBaseURL); Get on a client with
//     several bases races them on every call. When none wins, the error is
//     a *RaceError with every base's failure; Status and Absent read it.
//   - The Budget bounds one Get, GetMany, Probe or Race in total; a
//     datasource that wants one budget for its whole probe wraps its context
//     with WithBudget, and every call inside shares that deadline. Each
//     request is also bounded by Timeout.
//   - Bodies larger than MaxBytes fail with ErrTooLarge (not retried).
//   - Token, when set, is called before every request; a non-empty result is
//     sent in TokenHeader. Its context names the base the request goes to
//     (Destination); EC2Token implements the IMDSv2 dance with one token
//     per origin, fetched from and sent to that origin only.
//   - Redirects stay on the origin they start from, loops fail at once,
//     tokens are size-capped (policy.go), for every HTTP client.
//   - Logging goes to Client.Logger with the attributes url, attempt,
//     duration; tokens are never logged.
package imds

import (
	"bytes"
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// Defaults used when the corresponding Client field is zero.
const (
	// DefaultAddr is the link-local metadata address most clouds use.
	DefaultAddr = "169.254.169.254"
	// DefaultBaseURL is the metadata service at DefaultAddr.
	DefaultBaseURL = "http://" + DefaultAddr
	// DefaultBudget is the total time one Get may take, e.g. for a
	// datasource that is probably absent.
	DefaultBudget = 2 * time.Second
	// DefaultTimeout bounds each HTTP request.
	DefaultTimeout = time.Second
	// DefaultInitialBackoff and DefaultMaxBackoff shape the retry delays.
	DefaultInitialBackoff = 100 * time.Millisecond
	DefaultMaxBackoff     = 2 * time.Second
	// DefaultMaxBytes limits a response body (EC2 user-data is at most
	// 16 KiB; other clouds allow more).
	DefaultMaxBytes = 16 << 20
	// DefaultConcurrency bounds the parallel requests of GetMany.
	DefaultConcurrency = 4
	// DefaultStagger is the delay before the next base URL joins a race
	// (cloud-init's async_delay, after RFC 6555).
	DefaultStagger = 150 * time.Millisecond
	// DefaultUserAgent is sent unless Headers sets User-Agent.
	DefaultUserAgent = "cloudroot"
)

// Sentinel errors callers branch on with errors.Is.
var (
	// ErrNotFound: the service answered 404 or 410 for the path.
	ErrNotFound = errors.New("not found")
	// ErrTooLarge: the body exceeds MaxBytes.
	ErrTooLarge = errors.New("response too large")
	// ErrBudget: the budget ended before an answer; the error also wraps
	// the last failure.
	ErrBudget = errors.New("metadata budget exhausted")
)

// Error is a failed request, with the evidence: method, URL, HTTP status (0
// for transport failures), how many attempts were made and the body of the
// reply (within MaxBytes; Error() does not print it).
type Error struct {
	Method   string
	URL      string
	Status   int
	Attempts int
	Body     []byte
	Err      error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Method + " " + e.URL)
	if e.Status != 0 {
		fmt.Fprintf(&b, ": status %d", e.Status)
	}
	if e.Attempts > 1 {
		fmt.Fprintf(&b, " (attempt %d)", e.Attempts)
	}
	if e.Err != nil {
		b.WriteString(": " + e.Err.Error())
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// Backoff shapes retry delays: the n-th delay is Initial·2ⁿ capped at Max,
// of which a random part (Jitter, 0..1; 0 means 0.5) is drawn uniformly.
type Backoff struct {
	Initial time.Duration
	Max     time.Duration
	Jitter  float64
}

// Delay returns the delay before retry n (0-based), given r in [0,1).
func (b Backoff) Delay(n int, r float64) time.Duration {
	initial, maxd, jitter := b.Initial, b.Max, b.Jitter
	if initial <= 0 {
		initial = DefaultInitialBackoff
	}
	if maxd <= 0 {
		maxd = DefaultMaxBackoff
	}
	if jitter <= 0 || jitter > 1 {
		jitter = 0.5
	}
	d := initial
	for i := 0; i < n && d < maxd; i++ {
		d *= 2
	}
	d = min(d, maxd)
	fixed := time.Duration(float64(d) * (1 - jitter))
	return fixed + time.Duration(float64(d-fixed)*r)
}

// Client reads a metadata service. The zero value (plus BaseURLs) works;
// a Client is safe for concurrent use once configured.
type Client struct {
	// BaseURLs are raced in order, e.g. {DefaultBaseURL,
	// "http://[fd00:ec2::254]"}.
	BaseURLs []string
	// Stagger is the delay before the next base URL joins a race
	// (DefaultStagger); negative starts them all at once.
	Stagger time.Duration
	// HTTP is the transport; nil uses a client without proxies (a metadata
	// service is never behind one). Whichever it is, its redirect rule is
	// replaced by this package's policy (policy.go).
	HTTP *http.Client
	// FollowOffHost lets redirects lead to another http(s) host, with
	// every header but User-Agent dropped on that hop: for fetches that
	// carry no credentials (#include). Metadata clients leave it unset.
	FollowOffHost bool
	// UnixSocket, when set and HTTP is nil, is the unix socket every
	// connection goes to, whatever the base URL's host (which still names
	// the Host header and the redirect rule): LXD's /dev/lxd/sock.
	UnixSocket string
	// Timeout bounds each request (DefaultTimeout).
	Timeout time.Duration
	// ProbeWindow, when positive, is the detection window (deadline.go):
	// until the service answers, requests are bounded by what is left of
	// it and retries stop when it closes, with ErrNoAnswer.
	ProbeWindow time.Duration
	// Retries bounds retries after the first attempt of a Get at one base
	// URL; 0 means as many as the Budget allows, negative means none.
	Retries int
	// Retry, if set, decides which failed attempts are retried: it sees
	// each *Error (Status 0 for a transport failure) that retrying could
	// fix; nil retries 5xx, 408, 429 and transport failures (Retryable).
	Retry   func(*Error) bool
	Backoff Backoff
	// MaxBytes limits each response body (DefaultMaxBytes).
	MaxBytes int64
	// Headers are added to every request (Metadata-Flavor: Google, ...).
	Headers http.Header
	// Token returns a session token to send in TokenHeader; "" sends none.
	Token func(ctx context.Context) (string, error)
	// TokenHeader is the header carrying Token's result
	// (EC2TokenHeader when empty).
	TokenHeader string
	// Budget bounds one Get, GetMany, Probe or Race in total
	// (DefaultBudget); negative means only ctx bounds it.
	Budget time.Duration
	// Concurrency bounds GetMany's parallel requests (DefaultConcurrency).
	Concurrency int
	// Check, if set, vets every reply before its status is looked at (GCE's
	// Metadata-Flavor answer header); its error is not retried. Like Token,
	// it is called concurrently by GetMany and by races of several base
	// URLs. To learn which base answered, use Probe or Race, not Check.
	Check func(*http.Response) error
	// Logger receives per-attempt lines at debug level; nil discards.
	Logger *slog.Logger
	// Rand returns numbers in [0,1) for jitter; nil uses math/rand/v2.
	Rand func() float64

	once        sync.Once
	defaultHTTP *http.Client
	detOnce     sync.Once
	det         *detection
}

func (c *Client) log() *slog.Logger {
	if c.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return c.Logger
}

func (c *Client) httpClient() *http.Client {
	c.once.Do(func() {
		if c.HTTP != nil {
			// The caller's transport, jar and timeout, under this
			// package's redirect policy (see policy.go).
			hc := *c.HTTP
			hc.CheckRedirect = c.checkRedirect
			c.defaultHTTP = &hc
			return
		}
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.Proxy = nil
		if sock := c.UnixSocket; sock != "" {
			tr.DialContext = func(ctx context.Context, _, _ string) (net.Conn, error) {
				var d net.Dialer
				return d.DialContext(ctx, "unix", sock)
			}
		}
		c.defaultHTTP = &http.Client{Transport: tr, CheckRedirect: c.checkRedirect}
	})
	return c.defaultHTTP
}

func (c *Client) budget() time.Duration {
	switch {
	case c.Budget > 0:
		return c.Budget
	case c.Budget < 0:
		return 0
	}
	return DefaultBudget
}

// CloseIdleConnections closes kept-alive connections; call it before the
// ephemeral network is torn down so no socket outlives its address.
func (c *Client) CloseIdleConnections() {
	c.httpClient().CloseIdleConnections()
}

// WithBudget returns ctx bounded by the client's Budget, for a datasource
// that wants one budget across many calls.
func (c *Client) WithBudget(ctx context.Context) (context.Context, context.CancelFunc) {
	if b := c.budget(); b > 0 {
		return context.WithTimeoutCause(ctx, b, ErrBudget)
	}
	return context.WithCancel(ctx)
}

// Request is one metadata request for Do.
type Request struct {
	Method string // GET when empty
	Path   string
	Header http.Header
	// Body is sent with every attempt (a POST's form, say); nil sends none.
	Body []byte
	// NoToken skips the Token hook (the token request itself uses it).
	NoToken bool
}

// Get fetches path (relative to each base URL) and returns the body.
func (c *Client) Get(ctx context.Context, path string) ([]byte, error) {
	return c.Do(ctx, Request{Path: path})
}

// Do performs r with the retry, budget and size rules of Get. With more
// than one base URL the bases are raced as Race does (staggered, an
// unreachable one never holds up the next), and the first answer wins: a
// body, or a failure that retrying cannot fix (404, 403, ...), which is
// returned as is. When no base answers, the error is a *RaceError.
func (c *Client) Do(ctx context.Context, r Request) ([]byte, error) {
	if len(c.BaseURLs) == 0 {
		return nil, errors.New("imds: no base URL configured")
	}
	if r.Method == "" {
		r.Method = http.MethodGet
	}
	ctx, cancel := c.WithBudget(ctx)
	defer cancel()
	start := time.Now()
	if len(c.BaseURLs) == 1 {
		body, err := c.doBase(ctx, r, c.BaseURLs[0])
		if err != nil {
			return nil, c.giveUp(ctx, start, Join(c.BaseURLs[0], r.Path), err)
		}
		return body, nil
	}
	bodies := make([][]byte, len(c.BaseURLs))
	errs := make([]error, len(c.BaseURLs))
	w := c.race(ctx, func(ctx context.Context, i int) bool {
		bodies[i], errs[i] = c.doBase(ctx, r, c.BaseURLs[i])
		return errs[i] == nil || !c.retryable(errs[i])
	})
	if w >= 0 {
		return bodies[w], errs[w]
	}
	return nil, c.giveUp(ctx, start, Join(c.BaseURLs[0], r.Path), &RaceError{Bases: slices.Clone(c.BaseURLs), Errs: errs})
}

// doBase performs r at one base URL, retrying what is worth retrying until
// Retries or ctx runs out, and returns the last attempt's outcome.
func (c *Client) doBase(ctx context.Context, r Request, base string) ([]byte, error) {
	log := c.log()
	rnd := c.Rand
	if rnd == nil {
		rnd = rand.Float64
	}
	// The Token hook learns where the request goes (Destination), so a
	// token is only ever sent to the base that issued it.
	ctx = context.WithValue(ctx, destKey{}, base)
	url := Join(base, r.Path)
	// answered is the last reply with an HTTP status: when the budget cuts
	// a later attempt short, that reply (the service is there and failing,
	// "status 500") says more than the deadline does.
	var answered error
	final := func(err error) error {
		if Status(err) == 0 && answered != nil && ctx.Err() != nil {
			return answered
		}
		return err
	}
	for attempt := 1; ; attempt++ {
		t0 := time.Now()
		body, err := c.once1(ctx, r, url, attempt)
		if err == nil {
			log.Debug("imds: ok", "url", url, "attempt", attempt, "duration", time.Since(t0), "bytes", len(body))
			return body, nil
		}
		if Status(err) != 0 {
			answered = err
		}
		if !c.retryable(err) {
			log.Debug("imds: failed", "url", url, "attempt", attempt, "duration", time.Since(t0), "err", err)
			return nil, final(err)
		}
		log.Debug("imds: retryable failure", "url", url, "attempt", attempt, "duration", time.Since(t0), "err", err)
		if ctx.Err() != nil || (c.Retries != 0 && attempt > c.Retries) {
			return nil, final(err)
		}
		delay := c.Backoff.Delay(attempt-1, rnd())
		if left, probing := c.probeLeft(); probing && left <= delay {
			// No answer yet, and the detection window closes before
			// the next attempt could start.
			log.Debug("imds: detection window closed", "url", url, "attempt", attempt, "window", c.ProbeWindow)
			return nil, fmt.Errorf("%w (%s): %w", ErrNoAnswer, c.ProbeWindow, err)
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, final(err)
		case <-t.C:
		}
	}
}

// giveUp logs and returns the final error of a call that found no answer:
// ErrBudget when the budget ended it, the caller's context error when that
// did, else last.
func (c *Client) giveUp(ctx context.Context, start time.Time, url string, last error) error {
	log := c.log()
	if errors.Is(context.Cause(ctx), ErrBudget) {
		log.Info("imds: budget exhausted", "url", url, "duration", time.Since(start), "err", last)
		return fmt.Errorf("%w after %s: %w", ErrBudget, time.Since(start).Round(time.Millisecond), last)
	}
	if err := ctx.Err(); err != nil && !errors.Is(last, err) {
		return errors.Join(err, last)
	}
	log.Info("imds: giving up", "url", url, "duration", time.Since(start), "err", last)
	return last
}

// once1 performs a single attempt at url.
func (c *Client) once1(ctx context.Context, r Request, url string, attempt int) ([]byte, error) {
	fail := func(status int, err error) error {
		return &Error{Method: r.Method, URL: url, Status: status, Attempts: attempt, Err: err}
	}
	// The token is fetched under the call's budget, before this request's
	// own timeout starts.
	var tok string
	if c.Token != nil && !r.NoToken {
		var err error
		if tok, err = c.Token(ctx); err != nil {
			// The token request's own *Error (URL, status) is the evidence.
			return nil, fmt.Errorf("getting token for %s %s: %w", r.Method, url, err)
		}
		if err := checkToken(tok); err != nil {
			return nil, fail(0, &permanent{err})
		}
	}
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	if left, probing := c.probeLeft(); probing {
		// Detecting: a request may take what is left of the window,
		// however short Timeout is, and no more.
		if left <= 0 {
			return nil, fail(0, &permanent{fmt.Errorf("%w (%s)", ErrNoAnswer, c.ProbeWindow)})
		}
		timeout = left
	}
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var reqBody io.Reader
	if r.Body != nil {
		reqBody = bytes.NewReader(r.Body)
	}
	req, err := http.NewRequestWithContext(rctx, r.Method, url, reqBody)
	if err != nil {
		return nil, fail(0, &permanent{err})
	}
	for k, vs := range c.Headers {
		req.Header[k] = append([]string(nil), vs...)
	}
	for k, vs := range r.Header {
		req.Header[k] = append([]string(nil), vs...)
	}
	if req.Header.Get("User-Agent") == "" {
		req.Header.Set("User-Agent", DefaultUserAgent)
	}
	if tok != "" {
		h := c.TokenHeader
		if h == "" {
			h = EC2TokenHeader
		}
		req.Header.Set(h, tok)
	}
	resp, err := c.httpClient().Do(req)
	if err != nil {
		if errors.Is(err, ErrRedirectLoop) {
			err = &permanent{err}
		}
		return nil, fail(0, err)
	}
	defer resp.Body.Close()
	c.sawAnswer()
	if resp.Header.Get("Location") != "" && isRedirect(resp.StatusCode) {
		// checkRedirect stopped here: another origin.
		return nil, fail(resp.StatusCode, redirectError(resp))
	}
	if c.Check != nil {
		if err := c.Check(resp); err != nil {
			return nil, fail(resp.StatusCode, &permanent{err})
		}
	}
	limit := c.MaxBytes
	if limit <= 0 {
		limit = DefaultMaxBytes
	}
	if resp.ContentLength > limit {
		return nil, fail(resp.StatusCode, fmt.Errorf("%w: %d bytes, limit %d", ErrTooLarge, resp.ContentLength, limit))
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, fail(resp.StatusCode, fmt.Errorf("reading body: %w", err))
	}
	if int64(len(body)) > limit {
		return nil, fail(resp.StatusCode, fmt.Errorf("%w: over %d bytes", ErrTooLarge, limit))
	}
	s := resp.StatusCode
	if s >= 200 && s < 300 {
		return body, nil
	}
	e := &Error{Method: r.Method, URL: url, Status: s, Attempts: attempt, Body: body, Err: errors.New(http.StatusText(s))}
	if s == http.StatusNotFound || s == http.StatusGone {
		e.Err = ErrNotFound
	}
	return nil, e
}

// permanent marks an error that retrying cannot fix.
type permanent struct{ err error }

func (p *permanent) Error() string { return p.err.Error() }
func (p *permanent) Unwrap() error { return p.err }

// retryable decides whether an attempt's failure is worth another try:
// never when retrying cannot fix it, else as Retry (or Retryable) says.
func (c *Client) retryable(err error) bool {
	var e *Error
	if !errors.As(err, &e) {
		return false
	}
	var p *permanent
	if errors.As(err, &p) || errors.Is(err, ErrTooLarge) {
		return false
	}
	if e.Status == 0 {
		var unknownAuthority x509.UnknownAuthorityError
		var hostname x509.HostnameError
		var invalid x509.CertificateInvalidError
		if errors.As(err, &unknownAuthority) || errors.As(err, &hostname) ||
			errors.As(err, &invalid) || errors.Is(err, context.Canceled) {
			return false
		}
	}
	if c.Retry != nil {
		return c.Retry(e)
	}
	return Retryable(e)
}

// Retryable is the default retry rule: 5xx, 408 and 429 answers and
// transport failures (Status 0: timeouts, connection refused, unreachable;
// the service may not be up yet) are worth another try.
func Retryable(e *Error) bool {
	s := e.Status
	return s == 0 || s >= 500 || s == http.StatusRequestTimeout || s == http.StatusTooManyRequests
}

// Join joins a base URL and a path with exactly one slash between them,
// as every request of a Client does ("" leaves the base as it is).
func Join(base, path string) string {
	if path == "" {
		return base
	}
	return strings.TrimRight(base, "/") + "/" + strings.TrimLeft(path, "/")
}

// Result is one path's outcome in GetMany.
type Result struct {
	Data []byte
	Err  error
}

// GetMany fetches independent paths in parallel (at most Concurrency at a
// time) under one budget and returns every outcome keyed by path.
func (c *Client) GetMany(ctx context.Context, paths []string) map[string]Result {
	ctx, cancel := c.WithBudget(ctx)
	defer cancel()
	n := c.Concurrency
	if n <= 0 {
		n = DefaultConcurrency
	}
	sem := make(chan struct{}, n)
	out := make(map[string]Result, len(paths))
	var mu sync.Mutex
	var wg sync.WaitGroup
	seen := make(map[string]bool, len(paths))
	for _, p := range paths {
		if seen[p] {
			continue
		}
		seen[p] = true
		wg.Go(func() {
			var r Result
			select {
			case sem <- struct{}{}:
				r.Data, r.Err = c.Do(ctx, Request{Path: p})
				<-sem
			case <-ctx.Done():
				r.Err = fmt.Errorf("GET %s: %w", p, context.Cause(ctx))
			}
			mu.Lock()
			out[p] = r
			mu.Unlock()
		})
	}
	wg.Wait()
	return out
}
