package modules

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strconv"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/internal/pyval"
	"github.com/cloudroot/cloudroot/pkg/state"
	"github.com/cloudroot/cloudroot/pkg/target"
)

// MaxDecodedFile bounds a decompressed write_files payload.
const MaxDecodedFile = 256 << 20

// WriteFiles is cc_write_files (init stage): every entry without `defer: true`.
var WriteFiles = NewWriteFiles(WriteFilesOptions{})

// WriteFilesDeferred is cc_write_files_deferred (final stage): the entries
// with `defer: true`, written after users exist.
var WriteFilesDeferred = NewWriteFilesDeferred(WriteFilesOptions{})

// NewWriteFiles builds write_files with opts (for `source:` downloads).
func NewWriteFiles(opts WriteFilesOptions) Module {
	return Module{
		Name:       "write_files",
		Frequency:  state.PerInstance,
		Keys:       []string{"write_files"},
		ActivateBy: []string{"write_files"},
		Run: Typed(func(ctx context.Context, c *Context, cfg writeFilesConfig) error {
			return writeFiles(ctx, c, cfg, false, opts)
		}),
	}
}

// NewWriteFilesDeferred builds write_files_deferred with opts.
func NewWriteFilesDeferred(opts WriteFilesOptions) Module {
	return Module{
		Name:       "write_files_deferred",
		ActivateBy: []string{"write_files"},
		Frequency:  state.PerInstance,
		Run: Typed(func(ctx context.Context, c *Context, cfg writeFilesConfig) error {
			return writeFiles(ctx, c, cfg, true, opts)
		}),
	}
}

// writeFilesConfig is write_files' (and write_files_deferred's)
// configuration.
type writeFilesConfig struct {
	Files *writeFilesList `cfg:"write_files"`
}

// writeFilesList is the write_files list: a value that is not a list, or
// an entry that is not a mapping, is kept as the module's error (the
// other entries are still written) rather than failing the decoding.
type writeFilesList struct {
	// NotList is the Go type of a write_files that is not a list.
	NotList string
	Entries []writeFilesEntry
}

// writeFilesEntry is one write_files entry.
type writeFilesEntry struct {
	// NotMapping is the Go type of an entry that is not a mapping.
	NotMapping  string
	Path        string `cfg:"path,scalar"`
	Content     any    `cfg:"content"`
	ContentText string `cfg:"content,scalar"`
	Encoding    string `cfg:"encoding,scalar"`
	Permissions any    `cfg:"permissions"`
	Owner       string `cfg:"owner,scalar"`
	Append      bool   `cfg:"append"`
	Defer       bool   `cfg:"defer"`
	Source      struct {
		URI string `cfg:"uri,scalar"`
		// Headers are sent as given, each value as its text.
		Headers map[string]any `cfg:"headers,loose"`
	} `cfg:"source,loose"`
}

// UnmarshalPy decodes the list, entry by entry.
func (l *writeFilesList) UnmarshalPy(d *pyval.Decoder, v any) error {
	list, ok := v.([]any)
	if !ok {
		if v != nil {
			l.NotList = fmt.Sprintf("%T", v)
		}
		return nil
	}
	var errs []error
	l.Entries = make([]writeFilesEntry, len(list))
	for i, e := range list {
		switch m := e.(type) {
		case map[string]any:
			errs = append(errs, d.Decode(m, &l.Entries[i]))
		default:
			l.Entries[i].NotMapping = fmt.Sprintf("%T", e)
		}
	}
	return errors.Join(errs...)
}

func writeFiles(ctx context.Context, c *Context, cfg writeFilesConfig, deferred bool, opts WriteFilesOptions) error {
	name := "write_files"
	if deferred {
		name = "write_files_deferred"
	}
	if cfg.Files == nil {
		c.Log.Debug("skipping module: no 'write_files' key in configuration", "module", name)
		return nil
	}
	if cfg.Files.NotList != "" {
		return fmt.Errorf("%s: write_files: expected a list, got %s", name, cfg.Files.NotList)
	}
	var errs []error
	for i, ent := range cfg.Files.Entries {
		if ent.NotMapping != "" {
			errs = append(errs, fmt.Errorf("%s: write_files[%d]: expected a mapping, got %s", name, i, ent.NotMapping))
			continue
		}
		if ent.Defer != deferred {
			continue
		}
		if err := writeOne(ctx, c, ent, i, name, opts); err != nil {
			errs = append(errs, fmt.Errorf("%s: write_files[%d]: %w", name, i, err))
		}
	}
	return errors.Join(errs...)
}

