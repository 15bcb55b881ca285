package serial

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

// Open opens the serial port at path in raw mode (see the package
// contract).
func Open(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|unix.O_NOCTTY|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	if err := control(f, makeRaw); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: setting raw mode: %w", path, err)
	}
	return f, nil
}

// OpenLocked opens the serial port at path as Open does and takes the
// exclusive lock mdata-get also takes, waiting for it at most until ctx
// ends.
func OpenLocked(ctx context.Context, path string) (*os.File, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	for {
		err := control(f, func(fd int) error {
			return unix.FcntlFlock(uintptr(fd), unix.F_SETLK, &unix.Flock_t{Type: unix.F_WRLCK})
		})
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, unix.EAGAIN) && !errors.Is(err, unix.EACCES) {
			f.Close()
			return nil, fmt.Errorf("%s: locking: %w", path, err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("%s: waiting for the lock another process holds: %w", path, context.Cause(ctx))
		case <-time.After(lockRetry):
		}
	}
}

// control runs fn on f's descriptor.
func control(f *os.File, fn func(fd int) error) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) { ferr = fn(int(fd)) }); err != nil {
		return err
	}
	return ferr
}

// makeRaw puts the terminal fd in raw mode (cfmakeraw), 8N1, 9600 baud,
// receiver on, modem lines ignored, no flow control; then discards pending
// input and raises DTR and RTS (ignored where unsupported).
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
