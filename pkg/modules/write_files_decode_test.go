package modules

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"io"
	"strings"
	"testing"
)

func gzipped(s string) []byte {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write([]byte(s))
	w.Close()
	return b.Bytes()
}

// TestDecodeReader checks the streaming decoder write_files uses.
func TestDecodeReader(t *testing.T) {
	text := "hello\nworld\n"
	std := base64.StdEncoding.EncodeToString([]byte(text))
	for _, tc := range []struct {
		name, content, enc, want, err string
	}{
		{"plain", text, "", text, ""},
		{"text/plain", text, "text/plain", text, ""},
		{"b64", std, "b64", text, ""},
		{"b64 wrapped", std[:8] + "\n  " + std[8:] + "\n", "base64", text, ""},
		// Python's b64decode: missing padding is an error, characters
		// outside the alphabet are skipped.
		{"b64 unpadded", strings.TrimRight(base64.StdEncoding.EncodeToString([]byte("ab")), "="), "b64", "", "Incorrect padding"},
		{"b64 junk skipped", "!!!!", "b64", "", ""},
		{"b64 one data char too many", "YWJjY", "b64", "", "cannot be 1 more than a multiple of 4"},
		{"gz+b64", base64.StdEncoding.EncodeToString(gzipped(text)), "gz+b64", text, ""},
		{"gzip raw", string(gzipped(text)), "gzip", text, ""},
		{"bad gzip", base64.StdEncoding.EncodeToString([]byte("not gzip")), "gzip+base64", "", "gzip decode"},
		{"unknown", text, "rot13", "", "unknown encoding"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DecodeContent([]byte(tc.content), tc.enc)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil || string(got) != tc.want {
				t.Fatalf("DecodeContent = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

// TestDecodeReaderCap checks the inflated size bound.
func TestDecodeReaderCap(t *testing.T) {
	r, err := gunzipReader(bytes.NewReader(gzipped(strings.Repeat("a", 1000))))
	if err != nil {
		t.Fatal(err)
	}
	r.(*errPrefixReader).r.(*capReader).left = 999
	if _, err := io.ReadAll(r); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("err = %v, want the size bound", err)
	}
}

// FuzzDecodeReaderB64 holds the streaming base64 decoder to the in-memory
// one: the same bytes, the same inputs refused.
func FuzzDecodeReaderB64(f *testing.F) {
	for _, s := range []string{"aGVsbG8=", "aGVsbG8", "aGVs\nbG8=\n", "", "====", "a", "!!", "aGVsbG8==", "YWI"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, werr := b64([]byte(s))
		got, gerr := io.ReadAll(b64Reader(s))
		if werr == nil && gerr == nil && !bytes.Equal(want, got) {
			t.Fatalf("%q: stream %q, memory %q", s, got, want)
		}
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("%q: stream %q, %v; memory %q, %v", s, got, gerr, want, werr)
		}
	})
}
