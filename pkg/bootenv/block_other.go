//go:build !linux

package bootenv

// noMedium is Linux's ENOMEDIUM; elsewhere no error means that.
func noMedium(error) bool { return false }
