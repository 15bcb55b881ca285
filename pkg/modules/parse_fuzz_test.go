package modules

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloudroot/cloudroot/pkg/target"
	"github.com/cloudroot/cloudroot/pkg/yaml11"
)

// FuzzWriteFilesDecode: write_files' content encodings and permissions.
// Decoding never panics; an error names what could not be decoded; content
// encoded by each supported encoding (base64 wrapped at 76 columns as
// cloud-init's examples are) decodes back to itself; a mode given as a
// number and as its octal string decodes alike.
func FuzzWriteFilesDecode(f *testing.F) {
	f.Fuzz(func(t *testing.T, content []byte, enc string, perms string, n uint32) {
		if d, err := DecodeContent(content, enc); err != nil {
			if d != nil {
				t.Fatal("data and error")
			}
			if msg := err.Error(); !strings.Contains(msg, "base64") && !strings.Contains(msg, "gzip") && !strings.Contains(msg, fmt.Sprintf("%q", enc)) {
				t.Fatalf("error %q names neither the encoding nor the decoder", msg)
			}
		}
		var gz bytes.Buffer
		zw := gzip.NewWriter(&gz)
		zw.Write(content)
		zw.Close()
		wrap := func(b []byte) []byte {
			s := base64.StdEncoding.EncodeToString(b)
			var w strings.Builder
			for len(s) > 76 {
				w.WriteString(s[:76] + "\n")
				s = s[76:]
			}
			w.WriteString(s)
			return []byte(w.String())
		}
		for _, c := range []struct {
			enc string
			in  []byte
		}{
			{"", content}, {"text/plain", content}, {"b64", wrap(content)}, {"base64", []byte(base64.StdEncoding.EncodeToString(content))},
			{" BASE64 ", []byte(base64.StdEncoding.EncodeToString(content))}, // padded: Python's b64decode refuses missing padding
			{"gzip", gz.Bytes()}, {"gz", gz.Bytes()}, {"gz+b64", wrap(gz.Bytes())}, {"gzip+base64", wrap(gz.Bytes())},
		} {
			got, err := DecodeContent(c.in, c.enc)
			if err != nil || !bytes.Equal(got, content) {
				t.Fatalf("encoding %q: got %q, %v; want %q", c.enc, got, err, content)
			}
		}

		if m, err := DecodePerms(perms, 0o644); err != nil {
			if !strings.Contains(err.Error(), "permissions") {
				t.Fatalf("error %q does not name the key", err)
			}
		} else if m&^(0o777|os.ModeSetuid|os.ModeSetgid|os.ModeSticky) != 0 {
			t.Fatalf("mode %v from %q has bits beyond permissions", m, perms)
		}
		byInt, err1 := DecodePerms(int(n), 0)
		byStr, err2 := DecodePerms(fmt.Sprintf("%#o", n), 0)
		byPy, err3 := DecodePerms(fmt.Sprintf("0o%o", n), 0)
		if err := errors.Join(err1, err2, err3); err != nil || byInt != byStr || byStr != byPy {
			t.Fatalf("mode %o: int %v, string %v, 0o-string %v (%v)", n, byInt, byStr, byPy, err)
		}
	})
}

// FuzzWriteFiles runs write_files on a fresh root for any cloud-config:
// no panic, every error names its entry, and nothing is ever created
// outside the root (not even a temporary file beside it).
func FuzzWriteFiles(f *testing.F) {
	f.Fuzz(func(t *testing.T, config []byte) {
		cfg, _, err := yaml11.LoadMap("user-data", config)
		if err != nil {
			return
		}
		if l, ok := cfg["write_files"].([]any); !ok || len(l) > 8 {
			return
		}
		c, _, _ := testContext(t, Config(cfg), map[string]string{
			"etc/passwd": "root:x:0:0:root:/root:/bin/bash\nsyslog:x:104:110::/home/syslog:/usr/sbin/nologin\n",
			"etc/group":  "root:x:0:\nadm:x:4:syslog\n",
		})
		// Durability is not what is checked here: no fsync per file.
		root, err := target.New(c.Root.Dir(), target.WithDeferredSync())
		if err != nil {
			t.Fatal(err)
		}
		c.Root = root
		parent := filepath.Dir(c.Root.Dir())
		before, _ := os.ReadDir(parent)
		if err := WriteFiles.Run(t.Context(), c); err != nil {
			for _, e := range splitErrs(err) {
				if !strings.HasPrefix(e.Error(), "write_files: write_files") {
					t.Fatalf("error %q does not name its entry", e)
				}
			}
		}
		after, _ := os.ReadDir(parent)
		if len(after) != len(before) {
			t.Fatalf("entries beside the root: before %v, after %v", before, after)
		}
	})
}

func splitErrs(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}
