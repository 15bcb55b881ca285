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
		Run:        func(ctx context.Context, c *Context) error { return writeFiles(ctx, c, false, opts) },
	}
}

// NewWriteFilesDeferred builds write_files_deferred with opts.
func NewWriteFilesDeferred(opts WriteFilesOptions) Module {
	return Module{
		Name:       "write_files_deferred",
		ActivateBy: []string{"write_files"},
		Frequency:  state.PerInstance,
		Run:        func(ctx context.Context, c *Context) error { return writeFiles(ctx, c, true, opts) },
	}
}

func writeFiles(ctx context.Context, c *Context, deferred bool, opts WriteFilesOptions) error {
	name := "write_files"
	if deferred {
		name = "write_files_deferred"
	}
	raw, ok := c.Config["write_files"]
	if !ok || raw == nil {
		c.Log.Debug("skipping module: no 'write_files' key in configuration", "module", name)
		return nil
	}
	list, ok := raw.([]any)
	if !ok {
		return fmt.Errorf("%s: write_files: expected a list, got %T", name, raw)
	}
	var errs []error
	for i, e := range list {
		ent, ok := e.(map[string]any)
		if !ok {
			errs = append(errs, fmt.Errorf("%s: write_files[%d]: expected a mapping, got %T", name, i, e))
			continue
		}
		if pyval.TranslateBool(ent["defer"], false) != deferred {
			continue
		}
		if err := writeOne(ctx, c, ent, i, name, opts); err != nil {
			errs = append(errs, fmt.Errorf("%s: write_files[%d]: %w", name, i, err))
		}
	}
	return errors.Join(errs...)
}

func writeOne(ctx context.Context, c *Context, ent map[string]any, i int, module string, opts WriteFilesOptions) error {
	p := scalarString(ent["path"])
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
		c.warn("No content could be loaded for entry %d in module %s; skipping", i+1, module)
		return nil
	}
	if cl, ok := data.(io.Closer); ok {
		defer cl.Close()
	}
	perm, err := DecodePerms(ent["permissions"], 0o644)
	if err != nil {
		return fmt.Errorf("%s: %w", p, err)
	}
	owner := "root:root"
	if o := scalarString(ent["owner"]); o != "" {
		owner = o
	}
	uid, gid, err := resolveOwner(c.Root, owner)
	if err != nil {
		return fmt.Errorf("%s: owner %q: %w", p, owner, err)
	}
	appendMode := pyval.TranslateBool(ent["append"], false)
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
