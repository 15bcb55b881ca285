//go:build !linux

package serial

import (
	"context"
	"errors"
	"os"
)

// Open is not supported outside Linux: it returns an *os.PathError
// wrapping errors.ErrUnsupported.
func Open(path string) (*os.File, error) {
	return nil, &os.PathError{Op: "open serial port", Path: path, Err: errors.ErrUnsupported}
}

// OpenLocked is not supported outside Linux: it returns an *os.PathError
// wrapping errors.ErrUnsupported.
func OpenLocked(ctx context.Context, path string) (*os.File, error) {
	return Open(path)
}
