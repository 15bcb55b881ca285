// Package smartostest is a fake SmartOS metadata server for tests: it
// speaks the Joyent metadata protocol V2 (eng.joyent.com/mdata/protocol.html)
// as a SmartOS host does on a KVM guest's second serial port or on an LX
// zone's metadata socket, answering from a key/value map.
//
// Contract:
//   - A bare newline (the client's serial flush) is answered "invalid
//     command", "NEGOTIATE V2" is answered "V2_OK", any other line that is
//     not a V2 frame "invalid command".
//   - A V2 request "V2 <len> <crc32> <id> <op> [base64(arg)]" whose length
//     or CRC-32 (IEEE, 8 lowercase hex digits) does not match its body, or
//     whose argument is not base64, is answered "invalid command".
//   - GET answers SUCCESS with the value, or NOTFOUND; KEYS answers the
//     keys not starting with "sdc:", sorted, one per line; PUT (argument
//     "base64(key) base64(value)") sets a key, DELETE removes one (NOTFOUND
//     when absent); other operations answer FAILURE. Replies carry the
//     request's id: "V2 <len> <crc32> <id> <status> [base64(payload)]".
//   - Every request is recorded (Requests), values never are.
//   - Written apart from package smartos's client code, so that a mistake
//     in one does not hide the same mistake in the other.
package smartostest

import (
	"bufio"
	"encoding/base64"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"maps"
	"net"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// Server answers metadata requests from its values. Set Hook and OnLine
// before serving; the methods are safe for concurrent use.
type Server struct {
	// Hook, when not nil, sees each V2 request first (op, decoded
	// argument, request id) and returns the lines to send instead of the
	// normal answer (handled true; no lines: silence).
	Hook func(op, arg, id string) (lines []string, handled bool)
	// OnLine, when not nil, sees each line that is not a V2 frame first
	// (without its newline) and returns the lines to send instead
	// (handled true; no lines: silence).
	OnLine func(line string) (lines []string, handled bool)

	mu     sync.Mutex
	values map[string]string
	reqs   []string
}

// New returns a server answering from values, which it uses as is: PUT and
// DELETE change the map. nil is an empty map.
func New(values map[string]string) *Server {
	if values == nil {
		values = map[string]string{}
	}
	return &Server{values: values}
}

// Requests returns what the server was asked, in order: "FLUSH" (a bare
// newline), "NEGOTIATE", "GET <key>", "KEYS", "PUT <base64 key> <base64
// value>", "DELETE <key>", "<OP> <arg>" for other operations and
// "BAD <line>" for what it could not parse.
func (s *Server) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.reqs...)
}

// Values returns a copy of the current values.
func (s *Server) Values() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.values)
}

// Set sets key to value, as a PUT does (a test changing the metadata
// between two boots).
func (s *Server) Set(key, value string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.values[key] = value
}

func (s *Server) record(r string) {
	s.mu.Lock()
	s.reqs = append(s.reqs, r)
	s.mu.Unlock()
}

// Frame returns a V2 frame (without its newline) around body:
// "V2 <len(body)> <crc32(body)> <body>".
func Frame(body string) string {
	return fmt.Sprintf("V2 %d %08x %s", len(body), crc32.ChecksumIEEE([]byte(body)), body)
}

// Reply returns the V2 reply frame (without its newline) to request id
// with status ("SUCCESS", "NOTFOUND", "FAILURE") and payload, sent
// base64-encoded when not empty.
func Reply(id, status string, payload []byte) string {
	body := id + " " + status
	if len(payload) > 0 {
		body += " " + base64.StdEncoding.EncodeToString(payload)
	}
	return Frame(body)
}

// Serve answers requests read from rw until reading or writing fails; it
// returns nil when either end closed the connection, else the error.
func (s *Server) Serve(rw io.ReadWriter) error {
	r := bufio.NewReader(rw)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			if closed(err) {
				return nil
			}
			return fmt.Errorf("smartostest: reading a request: %w", err)
		}
		out := s.Answer(strings.TrimSuffix(line, "\n"))
		// One write for all lines: net.Pipe has no buffer, a serial
		// line and a socket do.
		var b strings.Builder
		for _, l := range out {
			b.WriteString(l + "\n")
		}
		if b.Len() == 0 {
			continue
		}
		if _, err := io.WriteString(rw, b.String()); err != nil {
			if closed(err) {
				return nil
			}
			return fmt.Errorf("smartostest: writing an answer: %w", err)
		}
	}
}

// closed reports whether err means that one end of the connection was
// closed: the end of a conversation, not a failure.
func closed(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrClosedPipe) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, os.ErrClosed) || errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET)
}

