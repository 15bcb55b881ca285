package netboot

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
)

// Defaults for Fetcher.
const (
	DefaultRetries = 5
	DefaultDelay   = time.Second
	// DefaultStallTimeout is how long a transfer may go without a byte
	// before it is cut and resumed.
	DefaultStallTimeout = 30 * time.Second
)

// Fetcher downloads large files with resume and progress.
type Fetcher struct {
	// Client is the one HTTP client of the caller (required for URLs).
	Client *http.Client
	// Retries is how many times a broken transfer is resumed.
	Retries int
	// Delay is the pause before each retry.
	Delay time.Duration
	// Progress receives the console progress lines; nil prints none.
	Progress io.Writer
	// Log gets one line at start, finish and each retry; nil discards.
	Log *slog.Logger
}

func (f *Fetcher) log() *slog.Logger {
	if f.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return f.Log
}

// HTTPError is a non-success HTTP status.
type HTTPError struct {
	URL    string
	Status int
}

func (e *HTTPError) Error() string {
	return fmt.Sprintf("GET %s: HTTP %d %s", e.URL, e.Status, http.StatusText(e.Status))
}

// IsRemote reports whether src is an http(s) URL (else a local path).
func IsRemote(src string) bool {
	return strings.HasPrefix(src, "http://") || strings.HasPrefix(src, "https://")
}

// SizeCheck is called once with the size about to arrive (-1: unknown)
// before any byte is written; an error stops the transfer.
type SizeCheck func(size int64) error

// Copy streams src (an http(s) URL or a local path) into w, resuming a
// broken HTTP transfer. It returns the bytes written.
func (f *Fetcher) Copy(ctx context.Context, src string, w io.Writer, check SizeCheck) (int64, error) {
	start := time.Now()
	f.log().Info("download start", "url", src)
	var n int64
	var err error
	if IsRemote(src) {
		n, err = f.copyHTTP(ctx, src, w, check)
	} else {
		n, err = f.copyFile(src, w, check)
	}
	if err != nil {
		f.log().Warn("download failed", "url", src, "bytes", n, "err", err)
		return n, err
	}
	d := time.Since(start)
	f.log().Info("download done", "url", src, "bytes", n, "duration", fmt.Sprintf("%.3fs", d.Seconds()))
	return n, nil
}

func (f *Fetcher) copyFile(p string, w io.Writer, check SizeCheck) (int64, error) {
	file, err := os.Open(p)
	if err != nil {
		return 0, fmt.Errorf("opening %s: %w", p, err)
	}
	defer file.Close()
	size := int64(-1)
	if fi, err := file.Stat(); err == nil && fi.Mode().IsRegular() {
		size = fi.Size()
	} else if s, err := file.Seek(0, io.SeekEnd); err == nil {
		size = s // a block device
		if _, err := file.Seek(0, io.SeekStart); err != nil {
			return 0, fmt.Errorf("seeking %s: %w", p, err)
		}
	}
	if check != nil {
		if err := check(size); err != nil {
			return 0, err
		}
	}
	pw := newProgress(f.Progress, p, size)
	n, err := io.Copy(io.MultiWriter(w, pw), file)
	pw.done(n)
	if err != nil {
		return n, fmt.Errorf("reading %s: %w", p, err)
	}
	return n, nil
}

func (f *Fetcher) copyHTTP(ctx context.Context, u string, w io.Writer, check SizeCheck) (int64, error) {
	if f.Client == nil {
		return 0, errors.New("download: no HTTP client (network not up)")
	}
	retries := f.Retries
	if retries <= 0 {
		retries = DefaultRetries
	}
	delay := f.Delay
	if delay <= 0 {
		delay = DefaultDelay
	}
	var (
		n       int64 // bytes written to w
		total   = int64(-1)
		checked bool
		pw      *progress
		errs    []error
	)
	for attempt := 0; ; attempt++ {
		resp, err := f.get(ctx, u, n)
		if err == nil {
			var skip int64
			switch {
			case n > 0 && resp.StatusCode == http.StatusPartialContent:
			case resp.StatusCode == http.StatusOK:
				skip = n // no Range support: read again, drop what we have
				if total < 0 && resp.ContentLength >= 0 {
					total = resp.ContentLength
				}
			default:
				resp.Body.Close()
				herr := &HTTPError{URL: redact(u), Status: resp.StatusCode}
				if resp.StatusCode < 500 && resp.StatusCode != http.StatusRequestTimeout && resp.StatusCode != http.StatusTooManyRequests {
					return n, herr
				}
				err = herr
			}
			if err == nil {
				if !checked {
					checked = true
					if check != nil {
						if cerr := check(total); cerr != nil {
							resp.Body.Close()
							return 0, cerr
						}
					}
					pw = newProgress(f.Progress, redact(u), total)
				}
				err = f.body(ctx, resp, skip, io.MultiWriter(w, pw), &n)
				resp.Body.Close()
				if err == nil {
					if total >= 0 && n != total {
						err = fmt.Errorf("got %d bytes of %d", n, total)
					} else {
						pw.done(n)
						return n, nil
					}
				}
				if errors.Is(err, errWrite) {
					return n, err
				}
			}
		}
		errs = append(errs, fmt.Errorf("attempt %d: %w", attempt+1, err))
		if ctx.Err() != nil || attempt >= retries {
			return n, fmt.Errorf("downloading %s: %w", redact(u), errors.Join(errs...))
		}
		f.log().Warn("download interrupted; resuming", "url", redact(u), "attempt", attempt+1, "bytes", n, "err", err)
		select {
		case <-ctx.Done():
			return n, ctx.Err()
		case <-time.After(delay):
		}
	}
}

