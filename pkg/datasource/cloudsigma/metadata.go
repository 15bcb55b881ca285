package cloudsigma

// Cepko: one request, one reply line, over the serial port.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/cloudroot/cloudroot/pkg/datasource"
)

// Conn is what Query talks over: the serial port opened non-blocking
// (*os.File), or a fake.
type Conn interface {
	io.ReadWriter
	SetReadDeadline(t time.Time) error
	SetWriteDeadline(t time.Time) error
}

// MaxReply bounds a reply.
const MaxReply = datasource.MaxFileSize

// Request is Cepko's request for key: "<\n" key "\n>". The empty key asks
// for the whole server context; "/meta/" for the meta mapping.
func Request(key string) string { return "<\n" + key + "\n>" }

// past is a deadline that has passed: it interrupts a blocked read or write.
var past = time.Unix(1, 0)

// Query sends the request for key and returns the reply line: newlines and
// EOT bytes before it are skipped, and it ends at the first newline or EOT
// after them. Writing is bounded by WriteTimeout, reading by ReadTimeout,
// both by ctx.
func Query(ctx context.Context, conn Conn, key string) ([]byte, error) {
	return query(ctx, conn, key, MaxReply)
}

func query(ctx context.Context, conn Conn, key string, limit int) ([]byte, error) {
	stop := context.AfterFunc(ctx, func() {
		conn.SetReadDeadline(past)
		conn.SetWriteDeadline(past)
	})
	defer stop()
	dl, ctxBound := deadline(ctx, WriteTimeout)
	if err := conn.SetWriteDeadline(dl); err != nil {
		return nil, fmt.Errorf("setting a write deadline: %w", err)
	}
	if _, err := io.WriteString(conn, Request(key)); err != nil {
		return nil, fmt.Errorf("sending the request: %w", why(ctx, ctxBound, err))
	}
	dl, ctxBound = deadline(ctx, ReadTimeout)
	if err := conn.SetReadDeadline(dl); err != nil {
		return nil, fmt.Errorf("setting a read deadline: %w", err)
	}
	r := bufio.NewReader(conn)
	var out []byte
	for {
		c, err := r.ReadByte()
		if err != nil {
			return nil, fmt.Errorf("reading the reply (%d bytes so far): %w", len(out), why(ctx, ctxBound, err))
		}
		if c == '\n' || c == 0x04 {
			if len(out) == 0 {
				continue
			}
			return out, nil
		}
		if len(out) >= limit {
			return nil, fmt.Errorf("reply longer than %d bytes", limit)
		}
		out = append(out, c)
	}
}

// deadline is now+timeout, or the context's deadline when that is not
// later (then ctxBound is true).
func deadline(ctx context.Context, timeout time.Duration) (time.Time, bool) {
	dl := time.Now().Add(timeout)
	if d, ok := ctx.Deadline(); ok && !d.After(dl) {
		return d, true
	}
	return dl, false
}

// why is the error of a read or write: the context's end when it ended
// (or its deadline was the one reached), else err.
func why(ctx context.Context, ctxBound bool, err error) error {
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		if ctxBound {
			return context.DeadlineExceeded
		}
		return fmt.Errorf("no answer in time: %w", err)
	}
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}
