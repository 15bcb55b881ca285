package smartos

import (
	"bufio"
	"encoding/base64"
	"fmt"
	"hash/crc32"
	"io"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/cloudroot/cloudroot/pkg/datasource/internal/serial/serialtest"
)

// fake is a stand-in for the SmartOS metadata server, written apart from
// the package's own frame code: it answers a bare newline with "invalid
// command", "NEGOTIATE V2" with "V2_OK", and V2 GET/KEYS/PUT/DELETE
// requests from its values.
type fake struct {
	mu     sync.Mutex
	values map[string]string
	reqs   []string
	// hook, when not nil, sees each V2 request first (op, decoded
	// argument, request id) and returns the lines to send instead of the
	// normal answer (handled true; no lines: silence).
	hook func(op, arg, id string) (lines []string, handled bool)
	// onLine, when not nil, sees each non-V2 line first and returns the
	// lines to send instead (handled true).
	onLine func(line string) (lines []string, handled bool)
}

func newFake(values map[string]string) *fake {
	if values == nil {
		values = map[string]string{}
	}
	return &fake{values: values}
}

// requests returns what the fake was asked: "FLUSH", "NEGOTIATE", "GET key",
// "KEYS", "PUT key", "DELETE key", "BAD ...".
func (f *fake) requests() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.reqs...)
}

func (f *fake) record(s string) {
	f.mu.Lock()
	f.reqs = append(f.reqs, s)
	f.mu.Unlock()
}

// reply is a V2 reply frame built by hand.
func reply(id, status string, payload []byte) string {
	body := id + " " + status
	if len(payload) > 0 {
		body += " " + base64.StdEncoding.EncodeToString(payload)
	}
	return fmt.Sprintf("V2 %d %08x %s", len(body), crc32.ChecksumIEEE([]byte(body)), body)
}

// serve answers rw until it fails or closes.
func (f *fake) serve(rw io.ReadWriter) {
	r := bufio.NewReader(rw)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		line = strings.TrimSuffix(line, "\n")
		var out []string
		if strings.HasPrefix(line, "V2 ") {
			out = f.answer(line)
		} else {
			handled := false
			if f.onLine != nil {
				out, handled = f.onLine(line)
			}
			if !handled {
				switch line {
				case "":
					f.record("FLUSH")
					out = []string{"invalid command"}
				case "NEGOTIATE V2":
					f.record("NEGOTIATE")
					out = []string{"V2_OK"}
				default:
					f.record("BAD " + line)
					out = []string{"invalid command"}
				}
			}
		}
		// One write for all lines: net.Pipe has no buffer, a serial line
		// and a socket do.
		var b strings.Builder
		for _, l := range out {
			b.WriteString(l + "\n")
		}
		if b.Len() > 0 {
			if _, err := io.WriteString(rw, b.String()); err != nil {
				return
			}
		}
	}
}

func (f *fake) answer(line string) []string {
	parts := strings.SplitN(line, " ", 4)
	if len(parts) != 4 {
		f.record("BAD " + line)
		return []string{"invalid command"}
	}
	n, _ := strconv.Atoi(parts[1])
	body := parts[3]
	if n != len(body) || parts[2] != fmt.Sprintf("%08x", crc32.ChecksumIEEE([]byte(body))) {
		f.record("BAD " + line)
		return []string{"invalid command"}
	}
	fields := strings.SplitN(body, " ", 3)
	id, op := fields[0], fields[1]
	var arg string
	if len(fields) == 3 {
		b, err := base64.StdEncoding.DecodeString(fields[2])
		if err != nil {
			f.record("BAD " + line)
			return []string{"invalid command"}
		}
		arg = string(b)
	}
	if op == "KEYS" {
		f.record("KEYS")
	} else {
		f.record(op + " " + arg)
	}
	if f.hook != nil {
		if out, ok := f.hook(op, arg, id); ok {
			return out
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	switch op {
	case "GET":
		v, ok := f.values[arg]
		if !ok {
			return []string{reply(id, "NOTFOUND", nil)}
		}
		return []string{reply(id, "SUCCESS", []byte(v))}
	case "KEYS":
		keys := make([]string, 0, len(f.values))
		for k := range f.values {
			if !strings.HasPrefix(k, "sdc:") {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		return []string{reply(id, "SUCCESS", []byte(strings.Join(keys, "\n")))}
	case "PUT":
		kv := strings.SplitN(arg, " ", 2)
		k, err1 := base64.StdEncoding.DecodeString(kv[0])
		var v []byte
		var err2 error
		if len(kv) == 2 {
			v, err2 = base64.StdEncoding.DecodeString(kv[1])
		}
		if len(kv) != 2 || err1 != nil || err2 != nil {
			return []string{reply(id, "FAILURE", nil)}
		}
		f.values[string(k)] = string(v)
		return []string{reply(id, "SUCCESS", nil)}
	case "DELETE":
		if _, ok := f.values[arg]; !ok {
			return []string{reply(id, "NOTFOUND", nil)}
		}
		delete(f.values, arg)
		return []string{reply(id, "SUCCESS", nil)}
	}
	return []string{reply(id, "FAILURE", nil)}
}

// servePTY serves f on a pseudo-terminal and returns the path of the
// device standing for the serial port.
func servePTY(t *testing.T, f *fake) string {
	t.Helper()
	return serialtest.ServePTY(t, f.serve)
}

// serveSocket serves f on a unix socket in a short temporary directory
// (socket paths are limited to about 100 bytes).
func serveSocket(t *testing.T, f *fake) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "smartos")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "metadata.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				f.serve(c)
			}()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return sock
}
