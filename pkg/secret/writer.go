package secret

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
)

// Known holds the values to scrub once they are known (the merged config
// is read part way through a stage); the zero value scrubs nothing.
type Known struct {
	mu     sync.RWMutex
	values []string
}

// Set replaces the values scrubbed from then on.
func (k *Known) Set(values []string) {
	k.mu.Lock()
	k.values = values
	k.mu.Unlock()
}

// Values returns the values set.
func (k *Known) Values() []string {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return k.values
}

// Writer scrubs every Write to W of Known's values, for a log or console
// stream. A value split across two Writes is not caught: slog handlers
// write one record per Write, which is what Writer is for.
type Writer struct {
	W     io.Writer
	Known *Known
}

// Write writes p with the values replaced; it reports len(p) on success.
func (w Writer) Write(p []byte) (int, error) {
	vals := w.Known.Values()
	if len(vals) == 0 {
		return w.W.Write(p)
	}
	if _, err := io.WriteString(w.W, Scrub(string(p), vals)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Handler wraps a slog.Handler so that the message and string (or error)
// attributes of every record have the values Set gave it scrubbed: for a
// handler whose writer cannot be wrapped (a caller's stderr logger).
type Handler struct {
	h     slog.Handler
	known *Known
}

// NewHandler wraps h; k.Set changes what is scrubbed.
func NewHandler(h slog.Handler, k *Known) *Handler { return &Handler{h: h, known: k} }

// Enabled implements slog.Handler.
func (s *Handler) Enabled(ctx context.Context, l slog.Level) bool { return s.h.Enabled(ctx, l) }

// Handle implements slog.Handler.
func (s *Handler) Handle(ctx context.Context, r slog.Record) error {
	vals := s.known.Values()
	if len(vals) == 0 {
		return s.h.Handle(ctx, r)
	}
	c := slog.NewRecord(r.Time, r.Level, Scrub(r.Message, vals), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		c.AddAttrs(scrubAttr(a, vals))
		return true
	})
	return s.h.Handle(ctx, c)
}

func scrubAttr(a slog.Attr, vals []string) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, Scrub(v.String(), vals))
	case slog.KindGroup:
		as := v.Group()
		out := make([]any, len(as))
		for i, g := range as {
			out[i] = scrubAttr(g, vals)
		}
		return slog.Group(a.Key, out...)
	case slog.KindAny:
		if err, ok := v.Any().(error); ok {
			return slog.String(a.Key, Scrub(err.Error(), vals))
		}
		if s, ok := v.Any().(fmt.Stringer); ok {
			return slog.String(a.Key, Scrub(s.String(), vals))
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}

// WithAttrs implements slog.Handler (attributes given here are scrubbed
// with the values known now).
func (s *Handler) WithAttrs(as []slog.Attr) slog.Handler {
	vals := s.known.Values()
	out := make([]slog.Attr, len(as))
	for i, a := range as {
		out[i] = scrubAttr(a, vals)
	}
	return &Handler{h: s.h.WithAttrs(out), known: s.known}
}

// WithGroup implements slog.Handler.
func (s *Handler) WithGroup(name string) slog.Handler {
	return &Handler{h: s.h.WithGroup(name), known: s.known}
}
