package serialtest

import (
	"fmt"
	"io"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// ServePTY runs serve on the master side of a new pseudo-terminal and
// returns the path of its slave side, which stands for the serial port.
// serve should return once the master fails (it is closed when the test
// ends, and ServePTY's cleanup waits for serve). Without pseudo-terminals
// the test is skipped.
func ServePTY(t testing.TB, serve func(master io.ReadWriter)) string {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	rc, err := m.SyscallConn()
	if err != nil {
		m.Close()
		t.Fatal(err)
	}
	var n uint32
	var perr error
	if err := rc.Control(func(fd uintptr) {
		if n, perr = unix.IoctlGetUint32(int(fd), unix.TIOCGPTN); perr == nil {
			perr = unix.IoctlSetPointerInt(int(fd), unix.TIOCSPTLCK, 0)
		}
	}); err != nil {
		perr = err
	}
	if perr != nil {
		m.Close()
		t.Skipf("cannot unlock a pseudo-terminal: %v", perr)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		serve(m)
	}()
	t.Cleanup(func() {
		m.Close()
		<-done
	})
	return fmt.Sprintf("/dev/pts/%d", n)
}
