package cloudsigma

import (
	"fmt"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// servePTY serves a fake server context on the master side of a new
// pseudo-terminal and returns the path of its slave side, which stands for
// the serial port. Each request read ("<\n...\n>") is passed to answer,
// whose reply is written as is; requests collects them.
func servePTY(t *testing.T, answer func(req string) []byte) (dev string, requests func() []string) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	rc, err := m.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var n uint32
	var perr error
	rc.Control(func(fd uintptr) {
		if n, perr = unix.IoctlGetUint32(int(fd), unix.TIOCGPTN); perr == nil {
			perr = unix.IoctlSetPointerInt(int(fd), unix.TIOCSPTLCK, 0)
		}
	})
	if perr != nil {
		m.Close()
		t.Skipf("cannot unlock a pseudo-terminal: %v", perr)
	}
	reqs := make(chan string, 16)
	done := make(chan struct{})
	go func() {
		defer close(done)
		serve(m, answer, reqs)
	}()
	t.Cleanup(func() {
		m.Close()
		<-done
	})
	return fmt.Sprintf("/dev/pts/%d", n), func() []string {
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
