//go:build !linux

package serialtest

import (
	"io"
	"testing"
)

// ServePTY skips the test: serial ports are opened on Linux only.
func ServePTY(t testing.TB, serve func(master io.ReadWriter)) string {
	t.Helper()
	t.Skip("serial ports are opened on Linux only")
	return ""
}
