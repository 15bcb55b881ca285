package userdata

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"
)

// Include fetching defaults, cloud-init's (user_data.py: timeout=5, retries=10).
const (
	DefaultIncludeTimeout = 5 * time.Second
	DefaultIncludeRetries = 10
	DefaultIncludeDelay   = time.Second
)

// HTTPError is an include URL answered with a non-2xx status.
type HTTPError struct {
	URL    string
	Status int
}

func (e *HTTPError) Error() string {
	return fmt.Sprintf("fetching from %s resulted in an invalid http code of %d", e.URL, e.Status)
}

// include expands an #include / #include-once part: each line that is not a
// comment is a URL; a line starting "#include-once" (or "#include") switches
// the mode for the URLs after it and may carry a URL itself.
func (p *processor) include(l leaf, origin string, depth int) {
	part := loc(l, origin, "#include")
	if depth >= MaxIncludeDepth {
		p.errorf(part, 0, "#include nested more than %d deep: not followed", MaxIncludeDepth)
		return
	}
	once := false
	for i, line := range strings.Split(string(l.payload), "\n") {
		line = strings.TrimRight(line, "\r")
		low := strings.ToLower(line)
		switch {
		case strings.HasPrefix(low, "#include-once"):
			line = strings.TrimLeft(line[len("#include-once"):], " \t")
			once = true
		case strings.HasPrefix(low, "#include"):
			line = strings.TrimLeft(line[len("#include"):], " \t")
			once = false
		}
		if strings.HasPrefix(line, "#") {
			continue
		}
		u := strings.TrimSpace(line)
		if u == "" {
			continue
		}
		if p.ctx.Err() != nil {
			return
		}
		content, err := p.fetchInclude(u, once)
		if err != nil {
			p.res.Errors = append(p.res.Errors, &Error{Source: p.source, Part: part, Line: i + 1, URL: u, Err: err})
			continue
		}
		p.blob(content, u, depth+1)
	}
}

func (p *processor) fetchInclude(u string, once bool) ([]byte, error) {
	if err := checkURL(u); err != nil {
		return nil, err
	}
	if p.urls >= MaxIncludeURLs {
		return nil, fmt.Errorf("not fetching %s: more than %d include URLs", redactURL(u), MaxIncludeURLs)
	}
	p.urls++
	if once && p.opts.IncludeOnceCache != nil {
		if b, ok := p.opts.IncludeOnceCache.Get(u); ok {
			return p.charge(u, b)
		}
	}
	if p.opts.Fetch == nil {
		return nil, fmt.Errorf("fetching %s: %w", u, ErrNoFetcher)
	}
	b, err := p.opts.Fetch(p.ctx, u)
	if err != nil {
		return nil, err
	}
	if once && p.opts.IncludeOnceCache != nil {
		if err := p.opts.IncludeOnceCache.Put(u, b); err != nil {
			p.warnf("", "caching #include-once %s: %v", u, err)
		}
	}
	return p.charge(u, b)
}

// charge counts fetched bytes against the size budget.
func (p *processor) charge(u string, b []byte) ([]byte, error) {
	if int64(len(b)) > p.budget {
		return nil, fmt.Errorf("fetching %s: %d bytes: %w", u, len(b), ErrTooLarge)
	}
	p.budget -= int64(len(b))
	return b, nil
}

func checkURL(u string) error {
	pu, err := url.Parse(u)
	if err != nil {
		return fmt.Errorf("invalid include URL: %w", err)
	}
	if pu.Scheme != "http" && pu.Scheme != "https" {
		return fmt.Errorf("include URL %q: only http and https are fetched", redactURL(u))
	}
	return nil
}

func redactURL(u string) string {
	pu, err := url.Parse(u)
	if err != nil || pu.User == nil {
		return u
	}
	pu.User = url.User("redacted")
	return pu.String()
}

// Fetcher fetches #include URLs the way cloud-init does: each attempt
// bounded by Timeout, Retries more attempts after a failure, only http and
// https, bodies larger than MaxBytes refused. The zero value uses
// http.DefaultClient and cloud-init's defaults.
type Fetcher struct {
	Client   *http.Client
	MaxBytes int64         // DefaultMaxSize if 0
	Retries  int           // extra attempts; negative means none
	Timeout  time.Duration // per attempt; DefaultIncludeTimeout if 0
	Delay    time.Duration // between attempts; DefaultIncludeDelay if 0
}

