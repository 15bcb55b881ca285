package yaml11

import (
	"bytes"
	"strings"
	"testing"
)

// TestLineAt: the strided line lookup gives bytes.Split's lines.
func TestLineAt(t *testing.T) {
	var b strings.Builder
	for i := range 3*lineStride + 7 {
		b.WriteString(strings.Repeat("x", i%5))
		b.WriteByte('\n')
	}
	for _, src := range [][]byte{nil, []byte("a"), []byte("a\n"), []byte("\n\n!b\n"), []byte(b.String()), []byte(b.String() + "tail")} {
		n := &normalizer{src: src}
		lines := bytes.Split(src, []byte("\n"))
		for l := 1; l <= len(lines)+2; l++ {
			got := n.lineAt(l)
			if l <= len(lines) && !bytes.Equal(got, lines[l-1]) || l > len(lines) && got != nil {
				t.Fatalf("%d lines: line %d = %q", len(lines), l, got)
			}
		}
	}
}
