package pyval

import (
	"fmt"
	"io"
)

// NewB64Decoder is B64Decode as a stream: it reads base64 text from r and
// yields the decoded bytes as they are read, with the same skipping,
// padding and error rules, so a large payload is never held whole. The
// error B64Decode would return comes at the end of the stream.
func NewB64Decoder(r io.Reader) io.Reader {
	return &b64Stream{r: r, in: make([]byte, 32<<10), buf: make([]byte, 0, 24<<10+3)}
}

type b64Stream struct {
	r                io.Reader
	in               []byte
	out              []byte // decoded, not yet returned
	buf              []byte // out's storage, reused once out is drained
	left             uint32
	quad, pads, data int
	done             bool  // the input ended (or padding ended the decoding)
	err              error // to return once out is drained
}

func (d *b64Stream) Read(p []byte) (int, error) {
	for len(d.out) == 0 && !d.done {
		n, rerr := d.r.Read(d.in)
		d.out = d.buf[:0] // drained: refill the same storage
		d.feed(d.in[:n])
		if rerr == io.EOF && !d.done {
			d.finish()
		} else if rerr != nil && rerr != io.EOF {
			d.done, d.err = true, rerr
		}
	}
	if len(d.out) > 0 {
		n := copy(p, d.out)
		d.out = d.out[n:]
		return n, nil
	}
	if d.err != nil {
		return 0, d.err
	}
	return 0, io.EOF
}

func (d *b64Stream) feed(b []byte) {
	for _, c := range b {
		if d.done {
			return
		}
		if c == '=' {
			if d.quad >= 2 {
				d.pads++
				if d.quad+d.pads >= 4 {
					d.done = true
				}
			}
			continue
		}
		v, ok := b64Value(c)
		if !ok {
			continue
		}
		d.data++
		d.pads = 0
		d.left = d.left<<6 | uint32(v)
		d.quad++
		switch d.quad {
		case 2:
			d.out = append(d.out, byte(d.left>>4))
			d.left &= 0xf
		case 3:
			d.out = append(d.out, byte(d.left>>2))
			d.left &= 0x3
		case 4:
			d.out = append(d.out, byte(d.left))
			d.left, d.quad = 0, 0
		}
	}
}

func (d *b64Stream) finish() {
	d.done = true
	switch d.quad {
	case 0:
	case 1:
		d.err = fmt.Errorf("Invalid base64-encoded string: number of data characters (%d) cannot be 1 more than a multiple of 4", d.data)
	default:
		d.err = ErrIncorrectPadding
	}
	if d.err != nil {
		// B64Decode returns no data with an error.
		d.out = nil
	}
}
