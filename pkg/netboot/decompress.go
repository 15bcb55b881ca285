package netboot

import (
	"bufio"
	"bytes"
	"fmt"
	"io"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
)

// Magic numbers of the compressions Decompress knows.
var (
	magicGzip = []byte{0x1f, 0x8b}
	magicZstd = []byte{0x28, 0xb5, 0x2f, 0xfd}
	magicXz   = []byte{0xfd, '7', 'z', 'X', 'Z', 0x00}
)

// Sniff names the compression r's first bytes show (CompressNone when
// none matches).
func Sniff(head []byte) string {
	switch {
	case bytes.HasPrefix(head, magicGzip):
		return bootenv.CompressGzip
	case bytes.HasPrefix(head, magicZstd):
		return bootenv.CompressZstd
	case bytes.HasPrefix(head, magicXz):
		return bootenv.CompressXz
	}
	return bootenv.CompressNone
}

// Decompress wraps r in the decompressor for comp (a bootenv.Compress*
// name). With CompressNone the stream's magic still decides, so an image
// named disk.img that is really gzip is written decompressed; a named
// compression whose magic does not match is an error.
func Decompress(r io.Reader, comp string) (io.ReadCloser, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	head, _ := br.Peek(6)
	sniffed := Sniff(head)
	switch {
	case comp == bootenv.CompressNone || comp == "":
		comp = sniffed
	case comp != sniffed:
		return nil, fmt.Errorf("image is not %s (its first bytes are % x)", comp, head)
	}
	switch comp {
	case bootenv.CompressNone:
		return io.NopCloser(br), nil
	case bootenv.CompressGzip:
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		return zr, nil
	case bootenv.CompressZstd:
		zr, err := zstd.NewReader(br, zstd.WithDecoderLowmem(true), zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(128<<20))
		if err != nil {
			return nil, fmt.Errorf("zstd: %w", err)
		}
		return zr.IOReadCloser(), nil
	case bootenv.CompressXz:
		zr, err := xz.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("xz: %w", err)
		}
		return io.NopCloser(zr), nil
	}
	return nil, fmt.Errorf("compression %q: %w", comp, bootenv.ErrUnsupported)
}
