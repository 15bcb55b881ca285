package pyval

import (
	"errors"
	"fmt"
)

// ErrIncorrectPadding is binascii's "Incorrect padding".
var ErrIncorrectPadding = errors.New("Incorrect padding")

// B64Decode is Python's base64.b64decode(s) without validate, i.e.
// binascii.a2b_base64 in non-strict mode, which cloud-init applies to
// write_files' b64 content and to metadata values: characters outside the
// standard alphabet are skipped; "=" counts as padding only once at least
// two data characters of a quantum were read, and the padding that
// completes a quantum ends the decoding (whatever follows is ignored); a
// quantum left incomplete without padding is an error.
func B64Decode(s []byte) ([]byte, error) {
	out := make([]byte, 0, len(s)*3/4)
	var left uint32
	quad, pads, data := 0, 0, 0
	for _, c := range s {
		if c == '=' {
			if quad >= 2 {
				pads++
				if quad+pads >= 4 {
					return out, nil
				}
			}
			continue
		}
		v, ok := b64Value(c)
		if !ok {
			continue
		}
		data++
		pads = 0
		left = left<<6 | uint32(v)
		quad++
		switch quad {
		case 2:
			out = append(out, byte(left>>4))
			left &= 0xf
		case 3:
			out = append(out, byte(left>>2))
			left &= 0x3
		case 4:
			out = append(out, byte(left))
			left, quad = 0, 0
		}
	}
	switch quad {
	case 0:
		return out, nil
	case 1:
		return nil, fmt.Errorf("Invalid base64-encoded string: number of data characters (%d) cannot be 1 more than a multiple of 4", data)
	}
	return nil, ErrIncorrectPadding
}

func b64Value(c byte) (byte, bool) {
	switch {
	case c >= 'A' && c <= 'Z':
		return c - 'A', true
	case c >= 'a' && c <= 'z':
		return c - 'a' + 26, true
	case c >= '0' && c <= '9':
		return c - '0' + 52, true
	case c == '+':
		return 62, true
	case c == '/':
		return 63, true
	}
	return 0, false
}
