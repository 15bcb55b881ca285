// Package jsonstream writes what encoding/json's Marshal and MarshalIndent
// produce for generic values (map[string]any, []any, strings and other
// scalars) straight to a writer, without building the encoding in memory
// first.
//
// encoding/json encodes a whole value into one buffer (grown by doubling),
// and MarshalIndent copies it once more to indent it: for a config carrying
// tens of MiB of write_files content that is several times the content at
// once (docs/security.md, "Memory ceiling"). Here maps and slices are walked
// and long strings are escaped in bounded chunks; every other value (numbers,
// bools, typed maps and slices, json.Marshaler implementations) is encoded
// by encoding/json itself, so the bytes are exactly encoding/json's.
package jsonstream

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
)

// chunk is how many bytes of a string are escaped at a time.
const chunk = 32 << 10

// Encode writes json.Marshal(v) to w (indent == "") or
// json.MarshalIndent(v, "", indent), without a trailing newline.
func Encode(w io.Writer, v any, indent string) error {
	return encode(w, v, indent, false)
}

// EncodeTyped is Encode except that a float64 with an integral value is
// written with a fraction (2.0, 1e+16 as 10000000000000000.0), as Python's
// json.dumps writes a float: a reader that decodes integral numbers as
// integers (state.Unmarshal) then tells YAML's 2 from 2.0, which
// encoding/json writes alike.
func EncodeTyped(w io.Writer, v any, indent string) error {
	return encode(w, v, indent, true)
}

func encode(w io.Writer, v any, indent string, typed bool) error {
	bw, ok := w.(*bufio.Writer)
	if !ok {
		bw = bufio.NewWriterSize(w, 64<<10)
	}
	e := &encoder{w: bw, indent: indent, typed: typed}
	if err := e.value(v, 0); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("jsonstream: %w", err)
	}
	return nil
}

type encoder struct {
	w      *bufio.Writer
	indent string
	typed  bool // floats keep a fraction (EncodeTyped)
}

// newline starts a line at depth (indented output only).
func (e *encoder) newline(depth int) {
	if e.indent == "" {
		return
	}
	e.w.WriteByte('\n')
	for range depth {
		e.w.WriteString(e.indent)
	}
}

func (e *encoder) value(v any, depth int) error {
	switch v := v.(type) {
	case nil:
		e.w.WriteString("null")
	case string:
		return e.str(v)
	case bool:
		if v {
			e.w.WriteString("true")
		} else {
			e.w.WriteString("false")
		}
	case map[string]any:
		if v == nil {
			e.w.WriteString("null")
			return nil
		}
		if len(v) == 0 {
			e.w.WriteString("{}")
			return nil
		}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, strings.Compare)
		e.w.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				e.w.WriteByte(',')
			}
			e.newline(depth + 1)
			if err := e.str(k); err != nil {
				return err
			}
			e.w.WriteByte(':')
			if e.indent != "" {
				e.w.WriteByte(' ')
			}
			if err := e.value(v[k], depth+1); err != nil {
				return err
			}
		}
		e.newline(depth)
		e.w.WriteByte('}')
	case []any:
		if v == nil {
			e.w.WriteString("null")
			return nil
		}
		if len(v) == 0 {
			e.w.WriteString("[]")
			return nil
		}
		e.w.WriteByte('[')
		for i, x := range v {
			if i > 0 {
				e.w.WriteByte(',')
			}
			e.newline(depth + 1)
			if err := e.value(x, depth+1); err != nil {
				return err
			}
		}
		e.newline(depth)
		e.w.WriteByte(']')
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("jsonstream: %w", err)
		}
		if _, isFloat := v.(float64); isFloat && e.typed && !bytes.ContainsAny(b, ".eE") {
			b = append(b, ".0"...)
		}
		if e.indent != "" {
			// The value's nested lines continue at its depth, as
			// MarshalIndent lays them out.
			var ib bytes.Buffer
			if err := json.Indent(&ib, b, strings.Repeat(e.indent, depth), e.indent); err != nil {
				return fmt.Errorf("jsonstream: %w", err)
			}
			b = ib.Bytes()
		}
		e.w.Write(b)
	}
	return nil
}

// str writes s quoted and escaped as encoding/json does (HTML characters,
// U+2028 and U+2029 escaped, invalid UTF-8 as U+FFFD). A long s is escaped
// chunk by chunk, each cut where the decoding of the whole string starts a
// rune, so the escaping is the whole string's: before a byte that is not a
// continuation byte (10xxxxxx), or after three continuation bytes (a rune
// is at most four bytes, so none spans them).
func (e *encoder) str(s string) error {
	if len(s) <= chunk {
		b, err := json.Marshal(s)
		if err != nil {
			return fmt.Errorf("jsonstream: %w", err)
		}
		_, err = e.w.Write(b)
		return err
	}
	e.w.WriteByte('"')
	for len(s) > 0 {
		n := min(chunk, len(s))
		for i := 0; i < 3 && n < len(s) && s[n]&0xC0 == 0x80; i++ {
			n++
		}
		b, err := json.Marshal(s[:n])
		if err != nil {
			return fmt.Errorf("jsonstream: %w", err)
		}
		if _, err := e.w.Write(b[1 : len(b)-1]); err != nil {
			return err
		}
		s = s[n:]
	}
	return e.w.WriteByte('"')
}
