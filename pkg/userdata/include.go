package userdata

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/cloudroot/cloudroot/pkg/imds"
)

// Include fetching defaults: cloud-init's per URL (user_data.py:
// timeout=5, retries=10, 1 s apart; here the delay is the first of a
// jittered exponential backoff), and one deadline for every #include of a
// Process call, which cloud-init lacks (256 dead URLs × 11 attempts would
// hold the boot for hours).
const (
	DefaultIncludeTimeout = 5 * time.Second
	DefaultIncludeRetries = 10
	DefaultIncludeDelay   = time.Second
	DefaultIncludeBudget  = imds.DefaultIncludeBudget
)

// ErrIncludeBudget: the overall #include deadline passed; the URLs left
// were not fetched.
var ErrIncludeBudget = errors.New("#include deadline passed")

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
	ctx := p.includeContext()
	if ctx.Err() != nil {
		return nil, fmt.Errorf("not fetching %s: %w", redactURL(u), context.Cause(ctx))
	}
	b, err := p.opts.Fetch(ctx, u)
	if err != nil {
		if errors.Is(context.Cause(ctx), ErrIncludeBudget) && !errors.Is(err, ErrIncludeBudget) {
			err = fmt.Errorf("%w: %w", ErrIncludeBudget, err)
		}
		return nil, err
	}
	if once && p.opts.IncludeOnceCache != nil {
		if err := p.opts.IncludeOnceCache.Put(u, b); err != nil {
			p.warnf("", "caching #include-once %s: %v", u, err)
		}
	}
	return p.charge(u, b)
}

// includeContext is the context every #include fetch of this Process call
// shares: the caller's, bounded by IncludeBudget from the first fetch on.
func (p *processor) includeContext() context.Context {
	if p.includeCtx == nil {
		b := p.opts.IncludeBudget
		if b == 0 {
			b = DefaultIncludeBudget
		}
		if b < 0 {
			p.includeCtx, p.includeCancel = context.WithCancel(p.ctx)
		} else {
			p.includeCtx, p.includeCancel = context.WithTimeoutCause(p.ctx, b, ErrIncludeBudget)
		}
	}
	return p.includeCtx
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

// Fetcher fetches #include URLs the way cloud-init does, through the
// metadata client (pkg/imds) and so under its redirect policy: each attempt
// bounded by Timeout, up to Retries more attempts after a network error,
// 408, 429 or 5xx, with a jittered exponential backoff from Delay; only
// http and https; bodies larger than MaxBytes refused. Redirects may lead
// to another host (cloud-init follows them; an include carries no
// credentials, and every header but User-Agent is dropped on that hop),
// never from https down to http, and a loop fails at once. The zero value
// uses http.DefaultClient's transport and cloud-init's defaults.
type Fetcher struct {
	Client   *http.Client
	MaxBytes int64         // DefaultMaxSize if 0
	Retries  int           // extra attempts; negative means none
	Timeout  time.Duration // per attempt; DefaultIncludeTimeout if 0
	Delay    time.Duration // first backoff; DefaultIncludeDelay if 0
	// Rand returns numbers in [0,1) for the jitter; nil uses math/rand/v2.
	Rand func() float64
}

// HTTPFetcher returns Options.Fetch for a client: timeout 5 s per attempt,
// retries extra attempts from 1 s apart on network errors, 408, 429 and
// 5xx. Other 4xx answers fail at once (cloud-init retries them too; an
// absent document does not appear by waiting).
func HTTPFetcher(client *http.Client, maxBytes int64, retries int) func(ctx context.Context, url string) ([]byte, error) {
	f := &Fetcher{Client: client, MaxBytes: maxBytes, Retries: retries}
	if retries == 0 {
		f.Retries = -1
	}
	return f.Fetch
}

// Fetch gets one URL; ctx bounds it with its retries.
func (f *Fetcher) Fetch(ctx context.Context, u string) ([]byte, error) {
	if err := checkURL(u); err != nil {
		return nil, err
	}
	client := f.Client
	if client == nil {
		client = http.DefaultClient
	}
	delay := cmpOr(f.Delay, DefaultIncludeDelay)
	retries := f.Retries
	if retries == 0 {
		retries = DefaultIncludeRetries
	}
	c := &imds.Client{
		BaseURLs:      []string{u},
		HTTP:          client,
		FollowOffHost: true,
		Timeout:       cmpOr(f.Timeout, DefaultIncludeTimeout),
		Retries:       retries,
		Backoff:       imds.Backoff{Initial: delay, Max: 8 * delay},
		MaxBytes:      cmpOr(f.MaxBytes, DefaultMaxSize),
		Budget:        -1,
		Rand:          f.Rand,
	}
	b, err := c.Get(ctx, "")
	if err == nil {
		return b, nil
	}
	var he *imds.Error
	switch {
	case errors.Is(err, imds.ErrTooLarge):
		err = fmt.Errorf("%w: %w", ErrTooLarge, err)
	case errors.As(err, &he) && he.Status >= 400:
		err = fmt.Errorf("%w (attempt %d)", &HTTPError{URL: redactURL(u), Status: he.Status}, he.Attempts)
	}
	return nil, fmt.Errorf("fetching %s: %w", redactURL(u), err)
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
