package modules

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strconv"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/state"
	"github.com/cloudroot/cloudroot/pkg/target"
)

// MaxDecodedFile bounds a decompressed write_files payload.
const MaxDecodedFile = 256 << 20

// WriteFiles is cc_write_files (init stage): every entry without `defer: true`.
var WriteFiles = Module{
	Name:      "write_files",
	Frequency: state.PerInstance,
	Keys:      []string{"write_files"},
	Run:       func(ctx context.Context, c *Context) error { return writeFiles(c, false) },
}

// WriteFilesDeferred is cc_write_files_deferred (final stage): the entries
// with `defer: true`, written after users exist.
var WriteFilesDeferred = Module{
	Name:      "write_files_deferred",
	Frequency: state.PerInstance,
	Run:       func(ctx context.Context, c *Context) error { return writeFiles(c, true) },
}

func writeFiles(c *Context, deferred bool) error {
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
		if TranslateBool(ent["defer"], false) != deferred {
			continue
		}
		if err := writeOne(c, ent); err != nil {
			errs = append(errs, fmt.Errorf("%s: write_files[%d]: %w", name, i, err))
		}
	}
	return errors.Join(errs...)
}

func writeOne(c *Context, ent map[string]any) error {
	p := scalarString(ent["path"])
	if p == "" {
		return errors.New("no path provided")
	}
	if !strings.HasPrefix(p, "/") {
		return fmt.Errorf("path %q is not absolute", p)
	}
	if _, ok := ent["source"]; ok {
		if _, hasContent := ent["content"]; !hasContent {
			return fmt.Errorf("%s: source.uri downloads are not supported yet (needs network in the config stage)", p)
		}
	}
	// The content is decoded while it is written: a large payload is never
	// held decoded in memory (docs/security.md, "Memory ceiling").
	data, err := DecodeReader(scalarString(ent["content"]), scalarString(ent["encoding"]))
	if err != nil {
		return fmt.Errorf("%s: %w", p, err)
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
	appendMode := TranslateBool(ent["append"], false)
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

// b64Reader decodes base64 text, skipping whitespace, with the padding
// optional: the trailing "=" are dropped and the rest decoded with the raw
// alphabet, which yields what the padded decoding does and accepts what b64's
// fallback accepts.
func b64Reader(s string) io.Reader {
	s = strings.TrimRight(s, "= \t\r\n")
	return &errPrefixReader{r: base64.NewDecoder(base64.RawStdEncoding, &skipReader{s: s, skip: " \t\r\n"}), prefix: "base64 decode"}
}

// skipReader reads s without the bytes in skip.
type skipReader struct {
	s    string
	skip string
}

func (r *skipReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) && len(r.s) > 0 {
		c := r.s[0]
		r.s = r.s[1:]
		if strings.IndexByte(r.skip, c) >= 0 {
			continue
		}
		p[n] = c
		n++
	}
	if n == 0 && len(r.s) == 0 {
		return 0, io.EOF
	}
	return n, nil
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
	return io.ReadAll(r)
}

// b64 decodes base64 held in memory (small payloads: seed_random).
func b64(b []byte) ([]byte, error) {
	s := strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == ' ' || r == '\t' {
			return -1
		}
		return r
	}, string(b))
	d, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		d2, err2 := base64.RawStdEncoding.DecodeString(strings.TrimRight(s, "="))
		if err2 != nil {
			return nil, fmt.Errorf("base64 decode: %w", err)
		}
		return d2, nil
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
