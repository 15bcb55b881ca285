package smartos

// The Joyent metadata protocol, version 2 (eng.joyent.com/mdata/protocol.html),
// over one connection: a serial port or the zone's unix socket.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"strings"
	"time"

	"github.com/cloudroot/cloudroot/pkg/datasource"
)

// Conn is what a Client talks over: a serial port opened non-blocking
// (*os.File) or a unix socket (net.Conn).
type Conn interface {
	io.ReadWriter
	SetReadDeadline(t time.Time) error
	SetWriteDeadline(t time.Time) error
}

// MaxLine bounds one reply line: a value of datasource.MaxFileSize bytes,
// base64-encoded, plus the frame.
const MaxLine = datasource.MaxFileSize/3*4 + 1024

// Timeouts of the serial flush, as cloud-init's: pending input is drained
// until nothing comes for DrainTimeout, then a bare newline is sent until
// the server answers "invalid command", waiting at most FlushTimeout (or
// the client's Timeout when shorter) for each answer.
const (
	DrainTimeout = 100 * time.Millisecond
	FlushTimeout = 5 * time.Second
)

// maxSkipped bounds the lines a request skips that are not V2 frames.
const maxSkipped = 32

// Client speaks protocol V2 over one Conn. Methods are not safe for
// concurrent use; every read is bounded by the context and Timeout.
type Client struct {
	conn Conn
	r    *bufio.Reader
	// Where names the connection in errors ("/dev/ttyS1").
	Where string
	// Timeout bounds the wait for each reply line (cloud-init's
	// serial_timeout); 0 means only the context bounds it.
	Timeout time.Duration
	// NewID returns request ids; nil means random ones.
	NewID func() uint32
	// Log receives progress; nil discards. Values are never logged.
	Log *slog.Logger

	maxLine int // 0 means MaxLine
}

// NewClient returns a client on conn; where names it in errors.
func NewClient(conn Conn, where string) *Client {
	return &Client{conn: conn, r: bufio.NewReaderSize(conn, 64<<10), Where: where}
}

func (c *Client) log() *slog.Logger {
	if c.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return c.Log
}

// errTimeout marks a read that found no complete line before its own
// timeout (the context still has time).
var errTimeout = errors.New("no answer in time")

// deadline is now+timeout, or the context's deadline when that is not
// later (then ctxBound is true: reaching it is the context's end).
func deadline(ctx context.Context, timeout time.Duration) (dl time.Time, ctxBound bool) {
	if timeout > 0 {
		dl = time.Now().Add(timeout)
	}
	if d, ok := ctx.Deadline(); ok && (dl.IsZero() || !d.After(dl)) {
		return d, true
	}
	return dl, false
}

// ctxErr is why ctx ended, or DeadlineExceeded when its deadline passed
// but its timer has not fired yet.
func ctxErr(ctx context.Context) error {
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	return context.DeadlineExceeded
}

// past is a deadline that has passed: it interrupts a blocked read or write.
var past = time.Unix(1, 0)

// readLine reads one line (without its newline). A partial line before a
// timeout is dropped, as cloud-init's readline does.
func (c *Client) readLine(ctx context.Context, timeout time.Duration) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("waiting for an answer: %w", context.Cause(ctx))
	}
	dl, ctxBound := deadline(ctx, timeout)
	// A whole line already read ahead needs no deadline (and a peer that
	// closed after sending it must not fail the deadline call).
	if buffered, err := c.r.Peek(c.r.Buffered()); err == nil && bytes.IndexByte(buffered, '\n') >= 0 {
		line, err := c.r.ReadSlice('\n')
		if err != nil {
			return "", fmt.Errorf("reading: %w", err)
		}
		return string(line[:len(line)-1]), nil
	}
	if err := c.conn.SetReadDeadline(dl); err != nil {
		return "", fmt.Errorf("setting a read deadline: %w", err)
	}
	stop := context.AfterFunc(ctx, func() { c.conn.SetReadDeadline(past) })
	defer stop()
	limit := c.maxLine
	if limit <= 0 {
		limit = MaxLine
	}
	var line []byte
	for {
		frag, err := c.r.ReadSlice('\n')
		if len(line)+len(frag) > limit {
			return "", fmt.Errorf("answer longer than %d bytes", limit)
		}
		line = append(line, frag...)
		timedOut := errors.Is(err, os.ErrDeadlineExceeded)
		switch {
		case err == nil:
			return string(line[:len(line)-1]), nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case ctx.Err() != nil || timedOut && ctxBound:
			return "", fmt.Errorf("waiting for an answer (%d bytes so far): %w", len(line), ctxErr(ctx))
		case timedOut:
			return "", fmt.Errorf("%w (%d bytes so far)", errTimeout, len(line))
		case errors.Is(err, io.EOF):
			return "", fmt.Errorf("connection closed (%d bytes so far): %w", len(line), io.ErrUnexpectedEOF)
		}
		return "", fmt.Errorf("reading: %w", err)
	}
}

func (c *Client) write(ctx context.Context, s string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("writing: %w", context.Cause(ctx))
	}
	dl, ctxBound := deadline(ctx, c.Timeout)
	if err := c.conn.SetWriteDeadline(dl); err != nil {
		return fmt.Errorf("setting a write deadline: %w", err)
	}
	stop := context.AfterFunc(ctx, func() { c.conn.SetWriteDeadline(past) })
	defer stop()
	if _, err := io.WriteString(c.conn, s); err != nil {
		if ctx.Err() != nil || ctxBound && errors.Is(err, os.ErrDeadlineExceeded) {
			return fmt.Errorf("writing: %w", ctxErr(ctx))
		}
		return fmt.Errorf("writing: %w", err)
	}
	return nil
}