// HTTPFetcher returns Options.Fetch for a client: timeout 5 s per attempt,
// retries extra attempts 1 s apart on network errors, 408, 429 and 5xx.
// Other 4xx answers fail at once (cloud-init retries them too; an absent
// document does not appear by waiting).
func HTTPFetcher(client *http.Client, maxBytes int64, retries int) func(ctx context.Context, url string) ([]byte, error) {
	f := &Fetcher{Client: client, MaxBytes: maxBytes, Retries: retries}
	if retries == 0 {
		f.Retries = -1
	}
	return f.Fetch
}

// Fetch gets one URL.
func (f *Fetcher) Fetch(ctx context.Context, u string) ([]byte, error) {
	if err := checkURL(u); err != nil {
		return nil, err
	}
	client := f.Client
	if client == nil {
		client = http.DefaultClient
	}
	timeout := cmpOr(f.Timeout, DefaultIncludeTimeout)
	delay := cmpOr(f.Delay, DefaultIncludeDelay)
	maxBytes := cmpOr(f.MaxBytes, DefaultMaxSize)
	retries := f.Retries
	if retries == 0 {
		retries = DefaultIncludeRetries
	}
	var errs []error
	for attempt := 0; ; attempt++ {
		b, retry, err := f.once(ctx, client, u, timeout, maxBytes)
		if err == nil {
			return b, nil
		}
		errs = append(errs, fmt.Errorf("attempt %d: %w", attempt+1, err))
		if !retry || attempt >= retries {
			break
		}
		select {
		case <-ctx.Done():
			errs = append(errs, ctx.Err())
			return nil, fmt.Errorf("fetching %s: %w", redactURL(u), errors.Join(errs...))
		case <-time.After(delay):
		}
	}
	if len(errs) == 1 {
		return nil, fmt.Errorf("fetching %s: %w", redactURL(u), errors.Unwrap(errs[0]))
	}
	return nil, fmt.Errorf("fetching %s: %w", redactURL(u), errors.Join(errs...))
}

func (f *Fetcher) once(ctx context.Context, client *http.Client, u string, timeout time.Duration, maxBytes int64) (b []byte, retry bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, false, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, ctx.Err() == nil || errors.Is(ctx.Err(), context.DeadlineExceeded), err
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
		s := resp.StatusCode
		return nil, s == http.StatusRequestTimeout || s == http.StatusTooManyRequests || s >= 500, &HTTPError{URL: redactURL(u), Status: s}
	}
	if resp.ContentLength > maxBytes {
		return nil, false, fmt.Errorf("body of %d bytes %w of %d bytes", resp.ContentLength, ErrTooLarge, maxBytes)
	}
	b, err = io.ReadAll(io.LimitReader(resp.Body, maxBytes+1))
	if err != nil {
		return nil, true, fmt.Errorf("reading body: %w", err)
	}
	if int64(len(b)) > maxBytes {
		return nil, false, fmt.Errorf("body %w of %d bytes", ErrTooLarge, maxBytes)
	}
	return b, false, nil
}

func cmpOr[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// Cache keeps #include-once documents by URL.
type Cache interface {
	Get(url string) ([]byte, bool)
	Put(url string, content []byte) error
}

// DirCache is cloud-init's urlcache: one file per URL named by the URL's MD5,
// in Dir (instances/<iid>/data/urlcache), written 0600. ReadFile and
// WriteFile let a target root back it.
type DirCache struct {
	Dir       string
	ReadFile  func(name string) ([]byte, error)
	WriteFile func(name string, data []byte, perm fs.FileMode) error
}

var _ Cache = (*DirCache)(nil)

// URLCacheDir is the cache directory for an instance directory.
func URLCacheDir(instanceDir string) string { return path.Join(instanceDir, "data", "urlcache") }

// CacheKey is the file name cloud-init uses for a URL: its MD5, hex.
func CacheKey(u string) string {
	sum := md5.Sum([]byte(u))
	return hex.EncodeToString(sum[:])
}

// Get returns a cached document.
func (c *DirCache) Get(u string) ([]byte, bool) {
	if c.ReadFile == nil {
		return nil, false
	}
	b, err := c.ReadFile(path.Join(c.Dir, CacheKey(u)))
	if err != nil {
		return nil, false
	}
	return b, true
}

// Put stores a document.
func (c *DirCache) Put(u string, b []byte) error {
	if c.WriteFile == nil {
		return nil
	}
	p := path.Join(c.Dir, CacheKey(u))
	if err := c.WriteFile(p, b, 0o600); err != nil {
		return fmt.Errorf("writing %s: %w", p, err)
	}
	return nil
}
