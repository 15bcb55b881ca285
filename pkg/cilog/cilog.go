// Package cilog writes /var/log/cloud-init.log as cloud-init 26.x does, so
// that cloud-init's own `analyze` and every log tool built for cloud-init
// read a cloudroot boot.
//
// The line format is cloud-init's arg0Formatter (config/cloud.cfg.d/
// 05_logging.cfg): "%(asctime)s - %(filename)s[%(levelname)s]: %(message)s",
// asctime being "YYYY-MM-DD HH:MM:SS,mmm" in local time. cloudroot has no
// Python files, so the "filename" is a stable name per component chosen the
// way cloud-init would name it: a record with a LoggerKey attribute uses its
// value, one with a "module" attribute is "cc_<module>.py", one with a "url"
// (a metadata or user-data fetch) "url_helper.py", one with a "datasource"
// short name "DataSource<name>.py", anything else the handler's default. slog attributes follow the message as key=value pairs.
//
// The reporting events (cloudinit/reporting: "start: NAME: DESC" and
// "finish: NAME: RESULT: DESC (duration: N.NNNs)", logged by handlers.py at
// DEBUG) are written by Event; see events.go.
package cilog

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"
)

// LoggerKey is the attribute naming the "file" a line is attributed to
// (for example "url_helper.py"). It is never printed as an attribute.
const LoggerKey = "logger"

// DefaultLogger is the file name used when a record names none.
const DefaultLogger = "main.py"

// TimeLayout is Python logging's default asctime with milliseconds after a comma.
const TimeLayout = "2006-01-02 15:04:05,000"

// eventKey marks a reporting event: its line carries no attributes, so that
// analyze reads the description exactly as cloud-init words it.
const eventKey = "cilog.event"

// Options configure a Handler; the zero value logs DEBUG and above,
// attributing unnamed records to DefaultLogger.
type Options struct {
	Level slog.Leveler
	// Logger is the file name for records without LoggerKey or "module".
	Logger string
	// Now, when set, stamps lines instead of the record's time (tests).
	Now func() time.Time
}

// Handler is a slog.Handler writing cloud-init's log lines.
type Handler struct {
	w      io.Writer
	mu     *sync.Mutex
	level  slog.Leveler
	logger string
	now    func() time.Time
	attrs  []slog.Attr // from WithAttrs, already prefixed by groups
	group  string
}

var _ slog.Handler = (*Handler)(nil)

// NewHandler returns a handler writing to w.
func NewHandler(w io.Writer, o Options) *Handler {
	h := &Handler{w: w, mu: &sync.Mutex{}, level: o.Level, logger: o.Logger, now: o.Now}
	if h.level == nil {
		h.level = slog.LevelDebug
	}
	if h.logger == "" {
		h.logger = DefaultLogger
	}
	return h
}

// Enabled reports whether l is at or above the handler's level.
func (h *Handler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level.Level() }

// WithAttrs returns a handler adding as to every record.
func (h *Handler) WithAttrs(as []slog.Attr) slog.Handler {
	c := *h
	c.attrs = append([]slog.Attr(nil), h.attrs...)
	for _, a := range as {
		c.attrs = append(c.attrs, h.prefixed(a))
	}
	return &c
}

// WithGroup returns a handler qualifying later attribute keys with name.
func (h *Handler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	c := *h
	c.group = h.group + name + "."
	return &c
}

func (h *Handler) prefixed(a slog.Attr) slog.Attr {
	if h.group != "" && a.Key != LoggerKey && a.Key != eventKey {
		a.Key = h.group + a.Key
	}
	return a
}

// LevelDeprecated is cloud-init's DEPRECATED level (cloudinit/log/
// loggers.py: 35, between WARNING and ERROR), at which lifecycle.deprecate
// logs; status.json lists such lines under recoverable_errors' DEPRECATED.
const LevelDeprecated = slog.LevelWarn + 2

// LevelName is Python logging's name for l (cloud-init's DEPRECATED
// included).
func LevelName(l slog.Level) string {
	switch {
	case l >= slog.LevelError:
		return "ERROR"
	case l >= LevelDeprecated:
		return "DEPRECATED"
	case l >= slog.LevelWarn:
		return "WARNING"
	case l >= slog.LevelInfo:
		return "INFO"
	default:
		return "DEBUG"
	}
}

// ModuleLogger is the file name cloud-init logs a module's lines under.
func ModuleLogger(module string) string { return "cc_" + module + ".py" }

// Handle writes one line.
func (h *Handler) Handle(_ context.Context, r slog.Record) error {
	attrs := append([]slog.Attr(nil), h.attrs...)
	r.Attrs(func(a slog.Attr) bool {
		attrs = append(attrs, h.prefixed(a))
		return true
	})
	var (
		file, module, ds string
		url, event       bool
	)
	for _, a := range attrs {
		switch a.Key {
		case LoggerKey:
			file = a.Value.String()
		case "module":
			module = a.Value.String()
		case "url":
			url = true
		case "datasource":
			ds = a.Value.String()
		case eventKey:
			event = true
		}
	}
	if file == "" {
		switch {
		case module != "":
			file = ModuleLogger(module)
		case url:
			file = "url_helper.py"
		case isIdent(ds):
			file = "DataSource" + ds + ".py"
		default:
			file = h.logger
		}
	}
	t := r.Time
	if h.now != nil {
		t = h.now()
	}
	if t.IsZero() {
		t = time.Now()
	}
	var b bytes.Buffer
	b.WriteString(t.Format(TimeLayout))
	b.WriteString(" - ")
	b.WriteString(file)
	b.WriteByte('[')
	b.WriteString(LevelName(r.Level))
	b.WriteString("]: ")
	b.WriteString(r.Message)
	if !event {
		for i, a := range attrs {
			if a.Key == LoggerKey || a.Key == eventKey || repeated(attrs[:i], a) {
				continue
			}
			writeAttr(&b, "", a)
		}
	}
	b.WriteByte('\n')
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := h.w.Write(b.Bytes())
	return err
}

func writeAttr(b *bytes.Buffer, prefix string, a slog.Attr) {
	a.Value = a.Value.Resolve()
	if a.Equal(slog.Attr{}) {
		return
	}
	if a.Value.Kind() == slog.KindGroup {
		for _, g := range a.Value.Group() {
			writeAttr(b, prefix+a.Key+".", g)
		}
		return
	}
	b.WriteByte(' ')
	b.WriteString(prefix + a.Key)
	b.WriteByte('=')
	var s string
	switch a.Value.Kind() {
	case slog.KindFloat64:
		s = strconv.FormatFloat(a.Value.Float64(), 'f', -1, 64)
	case slog.KindAny:
		if err, ok := a.Value.Any().(error); ok {
			s = err.Error()
		} else {
			s = fmt.Sprint(a.Value.Any())
		}
	default:
		s = a.Value.String()
	}
	if s == "" || strings.ContainsAny(s, " \t\n\"=") {
		s = strconv.Quote(s)
	}
	b.WriteString(s)
}

// isIdent reports whether s is a datasource's short name ("NoCloud"), not
// a description ("DataSourceNoCloud [seed=...]").
func isIdent(s string) bool {
	if s == "" || strings.HasPrefix(s, "DataSource") {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

// repeated reports whether a (a module's logger attribute given again on
// a record, say) is already among seen.
func repeated(seen []slog.Attr, a slog.Attr) bool {
	for _, s := range seen {
		if s.Equal(a) {
			return true
		}
	}
	return false
}
