package pyval

import (
	"bytes"
	"io"
	"testing"
	"testing/iotest"
)

// FuzzB64Stream holds the streaming decoder to B64Decode: same bytes, and
// an error exactly when B64Decode fails (the data read before the error is
// not checked: a stream cannot take back what it already gave).
func FuzzB64Stream(f *testing.F) {
	for _, s := range []string{"", "SGVsbG8gd29ybGQK", "SGVsbG8=", "SGVsbG8", "S", "SG=V=", "SGVs\nbG8g\r\nd29y bGQK", "SGVsbG8=garbage", "=SG==", "!!SGVsbG8=!!"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		want, werr := B64Decode(in)
		for _, r := range []io.Reader{bytes.NewReader(in), iotest.OneByteReader(bytes.NewReader(in))} {
			got, err := io.ReadAll(NewB64Decoder(r))
			if (err != nil) != (werr != nil) {
				t.Fatalf("%q: stream error %v, B64Decode error %v", in, err, werr)
			}
			if werr != nil {
				if err.Error() != werr.Error() {
					t.Fatalf("%q: stream error %q, want %q", in, err, werr)
				}
				continue
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("%q: stream %q, B64Decode %q", in, got, want)
			}
		}
	})
}
