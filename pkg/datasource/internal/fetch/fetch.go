// Package fetch is the datasources' small HTTP client for metadata
// services: an injected *http.Client, fixed headers, a per-attempt timeout,
// a few retries with backoff on transport errors and 5xx, and a size limit.
// It stands in for pkg/imds until that lands.
//
// Contract:
//   - Every request is bounded by its context; an attempt also by Timeout.
//   - Transport errors, 429 and 5xx are retried Retries times, waiting
//     Backoff, then twice that, and so on (never past the context's end).
//     Other statuses are answered at once, as a *StatusError.
//   - Bodies larger than MaxBytes are an error, never truncated silently.
//   - Errors name the method and URL.
package fetch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Defaults for a zero Client.
const (
	DefaultRetries  = 2
	DefaultBackoff  = 100 * time.Millisecond
	DefaultTimeout  = 2 * time.Second
	DefaultMaxBytes = 16 << 20
)

// Client fetches from one metadata service.
type Client struct {
	// HTTP is the client; nil means NewHTTPClient().
	HTTP *http.Client
	// Header is sent on every request.
	Header http.Header
	// Retries, Backoff, Timeout, MaxBytes: 0 means the default; Retries < 0
	// means none.
	Retries  int
	Backoff  time.Duration
	Timeout  time.Duration
	MaxBytes int64
	// Check vets every reply before its status is looked at (GCE's
	// Metadata-Flavor header); its error is not retried.
	Check func(*http.Response) error
}

// NewHTTPClient is a client for link-local services: no proxy, short dial
// and header timeouts, no keep-alive pool to leak into the booted system.
func NewHTTPClient() *http.Client {
	return &http.Client{
		Transport: &http.Transport{
			Proxy:                 nil,
			DialContext:           (&net.Dialer{Timeout: 2 * time.Second}).DialContext,
			ResponseHeaderTimeout: 5 * time.Second,
			DisableKeepAlives:     true,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// StatusError is a reply with a status other than 200.
type StatusError struct {
	Method, URL string
	Code        int
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("%s %s: status %d %s", e.Method, e.URL, e.Code, http.StatusText(e.Code))
}

// Status returns the HTTP status of a *StatusError in err's chain, or 0.
func Status(err error) int {
	var se *StatusError
	if errors.As(err, &se) {
		return se.Code
	}
	return 0
}

// Get fetches url.
func (c *Client) Get(ctx context.Context, url string) ([]byte, error) {
	return c.Do(ctx, http.MethodGet, url, nil)
}

// Do sends one request (retrying as the contract says) and returns the body
// of a 200 reply.
func (c *Client) Do(ctx context.Context, method, url string, hdr http.Header) ([]byte, error) {
	retries, backoff := c.Retries, c.Backoff
	if retries == 0 {
		retries = DefaultRetries
	}
	if backoff <= 0 {
		backoff = DefaultBackoff
	}
	var errs []error
	for attempt := 0; ; attempt++ {
		b, retry, err := c.once(ctx, method, url, hdr)
		if err == nil {
			return b, nil
		}
		errs = append(errs, err)
		if !retry || attempt >= retries || ctx.Err() != nil {
			if len(errs) == 1 {
				return nil, err
			}
			return nil, fmt.Errorf("%d attempts: %w", len(errs), errors.Join(errs...))
		}
		t := time.NewTimer(backoff << attempt)
		select {
		case <-ctx.Done():
			t.Stop()
			errs = append(errs, fmt.Errorf("%s %s: %w", method, url, ctx.Err()))
			return nil, fmt.Errorf("%d attempts: %w", attempt+1, errors.Join(errs...))
		case <-t.C:
		}
	}
}

func (c *Client) once(ctx context.Context, method, url string, hdr http.Header) (body []byte, retry bool, err error) {
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, nil)
	if err != nil {
		return nil, false, fmt.Errorf("%s %s: %w", method, url, err)
	}
	for k, v := range c.Header {
		req.Header[k] = v
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	hc := c.HTTP
	if hc == nil {
		hc = NewHTTPClient()
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, true, err // *url.Error names method and URL
	}
	defer resp.Body.Close()
	if c.Check != nil {
		if err := c.Check(resp); err != nil {
			return nil, false, fmt.Errorf("%s %s: %w", method, url, err)
		}
	}
	if resp.StatusCode != http.StatusOK {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
		se := &StatusError{Method: method, URL: url, Code: resp.StatusCode}
		return nil, resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests, se
	}
	limit := c.MaxBytes
	if limit <= 0 {
		limit = DefaultMaxBytes
	}
	var buf bytes.Buffer
	n, err := io.Copy(&buf, io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, true, fmt.Errorf("%s %s: reading body: %w", method, url, err)
	}
	if n > limit {
		return nil, false, fmt.Errorf("%s %s: body larger than %d bytes", method, url, limit)
	}
	return buf.Bytes(), false, nil
}

// Join joins a base URL and path parts with single slashes, keeping a
// trailing slash on the last part (cloud-init's combine_url).
func Join(base string, parts ...string) string {
	u := strings.TrimRight(base, "/")
	for _, p := range parts {
		p = strings.TrimLeft(p, "/")
		if p == "" {
			continue
		}
		u = strings.TrimRight(u, "/") + "/" + p
	}
	return u
}

// Absent reports that nothing answered — a transport error (refused,
// unreachable) or the budget ran out — as opposed to a service that
// answered with an error status. Datasources map it to ErrNotFound.
func Absent(err error) bool {
	if err == nil || Status(err) != 0 {
		return false
	}
	var ue *url.Error
	return errors.As(err, &ue) || errors.Is(err, context.DeadlineExceeded)
}
