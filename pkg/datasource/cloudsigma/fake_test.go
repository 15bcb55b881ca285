package cloudsigma

import (
	"io"
	"testing"

	"github.com/cloudroot/cloudroot/pkg/datasource/internal/serial/serialtest"
)

// servePTY serves a fake server context on a pseudo-terminal and returns
// the path of the device standing for the serial port. Each request read
// ("<\n...\n>") is passed to answer, whose reply is written as is;
// requests collects them.
func servePTY(t *testing.T, answer func(req string) []byte) (dev string, requests func() []string) {
	t.Helper()
	reqs := make(chan string, 16)
	dev = serialtest.ServePTY(t, func(m io.ReadWriter) { serve(m, answer, reqs) })
	return dev, func() []string {
		var out []string
		for {
			select {
			case r := <-reqs:
				out = append(out, r)
			default:
				return out
			}
		}
	}
}

// serve reads requests from rw and writes answer's replies.
func serve(rw io.ReadWriter, answer func(req string) []byte, reqs chan<- string) {
	var buf []byte
	one := make([]byte, 1)
	for {
		if _, err := rw.Read(one); err != nil {
			return
		}
		buf = append(buf, one[0])
		if len(buf) < 4 || one[0] != '>' || buf[len(buf)-2] != '\n' {
			continue
		}
		req := string(buf)
		buf = nil
		select {
		case reqs <- req:
		default:
		}
		if b := answer(req); len(b) > 0 {
			if _, err := rw.Write(b); err != nil {
				return
			}
		}
	}
}
