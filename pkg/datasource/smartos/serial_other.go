//go:build !linux

package smartos

import (
	"context"
	"errors"
	"os"
)

func openSerial(ctx context.Context, path string) (*os.File, error) {
	return nil, &os.PathError{Op: "open serial port", Path: path, Err: errors.ErrUnsupported}
}
