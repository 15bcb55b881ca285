package smartos

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// lockRetry is how often a locked serial port is tried again.
const lockRetry = 50 * time.Millisecond

// openSerial opens the serial port as pyserial does for cloud-init
// (non-blocking, no controlling terminal, raw 8N1 at 9600 baud without
// flow control, pending input discarded) and takes the exclusive lock
// mdata-get also takes, waiting for it at most until ctx ends. The file
// supports read and write deadlines.
func openSerial(ctx context.Context, path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|unix.O_NOCTTY|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = makeRaw(int(fd)) }); err != nil {
		serr = err
	}
	if serr != nil {
		f.Close()
		return nil, fmt.Errorf("%s: setting raw mode: %w", path, serr)
	}
	for {
		var lerr error
		if err := rc.Control(func(fd uintptr) {
			lerr = unix.FcntlFlock(fd, unix.F_SETLK, &unix.Flock_t{Type: unix.F_WRLCK})
		}); err != nil {
			lerr = err
		}
		if lerr == nil {
			return f, nil
		}
		if !errors.Is(lerr, unix.EAGAIN) && !errors.Is(lerr, unix.EACCES) {
			f.Close()
			return nil, fmt.Errorf("%s: locking: %w", path, lerr)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("%s: waiting for the lock another process holds: %w", path, context.Cause(ctx))
		case <-time.After(lockRetry):
		}
	}
}

// makeRaw puts the terminal fd in raw mode (cfmakeraw), 8N1, 9600 baud,
// receiver on, modem lines ignored, no flow control; then discards pending
// input and raises DTR and RTS (both ignored where unsupported).
func makeRaw(fd int) error {
	t, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return err
	}
	t.Iflag &^= unix.IGNBRK | unix.BRKINT | unix.PARMRK | unix.ISTRIP | unix.INLCR | unix.IGNCR | unix.ICRNL | unix.IXON | unix.IXOFF | unix.IXANY | unix.INPCK
	t.Oflag &^= unix.OPOST
	t.Lflag &^= unix.ECHO | unix.ECHOE | unix.ECHOK | unix.ECHONL | unix.ICANON | unix.ISIG | unix.IEXTEN
	t.Cflag &^= unix.CSIZE | unix.PARENB | unix.CSTOPB | unix.CRTSCTS | unix.CBAUD
	t.Cflag |= unix.CS8 | unix.CLOCAL | unix.CREAD | unix.B9600
	t.Ispeed, t.Ospeed = unix.B9600, unix.B9600
	t.Cc[unix.VMIN], t.Cc[unix.VTIME] = 1, 0
	if err := unix.IoctlSetTermios(fd, unix.TCSETS, t); err != nil {
		return err
	}
	if err := unix.IoctlSetInt(fd, unix.TCFLSH, unix.TCIFLUSH); err != nil {
		return err
	}
	unix.IoctlSetPointerInt(fd, unix.TIOCMBIS, unix.TIOCM_DTR|unix.TIOCM_RTS)
	return nil
}