// Answer returns the lines (without newlines) that answer one request
// line (without its newline), recording the request.
func (s *Server) Answer(line string) []string {
	if strings.HasPrefix(line, "V2 ") {
		return s.answerV2(line)
	}
	if s.OnLine != nil {
		if out, ok := s.OnLine(line); ok {
			return out
		}
	}
	switch line {
	case "":
		s.record("FLUSH")
	case "NEGOTIATE V2":
		s.record("NEGOTIATE")
		return []string{"V2_OK"}
	default:
		s.record("BAD " + line)
	}
	return []string{"invalid command"}
}

func (s *Server) answerV2(line string) []string {
	bad := func() []string {
		s.record("BAD " + line)
		return []string{"invalid command"}
	}
	parts := strings.SplitN(line, " ", 4)
	if len(parts) != 4 {
		return bad()
	}
	n, err := strconv.Atoi(parts[1])
	body := parts[3]
	if err != nil || n != len(body) || parts[2] != fmt.Sprintf("%08x", crc32.ChecksumIEEE([]byte(body))) {
		return bad()
	}
	fields := strings.SplitN(body, " ", 3)
	if len(fields) < 2 {
		return bad()
	}
	id, op := fields[0], fields[1]
	var arg string
	if len(fields) == 3 {
		b, err := base64.StdEncoding.DecodeString(fields[2])
		if err != nil {
			return bad()
		}
		arg = string(b)
	}
	if op == "KEYS" {
		s.record("KEYS")
	} else {
		s.record(op + " " + arg)
	}
	if s.Hook != nil {
		if out, ok := s.Hook(op, arg, id); ok {
			return out
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch op {
	case "GET":
		v, ok := s.values[arg]
		if !ok {
			return []string{Reply(id, "NOTFOUND", nil)}
		}
		return []string{Reply(id, "SUCCESS", []byte(v))}
	case "KEYS":
		keys := make([]string, 0, len(s.values))
		for k := range s.values {
			if !strings.HasPrefix(k, "sdc:") {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		return []string{Reply(id, "SUCCESS", []byte(strings.Join(keys, "\n")))}
	case "PUT":
		kv := strings.SplitN(arg, " ", 2)
		if len(kv) != 2 {
			return []string{Reply(id, "FAILURE", nil)}
		}
		k, err1 := base64.StdEncoding.DecodeString(kv[0])
		v, err2 := base64.StdEncoding.DecodeString(kv[1])
		if err1 != nil || err2 != nil {
			return []string{Reply(id, "FAILURE", nil)}
		}
		s.values[string(k)] = string(v)
		return []string{Reply(id, "SUCCESS", nil)}
	case "DELETE":
		if _, ok := s.values[arg]; !ok {
			return []string{Reply(id, "NOTFOUND", nil)}
		}
		delete(s.values, arg)
		return []string{Reply(id, "SUCCESS", nil)}
	}
	return []string{Reply(id, "FAILURE", nil)}
}

// Listener serves a Server on a unix socket, each connection in its own
// goroutine.
type Listener struct {
	l    net.Listener
	path string

	wg     sync.WaitGroup
	mu     sync.Mutex
	conns  map[net.Conn]bool
	closed bool
	errs   []error
}

// Listen creates the unix socket path (which must not exist; socket paths
// are limited to about 100 bytes) and serves s on every connection to it
// until Close. QEMU's `-chardev socket,path=<path>,server=off` connects to
// it as a serial port's host side.
func (s *Server) Listen(path string) (*Listener, error) {
	l, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("smartostest: %w", err)
	}
	ln := &Listener{l: l, path: path, conns: map[net.Conn]bool{}}
	ln.wg.Add(1)
	go func() {
		defer ln.wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			ln.mu.Lock()
			if ln.closed {
				ln.mu.Unlock()
				c.Close()
				return
			}
			ln.conns[c] = true
			ln.wg.Add(1)
			ln.mu.Unlock()
			go func() {
				defer ln.wg.Done()
				err := s.Serve(c)
				c.Close()
				ln.mu.Lock()
				delete(ln.conns, c)
				if err != nil && !ln.closed {
					ln.errs = append(ln.errs, err)
				}
				ln.mu.Unlock()
			}()
		}
	}()
	return ln, nil
}

// Path is the socket's path.
func (l *Listener) Path() string { return l.path }

// Close stops accepting, closes the open connections, waits for their
// goroutines and removes the socket. It returns the errors connections
// ended with before Close (a client closing its end is none).
func (l *Listener) Close() error {
	l.mu.Lock()
	l.closed = true
	err := l.l.Close()
	for c := range l.conns {
		c.Close()
	}
	l.mu.Unlock()
	l.wg.Wait()
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return errors.Join(append([]error{err}, l.errs...)...)
}
