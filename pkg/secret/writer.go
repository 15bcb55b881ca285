package secret

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
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

// DefaultMaxLine is how much of an incomplete line a Writer holds back
// (its MaxLine when 0).
const DefaultMaxLine = 4096

// Writer scrubs what is written through it of Known's values before it
// reaches W, for a log, the console or command output. A value split
// across Writes is still caught: complete lines (ended by '\n' or '\r')
// are written at once, an
// incomplete one is held until its newline, Flush or Close; past MaxLine
// bytes all of it is written but the last (longest value − 1) bytes, the
// cut moved back so that no value found in what is held straddles it.
// (The short-value rule needs the key before the value: on a line longer
// than MaxLine, a short value cut from its key may pass.) Use a *Writer;
// it is safe for concurrent use.
type Writer struct {
	W     io.Writer
	Known *Known
	// MaxLine bounds the incomplete line held back (DefaultMaxLine).
	MaxLine int

	mu      sync.Mutex
	pending []byte
}

// Write scrubs and writes what p completes; it reports len(p) unless W
// fails.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	vals := w.Known.Values()
	if len(vals) == 0 && len(w.pending) == 0 {
		if _, err := w.W.Write(p); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	w.pending = append(w.pending, p...)
	// A line ends at '\n', or '\r' (a progress line redrawn in place).
	cut := bytes.LastIndexAny(w.pending, "\n\r") + 1
	maxLine := w.MaxLine
	if maxLine <= 0 {
		maxLine = DefaultMaxLine
	}
	switch {
	case len(w.pending)-cut > maxLine:
		cut = safeCut(w.pending, len(w.pending)-longest(vals, false)+1, vals)
	case cut > 0:
		// A value holding a line end could straddle the line's end.
		if n := longest(vals, true); n > 0 {
			cut = safeCut(w.pending, min(cut, len(w.pending)-n+1), vals)
		}
	}
	if cut <= 0 {
		return len(p), nil
	}
	if err := w.emit(w.pending[:cut], vals); err != nil {
		return 0, err
	}
	w.pending = append(w.pending[:0], w.pending[cut:]...)
	return len(p), nil
}

// Flush writes what is held back, scrubbed (the end of a stage, a
// command's output).
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.pending) == 0 {
		return nil
	}
	err := w.emit(w.pending, w.Known.Values())
	w.pending = w.pending[:0]
	return err
}

// Close flushes; it does not close W.
func (w *Writer) Close() error { return w.Flush() }

func (w *Writer) emit(b []byte, vals []string) error {
	if len(vals) == 0 {
		_, err := w.W.Write(b)
		return err
	}
	_, err := io.WriteString(w.W, Scrub(string(b), vals))
	return err
}

// longest is the length of the longest value (at least 1), or with eol
// of the longest holding '\n' or '\r' (0 when none does).
func longest(vals []string, eol bool) int {
	n := 1
	if eol {
		n = 0
	}
	for _, v := range vals {
		if !eol || strings.ContainsAny(v, "\n\r") {
			n = max(n, len(v))
		}
	}
	return n
}

// safeCut moves cut back until no occurrence of a value in b straddles it.
func safeCut(b []byte, cut int, vals []string) int {
	for moved := true; moved && cut > 0; {
		moved = false
		for _, v := range vals {
			if v == "" {
				continue
			}
			lo := max(cut-len(v)+1, 0)
			hi := min(cut+len(v)-1, len(b))
			for i := lo; i < cut && i+len(v) <= hi; i++ {
				if bytes.HasPrefix(b[i:], []byte(v)) {
					cut, moved = i, true
					break
				}
			}
		}
	}
	return max(cut, 0)
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
