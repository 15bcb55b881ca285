package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"

	"github.com/cloudroot/cloudroot/pkg/cilog"
)

// consoleHandler prints one short line per record on the console:
// "cloudroot-init[  1.234]: message key=value ...", with the time since
// boot (CLOCK_BOOTTIME) so console logs line up with the kernel's.
type consoleHandler struct {
	mu     *sync.Mutex
	w      io.Writer
	level  slog.Level
	uptime func() float64
	attrs  []slog.Attr
}

func newConsoleHandler(w io.Writer, level slog.Level, uptime func() float64) *consoleHandler {
	return &consoleHandler{mu: &sync.Mutex{}, w: w, level: level, uptime: uptime}
}

func (h *consoleHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level }

func (h *consoleHandler) Handle(_ context.Context, r slog.Record) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "cloudroot-init[%8.3f]: ", h.uptime())
	switch {
	case r.Level == cilog.LevelDeprecated:
		b.WriteString("DEPRECATED: ")
	case r.Level >= slog.LevelWarn:
		b.WriteString(strings.ToUpper(r.Level.String()) + ": ")
	}
	b.WriteString(r.Message)
	var seen []slog.Attr
	write := func(a slog.Attr) bool {
		if a.Key == "" || slices.ContainsFunc(seen, a.Equal) {
			return true // a module's logger names it; a line may repeat it
		}
		seen = append(seen, a)
		v := a.Value.Resolve().String()
		if strings.ContainsAny(v, " \t\"") {
			v = fmt.Sprintf("%q", v)
		}
		fmt.Fprintf(&b, " %s=%s", a.Key, v)
		return true
	}
	for _, a := range h.attrs {
		write(a)
	}
	r.Attrs(write)
	b.WriteByte('\n')
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := h.w.Write(b.Bytes())
	return err
}

func (h *consoleHandler) WithAttrs(as []slog.Attr) slog.Handler {
	n := *h
	n.attrs = append(append([]slog.Attr{}, h.attrs...), as...)
	return &n
}

func (h *consoleHandler) WithGroup(string) slog.Handler { return h }

// lockedBuffer is a bytes.Buffer safe for concurrent writers.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) Bytes() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]byte(nil), l.b.Bytes()...)
}