// Flush readies a serial line as cloud-init does before negotiating:
// input already pending is read and dropped, then a bare newline is sent
// until the server answers "invalid command" ("FAILURE" and other answers
// are retried, so are silences). It gives up only when ctx ends.
func (c *Client) Flush(ctx context.Context) error {
	for n := 0; ; n++ {
		_, err := c.readLine(ctx, DrainTimeout)
		if errors.Is(err, errTimeout) {
			if n > 0 {
				c.log().Debug("dropped pending input", "device", c.Where, "lines", n)
			}
			break
		}
		if err != nil {
			return fmt.Errorf("%s: flushing: %w", c.Where, err)
		}
	}
	wait := FlushTimeout
	if c.Timeout > 0 && c.Timeout < wait {
		wait = c.Timeout
	}
	for attempt := 1; ; attempt++ {
		if err := c.write(ctx, "\n"); err != nil {
			return fmt.Errorf("%s: flushing: %w", c.Where, err)
		}
		line, err := c.readLine(ctx, wait)
		switch {
		case err == nil && line == "invalid command":
			return nil
		case err == nil && line == "FAILURE":
			continue
		case err == nil:
			c.log().Warn("unexpected answer while flushing", "device", c.Where, "attempt", attempt, "bytes", len(line))
		case errors.Is(err, errTimeout):
			c.log().Warn("no answer while flushing; is the host metadata service running?", "device", c.Where, "attempt", attempt)
		default:
			return fmt.Errorf("%s: flushing (attempt %d): %w", c.Where, attempt, err)
		}
	}
}

// Negotiate asks for protocol V2 ("NEGOTIATE V2", answered "V2_OK"). Late
// answers to Flush's newlines are skipped.
func (c *Client) Negotiate(ctx context.Context) error {
	if err := c.write(ctx, "NEGOTIATE V2\n"); err != nil {
		return fmt.Errorf("%s: NEGOTIATE V2: %w", c.Where, err)
	}
	for skipped := 0; ; skipped++ {
		line, err := c.readLine(ctx, c.Timeout)
		if err != nil {
			return fmt.Errorf("%s: NEGOTIATE V2: %w", c.Where, err)
		}
		switch {
		case line == "V2_OK":
			return nil
		case (line == "invalid command" || line == "FAILURE") && skipped < maxSkipped:
			continue
		}
		return fmt.Errorf("%s: NEGOTIATE V2: %w: answered %q", c.Where, ErrProtocol, clip(line))
	}
}

// Request sends one request (op GET, KEYS, PUT, DELETE...; param is sent
// base64-encoded, none when empty) and returns its answer: the payload and
// true for SUCCESS, false for NOTFOUND. Lines that are not V2 frames are
// skipped; a frame with a bad length, checksum or payload, or answering
// another request id, is ErrProtocol; another status is an error.
func (c *Client) Request(ctx context.Context, op string, param []byte) ([]byte, bool, error) {
	var id uint32
	if c.NewID != nil {
		id = c.NewID()
	} else {
		id = rand.Uint32()
	}
	want := fmt.Sprintf("%08x", id)
	if err := c.write(ctx, FormatRequest(id, op, param)); err != nil {
		return nil, false, err
	}
	for skipped := 0; ; skipped++ {
		line, err := c.readLine(ctx, c.Timeout)
		if err != nil {
			return nil, false, err
		}
		r, err := ParseReply(line)
		if errors.Is(err, ErrNotFrame) && skipped < maxSkipped {
			c.log().Debug("skipped a line that is not a V2 frame", "device", c.Where, "bytes", len(line))
			continue
		}
		if err != nil {
			return nil, false, err
		}
		if r.RequestID != want {
			return nil, false, fmt.Errorf("%w: answer to request %s, expected %s", ErrProtocol, r.RequestID, want)
		}
		switch r.Status {
		case "SUCCESS":
			return r.Payload, true, nil
		case "NOTFOUND":
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("server answered %s", clip(r.Status))
	}
}

// Get reads key: its value and true, or false when the server has none.
func (c *Client) Get(ctx context.Context, key string) ([]byte, bool, error) {
	v, ok, err := c.Request(ctx, "GET", []byte(key))
	if err != nil {
		return nil, false, fmt.Errorf("%s: GET %s: %w", c.Where, key, err)
	}
	return v, ok, nil
}

// Keys lists the customer metadata keys (KEYS).
func (c *Client) Keys(ctx context.Context) ([]string, error) {
	v, _, err := c.Request(ctx, "KEYS", nil)
	if err != nil {
		return nil, fmt.Errorf("%s: KEYS: %w", c.Where, err)
	}
	if len(v) == 0 {
		return nil, nil
	}
	return strings.Split(string(v), "\n"), nil
}

// Put sets key to value (PUT; the payload is base64(key) SP base64(value)).
func (c *Client) Put(ctx context.Context, key string, value []byte) error {
	param := base64.StdEncoding.EncodeToString([]byte(key)) + " " + base64.StdEncoding.EncodeToString(value)
	_, ok, err := c.Request(ctx, "PUT", []byte(param))
	if err == nil && !ok {
		err = errors.New("server answered NOTFOUND")
	}
	if err != nil {
		return fmt.Errorf("%s: PUT %s: %w", c.Where, key, err)
	}
	return nil
}

// Delete removes key (DELETE).
func (c *Client) Delete(ctx context.Context, key string) error {
	_, ok, err := c.Request(ctx, "DELETE", []byte(key))
	if err == nil && !ok {
		err = errors.New("server answered NOTFOUND")
	}
	if err != nil {
		return fmt.Errorf("%s: DELETE %s: %w", c.Where, key, err)
	}
	return nil
}
