package smartos

import (
	"fmt"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// servePTY serves f on the master side of a new pseudo-terminal and
// returns the path of its slave side, which stands for the serial port.
func servePTY(t *testing.T, f *fake) string {
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
	done := make(chan struct{})
	go func() {
		defer close(done)
		f.serve(m)
	}()
	t.Cleanup(func() {
		m.Close()
		<-done
	})
	return fmt.Sprintf("/dev/pts/%d", n)
}
