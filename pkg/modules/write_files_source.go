package modules

// write_files' `source`, as cloud-init 26.x's read_url_or_decode: an entry
// with `source.uri` takes its content from there (http/https through
// pkg/imds' client with `source.headers`, three retries three seconds
// apart, whatever the failure (cloud-init waits out a 503 past its
// retries, for ever if it keeps coming; cloudroot stops after the three);
// file:// or an absolute path read from the target: a regular file only,
// opened without blocking, so a FIFO or /dev/zero is a failure, not a
// hang), as is (no `encoding`), at most MaxDecodedFile bytes either way.
// When the fetch fails the failure is a warning and the inline `content`
// (decoded per `encoding`) is used instead; without one the entry is
// skipped with cloud-init's warning. An entry with neither
// writes an empty file.
//
// The init stage runs in the initramfs: the network is up there only when
// the datasource needed it, so an http(s) source of a local-seed boot falls
// back to `content` (or is skipped) — put such entries under `defer: true`
// to fetch them in the final stage, from the booted system.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/cloudroot/cloudroot/pkg/imds"
)

// write_files source defaults (cloud-init's).
const (
	DefaultWriteFilesRetries = 3
	DefaultWriteFilesDelay   = 3 * time.Second
	// DefaultWriteFilesTimeout bounds one attempt (cloud-init sets none).
	DefaultWriteFilesTimeout = 30 * time.Second
)

// WriteFilesOptions tune source downloads; the zero value is cloud-init's
// behaviour over a client that honours the proxy environment.
type WriteFilesOptions struct {
	HTTP  *http.Client
	Delay time.Duration // between attempts; DefaultWriteFilesDelay if 0
}

// writeFileContent is the entry's content: fetched from source.uri, else
// decoded from content; ok is false when there is none to write.
func writeFileContent(ctx context.Context, c *Context, ent writeFilesEntry, opts WriteFilesOptions) (data io.Reader, ok bool, err error) {
	uri := strings.TrimLeft(ent.Source.URI, " \t\r\n")
	hasContent := ent.Content != nil
	if !hasContent && uri == "" {
		return strings.NewReader(""), true, nil
	}
	if uri != "" {
		data, err := fetchSource(ctx, c, uri, ent.Source.Headers, opts)
		if err == nil {
			return data, true, nil
		}
		if errors.Is(err, context.Canceled) {
			return nil, false, err
		}
		c.Logexc("Failed to retrieve contents from source \"%s\"; falling back to data from \"contents\" key: %v", uri, err)
	}
	if !hasContent {
		return nil, false, nil
	}
	d, err := DecodeReader(ent.ContentText, ent.Encoding)
	if err != nil {
		return nil, false, err
	}
	return d, true, nil
}

// fetchSource is url_helper.read_file_or_url for write_files. Either way
// the content is bounded by MaxDecodedFile, as decoded content is. A file
// is opened through the target's confined walk, without blocking: only a
// regular file is read (a FIFO, /dev/zero, a directory is refused), and
// it is streamed, the caller closes it.
func fetchSource(ctx context.Context, c *Context, uri string, headers map[string]any, opts WriteFilesOptions) (io.Reader, error) {
	u, err := url.Parse(uri)
	if err != nil {
		return nil, fmt.Errorf("parsing %s: %w", uri, err)
	}
	if u.Scheme == "file" || strings.HasPrefix(uri, "/") {
		return openSourceFile(c, u.Path)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		c.Warnf("Attempting unknown protocol %s", u.Scheme)
		return nil, fmt.Errorf("%s: unsupported protocol %q", uri, u.Scheme)
	}
	h := http.Header{"User-Agent": {"Cloud-Init/" + c.Version}}
	for k, v := range headers {
		h.Set(k, scalarString(v))
	}
	delay := opts.Delay
	if delay <= 0 {
		delay = DefaultWriteFilesDelay
	}
	hc := opts.HTTP
	if hc == nil {
		hc = &http.Client{Transport: &http.Transport{Proxy: http.ProxyFromEnvironment}}
	}
	client := &imds.Client{
		BaseURLs: []string{uri},
		HTTP:     hc,
		Timeout:  DefaultWriteFilesTimeout,
		Retries:  DefaultWriteFilesRetries,
		// cloud-init retries any failure, a 404 included.
		Retry:    func(*imds.Error) bool { return true },
		Backoff:  imds.Backoff{Initial: delay, Max: delay, Jitter: 1e-9},
		Budget:   -1,
		Headers:  h,
		Logger:   c.Log,
		MaxBytes: MaxDecodedFile,
	}
	b, err := client.Get(ctx, "")
	if err != nil {
		return nil, err
	}
	return bytes.NewReader(b), nil
}

// openSourceFile opens a file:// source: a regular file of at most
// MaxDecodedFile bytes (one that grows past it while read fails the write).
func openSourceFile(c *Context, p string) (io.Reader, error) {
	f, err := c.Root.OpenRegular(p)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	if fi.Size() > MaxDecodedFile {
		f.Close()
		return nil, fmt.Errorf("%s: %d bytes, larger than %d", p, fi.Size(), MaxDecodedFile)
	}
	return &fileSource{capReader: capReader{r: f, left: MaxDecodedFile}, f: f}, nil
}

// fileSource is a capped source file the writer closes.
type fileSource struct {
	capReader
	f io.Closer
}

func (s *fileSource) Close() error { return s.f.Close() }