func writeOne(ctx context.Context, c *Context, ent writeFilesEntry, i int, module string, opts WriteFilesOptions) error {
	p := ent.Path
	if p == "" {
		return errors.New("no path provided")
	}
	if !strings.HasPrefix(p, "/") {
		return fmt.Errorf("path %q is not absolute", p)
	}
	// The content is decoded while it is written: a large payload is never
	// held decoded in memory (docs/security.md, "Memory ceiling").
	data, ok, err := writeFileContent(ctx, c, ent, opts)
	if err != nil {
		return fmt.Errorf("%s: %w", p, err)
	}
	if !ok {
		c.Warnf("No content could be loaded for entry %d in module %s; skipping", i+1, module)
		return nil
	}
	if cl, ok := data.(io.Closer); ok {
		defer cl.Close()
	}
	perm, err := DecodePerms(ent.Permissions, 0o644)
	if err != nil {
		return fmt.Errorf("%s: %w", p, err)
	}
	owner := "root:root"
	if o := ent.Owner; o != "" {
		owner = o
	}
	uid, gid, err := resolveOwner(c.Root, owner)
	if err != nil {
		return fmt.Errorf("%s: owner %q: %w", p, owner, err)
	}
	appendMode := ent.Append
	cr := &countingReader{r: data}
	if err := c.Root.WriteFileFrom(p, cr, target.WriteOpts{Perm: perm, UID: uid, GID: gid, Append: appendMode}); err != nil {
		return fmt.Errorf("%s: %w", p, err)
	}
	c.Log.Debug("wrote file", "module", "write_files", "path", p, "bytes", cr.n)
	return nil
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// DecodeReader is DecodeContent as a stream over content: base64 is
// decoded and gzip inflated as the reader is read (whitespace in base64
// skipped, padding optional), and an inflated payload over MaxDecodedFile
// is an error.
func DecodeReader(content, enc string) (io.Reader, error) {
	switch strings.ToLower(strings.TrimSpace(enc)) {
	case "", "text/plain":
		return strings.NewReader(content), nil
	case "b64", "base64":
		return b64Reader(content), nil
	case "gz", "gzip":
		return gunzipReader(strings.NewReader(content))
	case "gz+base64", "gzip+base64", "gz+b64", "gzip+b64":
		return gunzipReader(b64Reader(content))
	}
	return nil, fmt.Errorf("unknown encoding %q (want b64, base64, gz, gzip, gz+b64, gzip+base64, text/plain)", enc)
}

// b64Reader is Python's base64.b64decode as cloud-init's write_files
// applies it (pyval.B64Decode), decoding as the content is read.
func b64Reader(s string) io.Reader {
	return &errPrefixReader{r: pyval.NewB64Decoder(strings.NewReader(s)), prefix: "base64 decode"}
}

type errPrefixReader struct {
	r      io.Reader
	prefix string
}

func (e *errPrefixReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF {
		err = fmt.Errorf("%s: %w", e.prefix, err)
	}
	return n, err
}

// gunzipReader inflates r, failing past MaxDecodedFile bytes.
func gunzipReader(r io.Reader) (io.Reader, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("gzip decode: %w", err)
	}
	return &errPrefixReader{r: &capReader{r: zr, left: MaxDecodedFile}, prefix: "gzip decode"}, nil
}

// capReader fails once more than left bytes have been read.
type capReader struct {
	r    io.Reader
	left int64
}

func (c *capReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.left -= int64(n)
	if c.left < 0 {
		return n, fmt.Errorf("content larger than %d bytes", MaxDecodedFile)
	}
	return n, err
}

// DecodeContent applies write_files' `encoding` to b (DecodeReader, read
// whole).
func DecodeContent(b []byte, enc string) ([]byte, error) {
	r, err := DecodeReader(string(b), enc)
	if err != nil {
		return nil, err
	}
	d, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	return d, nil
}

// b64 is Python's base64.b64decode of base64 held in memory (small
// payloads: seed_random).
func b64(b []byte) ([]byte, error) {
	d, err := pyval.B64Decode(b)
	if err != nil {
		return nil, fmt.Errorf("base64 decode: %w", err)
	}
	return d, nil
}

func gunzip(b []byte) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("gzip decode: %w", err)
	}
	d, err := io.ReadAll(io.LimitReader(zr, MaxDecodedFile+1))
	if err != nil {
		return nil, fmt.Errorf("gzip decode: %w", err)
	}
	if len(d) > MaxDecodedFile {
		return nil, fmt.Errorf("gzip decode: content larger than %d bytes", MaxDecodedFile)
	}
	return d, nil
}

// DecodePerms is cloud-init's decode_perms: an int is taken as is, a string
// is octal ("0644", "644", "0o644").
func DecodePerms(v any, def fs.FileMode) (fs.FileMode, error) {
	switch t := v.(type) {
	case nil:
		return def, nil
	case int:
		return modeOf(uint64(t)), nil
	case float64:
		return modeOf(uint64(t)), nil
	case string:
		s := strings.TrimSpace(t)
		if s == "" {
			return def, nil
		}
		s = strings.TrimPrefix(strings.TrimPrefix(s, "0o"), "0O")
		n, err := strconv.ParseUint(s, 8, 32)
		if err != nil {
			return 0, fmt.Errorf("permissions %q: not an octal mode", t)
		}
		return modeOf(n), nil
	}
	return 0, fmt.Errorf("permissions: unsupported type %T", v)
}

func modeOf(n uint64) fs.FileMode {
	m := fs.FileMode(n & 0o777)
	if n&0o4000 != 0 {
		m |= fs.ModeSetuid
	}
	if n&0o2000 != 0 {
		m |= fs.ModeSetgid
	}
	if n&0o1000 != 0 {
		m |= fs.ModeSticky
	}
	return m
}

// resolveOwner turns "user:group" (either part a name or number) into ids
// from the target's passwd and group files. An omitted group leaves it as is.
func resolveOwner(r *target.Root, owner string) (int, int, error) {
	u, g, hasGroup := strings.Cut(owner, ":")
	uid, gid := -1, -1
	if u != "" {
		usr, err := r.LookupUser(u)
		if err != nil {
			return 0, 0, err
		}
		uid = usr.UID
	}
	if hasGroup && g != "" {
		grp, err := r.LookupGroup(g)
		if err != nil {
			return 0, 0, err
		}
		gid = grp.GID
	}
	return uid, gid, nil
}
