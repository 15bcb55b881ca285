//go:build unix

package scaleway

import "syscall"

// reuseAddr lets a source port whose earlier connection is in TIME_WAIT
// be bound again (connect still refuses an identical 4-tuple, which the
// dialer skips). A port with a listener stays unavailable.
func reuseAddr(network, address string, c syscall.RawConn) error {
	var serr error
	err := c.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1)
	})
	if err != nil {
		return err
	}
	return serr
}
