package secret

import (
	"io"
	"sync"
)

// Writer scrubs every Write to W of the values Set gave it, for a log or
// console stream whose secrets become known part way (once the merged
// config is read). A value split across two Writes is not caught: slog
// handlers write one record per Write, which is what Writer is for.
type Writer struct {
	W io.Writer

	mu     sync.RWMutex
	values []string
}

// Set replaces the values scrubbed from later writes.
func (w *Writer) Set(values []string) {
	w.mu.Lock()
	w.values = values
	w.mu.Unlock()
}

// Write writes p with the values replaced; it reports len(p) on success.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.RLock()
	vals := w.values
	w.mu.RUnlock()
	if len(vals) == 0 {
		return w.W.Write(p)
	}
	if _, err := io.WriteString(w.W, Scrub(string(p), vals)); err != nil {
		return 0, err
	}
	return len(p), nil
}
