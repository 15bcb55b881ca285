package smartos

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/cloudroot/cloudroot/pkg/datasource/internal/serial/serialtest"
	"github.com/cloudroot/cloudroot/pkg/datasource/smartos/smartostest"
)

// fake is the metadata server of package smartostest (written apart from
// this package's frame code) with the tests' hooks: it answers a bare
// newline with "invalid command", "NEGOTIATE V2" with "V2_OK", and V2
// GET/KEYS/PUT/DELETE requests from values.
type fake struct {
	srv *smartostest.Server
	// values is the server's map: PUT and DELETE change it.
	values map[string]string
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
	f := &fake{srv: smartostest.New(values), values: values}
	f.srv.Hook = func(op, arg, id string) ([]string, bool) {
		if f.hook == nil {
			return nil, false
		}
		return f.hook(op, arg, id)
	}
	f.srv.OnLine = func(line string) ([]string, bool) {
		if f.onLine == nil {
			return nil, false
		}
		return f.onLine(line)
	}
	return f
}

// requests returns what the fake was asked: "FLUSH", "NEGOTIATE", "GET key",
// "KEYS", "PUT ...", "DELETE key", "BAD ...".
func (f *fake) requests() []string { return f.srv.Requests() }

// reply is a V2 reply frame.
func reply(id, status string, payload []byte) string {
	return smartostest.Reply(id, status, payload)
}

// serve answers rw until it fails or closes.
func (f *fake) serve(rw io.ReadWriter) { _ = f.srv.Serve(rw) }

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
	l, err := f.srv.Listen(filepath.Join(dir, "metadata.sock"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := l.Close(); err != nil {
			t.Errorf("metadata socket: %v", err)
		}
	})
	return l.Path()
}
