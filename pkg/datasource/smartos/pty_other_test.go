//go:build !linux

package smartos

import "testing"

func servePTY(t *testing.T, f *fake) string {
	t.Skip("serial ports are opened on Linux only")
	return ""
}
