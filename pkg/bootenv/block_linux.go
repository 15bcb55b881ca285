package bootenv

import (
	"errors"

	"golang.org/x/sys/unix"
)

// noMedium reports whether err says the drive has no medium (an empty CD-ROM
// opened without O_NONBLOCK).
func noMedium(err error) bool { return errors.Is(err, unix.ENOMEDIUM) }
