package pyval

import (
	"encoding/base64"
	"encoding/hex"
	"testing"
)

// b64Cases are CPython 3.11's base64.b64decode answers (hex output or the
// binascii.Error message) for each input.
var b64Cases = []struct{ in, hex, err string }{
	{"aGk=", "6869", ""},
	{"aGk", "", "Incorrect padding"},
	{"aGk==", "6869", ""},
	{"aG=k=", "6869", ""},
	{"a", "", "Invalid base64-encoded string: number of data characters (1) cannot be 1 more than a multiple of 4"},
	{"aGVsbG8gd29ybGQ=\n", "68656c6c6f20776f726c64", ""},
	{"aGVs\nbG8=", "68656c6c6f", ""},
	{"aGVs bG8=", "68656c6c6f", ""},
	{"aGk=trailing junk", "6869", ""},
	{"!!aGk=!!", "6869", ""},
	{"", "", ""},
	{"====", "", ""},
	{"aGVsbG8", "", "Incorrect padding"},
	{"YQ==YQ==", "61", ""},
	{"Y*Q=*=", "61", ""},
	{"YQ", "", "Incorrect padding"},
	{"YQ=", "", "Incorrect padding"},
	{"YWJj", "616263", ""},
	{"YWJjZA=", "", "Incorrect padding"},
	{"YWJjZA==extra", "61626364", ""},
}

func TestB64Decode(t *testing.T) {
	for _, tc := range b64Cases {
		got, err := B64Decode([]byte(tc.in))
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%q: err %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || hex.EncodeToString(got) != tc.hex {
			t.Errorf("%q: %x (err %v), want %s", tc.in, got, err, tc.hex)
		}
	}
}

// FuzzB64Decode: whatever Go's strict decoder accepts, B64Decode decodes
// the same; nothing panics.
func FuzzB64Decode(f *testing.F) {
	for _, tc := range b64Cases {
		f.Add([]byte(tc.in))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := B64Decode(b)
		if want, serr := base64.StdEncoding.Strict().DecodeString(string(b)); serr == nil {
			if err != nil || string(got) != string(want) {
				t.Fatalf("%q: %q %v, want %q", b, got, err, want)
			}
		}
	})
}
