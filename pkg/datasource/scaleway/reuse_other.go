//go:build !unix

package scaleway

import "syscall"

// reuseAddr does nothing where SO_REUSEADDR is not set this way.
func reuseAddr(network, address string, c syscall.RawConn) error { return nil }
