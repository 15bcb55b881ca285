//go:build !linux

package disk

import "errors"

// FreeBytes is the space available in the filesystem holding path.
func FreeBytes(path string) (int64, error) { return 0, errors.ErrUnsupported }
