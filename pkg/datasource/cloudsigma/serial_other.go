//go:build !linux

package cloudsigma

import (
	"errors"
	"os"
)

func openSerial(path string) (*os.File, error) {
	return nil, &os.PathError{Op: "open serial port", Path: path, Err: errors.ErrUnsupported}
}
