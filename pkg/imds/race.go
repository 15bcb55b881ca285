package imds

// Choosing a base URL: several candidates raced, staggered, the first good
// answer winning (cloud-init's wait_for_url with connect_synchronously=False
// and its dual_stack helper).

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// RaceError is the failure of a race in which no base URL won: each base
// URL's own error, in the order of Bases. It unwraps to all of them, so
// errors.Is and errors.As see every candidate's evidence.
type RaceError struct {
	Bases []string
	Errs  []error
}

func (e *RaceError) Error() string {
	msgs := make([]string, 0, len(e.Errs))
	for _, err := range e.Errs {
		if err != nil {
			msgs = append(msgs, err.Error())
		}
	}
	if len(msgs) == 1 {
		return msgs[0]
	}
	return "every metadata base URL failed: " + strings.Join(msgs, "; ")
}

func (e *RaceError) Unwrap() []error { return e.Errs }

// Every reports whether f holds for every candidate's error (a datasource
// asking "was the service absent everywhere?").
func (e *RaceError) Every(f func(error) bool) bool {
	for _, err := range e.Errs {
		if err != nil && !f(err) {
			return false
		}
	}
	return true
}

// Status returns the HTTP status err carries: the first non-zero Status of
// an *Error in err's tree (wrapped, joined or raced errors included), or 0
// when no service answered at all (refused, timed out, budget exhausted).
func Status(err error) int {
	if e, ok := err.(*Error); ok && e.Status != 0 {
		return e.Status
	}
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		return Status(u.Unwrap())
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			if s := Status(e); s != 0 {
				return s
			}
		}
	}
	return 0
}

// WithBaseURL returns a client configured as c but pinned to base alone. It
// shares c's transport (so c.CloseIdleConnections covers it) and copies the
// hooks as they are: a Token hook bound to c (EC2Token{Client: c}) still
// fetches its token through c, so a source that wants the token from the
// same base binds a new EC2Token to the pinned client.
func (c *Client) WithBaseURL(base string) *Client {
	return &Client{
		BaseURLs:      []string{base},
		Stagger:       c.Stagger,
		HTTP:          c.httpClient(),
		UnixSocket:    c.UnixSocket,
		FollowOffHost: c.FollowOffHost,
		Timeout:       c.Timeout,
		ProbeWindow:   c.ProbeWindow,
		det:           c.detect(),
		Retries:       c.Retries,
		Retry:         c.Retry,
		Backoff:       c.Backoff,
		MaxBytes:      c.MaxBytes,
		Headers:       c.Headers,
		Token:         c.Token,
		TokenHeader:   c.TokenHeader,
		Budget:        c.Budget,
		Concurrency:   c.Concurrency,
		Check:         c.Check,
		Logger:        c.Logger,
		Rand:          c.Rand,
	}
}

// Probe finds the base URL that serves path: the bases are raced (see
// Race) and the first to answer it with a 2xx wins. A base that answers
// otherwise (404, 403, a failed Check) or not at all drops out; when all
// have, the error is a *RaceError (wrapped in ErrBudget when the budget
// ended the race). Use c.WithBaseURL(base) for the requests that follow.
func (c *Client) Probe(ctx context.Context, path string) (base string, body []byte, err error) {
	pc, body, err := Race(ctx, c, func(ctx context.Context, pc *Client) ([]byte, error) {
		return pc.Get(ctx, path)
	})
	if err != nil {
		return "", nil, err
	}
	return pc.BaseURLs[0], body, nil
}

// Race runs try against a client pinned to each of c's base URLs
// (WithBaseURL), the first at once and each next one c.Stagger later — or
// at once when every candidate started so far has failed. The first try to
// succeed wins: the others are cancelled (and waited for), and Race returns
// the winner's client and value. A try that fails drops out; when all have,
// the error is a *RaceError holding each one's error (wrapped in ErrBudget
// when the budget ended the race). c's Budget bounds the whole race.
//
// try may set fields of the client it is given (a Token hook bound to it)
// before its first request; the client is its own.
func Race[T any](ctx context.Context, c *Client, try func(ctx context.Context, pc *Client) (T, error)) (*Client, T, error) {
	var zero T
	if len(c.BaseURLs) == 0 {
		return nil, zero, errors.New("imds: no base URL configured")
	}
	ctx, cancel := c.WithBudget(ctx)
	defer cancel()
	start := time.Now()
	n := len(c.BaseURLs)
	pcs := make([]*Client, n)
	vals := make([]T, n)
	errs := make([]error, n)
	w := c.race(ctx, func(ctx context.Context, i int) bool {
		pcs[i] = c.WithBaseURL(c.BaseURLs[i])
		vals[i], errs[i] = try(ctx, pcs[i])
		return errs[i] == nil
	})
	if w < 0 {
		return nil, zero, c.giveUp(ctx, start, c.BaseURLs[0], &RaceError{Bases: slices.Clone(c.BaseURLs), Errs: errs})
	}
	if n > 1 {
		c.log().Debug("imds: base URL chosen", "url", c.BaseURLs[w], "duration", time.Since(start))
	}
	return pcs[w], vals[w], nil
}

// race runs run(ctx, i) for each base URL i, staggered, until one returns
// true, and returns its index, or -1 when all returned false. The losers'
// ctx is cancelled and race waits for them, so run's results may be read
// once it returns.
func (c *Client) race(ctx context.Context, run func(ctx context.Context, i int) bool) int {
	n := len(c.BaseURLs)
	if n == 1 {
		if run(ctx, 0) {
			return 0
		}
		return -1
	}
	ctx, cancel := context.WithCancel(ctx)
	type result struct {
		i  int
		ok bool
	}
	results := make(chan result, n)
	var wg sync.WaitGroup
	stagger := c.Stagger
	if stagger == 0 {
		stagger = DefaultStagger
	}
	timer := time.NewTimer(max(stagger, 0))
	defer timer.Stop()
	tick := timer.C
	next, running := 0, 0
	launch := func() {
		i := next
		next++
		running++
		c.log().Debug("imds: trying base URL", "url", c.BaseURLs[i])
		wg.Go(func() { results <- result{i, run(ctx, i)} })
		if next == n {
			tick = nil
		} else {
			timer.Reset(max(stagger, 0))
		}
	}
	launch()
	if stagger < 0 {
		for next < n {
			launch()
		}
	}
	winner := -1
	for winner < 0 && running > 0 {
		select {
		case r := <-results:
			running--
			switch {
			case r.ok:
				winner = r.i
			case running == 0 && next < n:
				launch()
			}
		case <-tick:
			launch()
		}
	}
	cancel()
	wg.Wait()
	return winner
}

// Absent reports whether err says no metadata service is there: the
// request was never answered (refused, timed out, budget exhausted) or
// answered 404/410. For a *RaceError every base URL must be absent.
func Absent(err error) bool {
	if err == nil {
		return false
	}
	var re *RaceError
	if errors.As(err, &re) {
		return re.Every(absent1)
	}
	return absent1(err)
}

func absent1(err error) bool {
	switch Status(err) {
	case 0, http.StatusNotFound, http.StatusGone:
		return true
	}
	return false
}