func (f *Fetcher) get(ctx context.Context, u string, from int64) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", "cloudroot-netboot")
	if from > 0 {
		req.Header.Set("Range", "bytes="+strconv.FormatInt(from, 10)+"-")
	}
	return f.Client.Do(req)
}

// errWrite marks a failure of the destination (not retried).
var errWrite = errors.New("writing")

// body copies resp's body into w after dropping skip bytes, counting into
// *n; a body that stalls for DefaultStallTimeout is cut.
func (f *Fetcher) body(ctx context.Context, resp *http.Response, skip int64, w io.Writer, n *int64) error {
	if skip > 0 {
		if _, err := io.CopyN(io.Discard, resp.Body, skip); err != nil {
			return fmt.Errorf("skipping %d bytes already read: %w", skip, err)
		}
	}
	stall := time.AfterFunc(DefaultStallTimeout, func() { resp.Body.Close() })
	defer stall.Stop()
	buf := make([]byte, 256<<10)
	for {
		m, rerr := resp.Body.Read(buf)
		if m > 0 {
			stall.Reset(DefaultStallTimeout)
			if _, werr := w.Write(buf[:m]); werr != nil {
				return fmt.Errorf("%w: %w", errWrite, werr)
			}
			*n += int64(m)
		}
		if rerr == io.EOF {
			return nil
		}
		if rerr != nil {
			return rerr
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
}

// ReadSmall fetches a small document (a .sha256 file) whole.
func (f *Fetcher) ReadSmall(ctx context.Context, src string, max int64) ([]byte, error) {
	var b limitedBuffer
	b.max = max
	quiet := *f
	quiet.Progress = nil
	quiet.Retries = 2
	if _, err := quiet.Copy(ctx, src, &b, nil); err != nil {
		return nil, err
	}
	return b.buf, nil
}

type limitedBuffer struct {
	buf []byte
	max int64
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if int64(len(l.buf)+len(p)) > l.max {
		return 0, fmt.Errorf("over %d bytes", l.max)
	}
	l.buf = append(l.buf, p...)
	return len(p), nil
}

// Expected resolves the digest src must have: the given one, the
// `.sha256` file's, or "" when the checksum is skipped (or a local path
// has none). A missing `.sha256` is an error: nothing downloaded is used
// unverified unless the command line says none.
func (f *Fetcher) Expected(ctx context.Context, src string, c bootenv.Checksum) (string, error) {
	switch {
	case c.Skip:
		return "", nil
	case c.SHA256 != "":
		return c.SHA256, nil
	case c.SumURL == "":
		return "", nil
	}
	b, err := f.ReadSmall(ctx, c.SumURL, MaxSumFile)
	if err != nil {
		return "", fmt.Errorf("no checksum for %s (give one on the command line, or none to skip): %w", redact(src), err)
	}
	sum, err := ParseSumFile(b, baseName(src))
	if err != nil {
		return "", fmt.Errorf("%s: %w", redact(c.SumURL), err)
	}
	return sum, nil
}

func baseName(src string) string {
	if u, err := url.Parse(src); err == nil && u.Path != "" {
		return path.Base(u.Path)
	}
	return path.Base(src)
}

// redact drops a URL's user info and query (tokens) for messages.
func redact(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return s
	}
	u.User = nil
	if u.RawQuery != "" {
		u.RawQuery = "…"
	}
	return u.String()
}

// progress writes a console line every step.
type progress struct {
	w         io.Writer
	name      string
	total     int64
	n         int64
	next      int64
	step      int64
	start     time.Time
	announced bool
}

func newProgress(w io.Writer, name string, total int64) *progress {
	p := &progress{w: w, name: name, total: total, start: time.Now()}
	p.step = 16 << 20
	if total > 0 {
		p.step = max(total/10, 1<<20)
	}
	p.next = p.step
	if w != nil {
		size := "size unknown"
		if total >= 0 {
			size = mib(total) + " MiB"
		}
		fmt.Fprintf(w, "cloudroot-init: downloading %s (%s)\n", name, size)
	}
	return p
}

func mib(n int64) string { return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) }

func (p *progress) Write(b []byte) (int, error) {
	if p == nil {
		return len(b), nil
	}
	p.n += int64(len(b))
	for p.w != nil && p.n >= p.next {
		if p.total > 0 {
			fmt.Fprintf(p.w, "cloudroot-init: %s: %3d%% (%s of %s MiB)\n", p.name, p.n*100/p.total, mib(p.n), mib(p.total))
		} else {
			fmt.Fprintf(p.w, "cloudroot-init: %s: %s MiB\n", p.name, mib(p.n))
		}
		p.next += p.step
	}
	return len(b), nil
}

func (p *progress) done(n int64) {
	if p == nil || p.w == nil {
		return
	}
	d := time.Since(p.start).Seconds()
	rate := 0.0
	if d > 0 {
		rate = float64(n) / (1 << 20) / d
	}
	fmt.Fprintf(p.w, "cloudroot-init: downloaded %s: %s MiB in %.1fs (%.1f MiB/s)\n", p.name, mib(n), d, rate)
}
