package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSchemaGolden(t *testing.T) { runCLIGolden(t, "schema") }

// TestSchemaNeverEchoesRawBytes: a binary file, or one carrying terminal
// escape sequences, is reported (and annotated) with those bytes escaped:
// nothing but printable UTF-8, tab and newline reaches the terminal.
// (Upstream cloud-init fails with a UnicodeDecodeError traceback on both.)
func TestSchemaNeverEchoesRawBytes(t *testing.T) {
	dir := t.TempDir()
	files := map[string][]byte{
		"binary": append([]byte{0x9e, 0xe3, 0x1b, '[', '2', 'J', 0x00, 0xff, 0x07}, bytes.Repeat([]byte{0xc3, 0x28, 0x85}, 20)...),
		"escape": []byte("#cloud-config\nhostname: a\x1b]0;pwned\x07\x1b[2J\xff\n"),
	}
	for name, b := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{{"schema", "-c", p}, {"schema", "-c", p, "--annotate"}} {
			env, out, errb := newTestEnv(t.TempDir())
			Run(context.Background(), env, args)
			got := out.String() + errb.String()
			if !utf8.ValidString(got) {
				t.Errorf("%v: output is not UTF-8: %q", args, got)
			}
			for _, r := range got {
				if (r < 0x20 && r != '\n' && r != '\t') || (r >= 0x7f && r <= 0x9f) {
					t.Errorf("%v: control character %U in output: %q", args, r, got)
					break
				}
			}
			if (strings.Contains(got, "Unrecognized") || strings.Contains(got, "hostname")) && !strings.Contains(got, `\x1b`) {
				t.Errorf("%v: the escape is not shown escaped: %q", args, got)
			}
		}
	}
}

// FuzzTermSafe: whatever the bytes, termSafe's output is UTF-8 without
// control characters but tab, newline and carriage return, and readable
// text passes unchanged.
func FuzzTermSafe(f *testing.F) {
	for _, s := range []string{"#cloud-config\nhostname: a\n", "a\x1b[2J\xff\x00", "caf\xc3\xa9\r\n", "\xc2\x85\xe2\x80\xa8"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := termSafe(s)
		if !utf8.ValidString(got) {
			t.Fatalf("termSafe(%q) = %q: not UTF-8", s, got)
		}
		for _, r := range got {
			if unsafeRune(r) {
				t.Fatalf("termSafe(%q) = %q: holds %U", s, got, r)
			}
		}
		clean := utf8.ValidString(s)
		for _, r := range s {
			clean = clean && !unsafeRune(r)
		}
		if clean && got != s {
			t.Fatalf("termSafe changed readable text %q to %q", s, got)
		}
	})
}
