package jsonstream

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// check holds Encode to encoding/json's bytes, compact and indented.
func check(t *testing.T, v any) {
	t.Helper()
	for _, indent := range []string{"", " ", "\t"} {
		var want []byte
		var err error
		if indent == "" {
			want, err = json.Marshal(v)
		} else {
			want, err = json.MarshalIndent(v, "", indent)
		}
		if err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if err := Encode(&got, v, indent); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want) {
			i := 0
			for i < len(want) && i < got.Len() && want[i] == got.Bytes()[i] {
				i++
			}
			t.Fatalf("indent %q: differs at byte %d of %d/%d:\n got %q\nwant %q", indent, i, got.Len(), len(want),
				got.Bytes()[max(0, i-40):min(got.Len(), i+40)], want[max(0, i-40):min(len(want), i+40)])
		}
	}
}

type marshaler struct{}

func (marshaler) MarshalJSON() ([]byte, error) { return []byte(`{"b": [1, 2], "a": {}}`), nil }

func TestEncodeMatchesEncodingJSON(t *testing.T) {
	check(t, nil)
	check(t, map[string]any(nil))
	check(t, []any(nil))
	check(t, map[string]any{})
	check(t, []any{})
	check(t, "x<y>&z\u2028\u2029\x00\x1f\"\\\n\t\xff é 😀")
	check(t, map[string]any{
		"b": []any{1, int64(-2), uint64(3), 1.5, 1e21, 1e-7, float32(0.1), true, false, nil, []any{}, map[string]any{}},
		"a": map[string]any{"z": "y", "<k>": []any{map[string]any{"n": []any{[]any{"deep"}}}}},
		"c": map[string]string{"x": "1", "a": "2"},
		"d": []string{"p", "q"},
		"e": marshaler{},
		"f": []any{marshaler{}, map[string]any{"g": marshaler{}}},
		"t": time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC),
		"":  []byte("raw bytes"),
	})
}

// TestLongStrings cuts strings at every kind of byte around the chunk
// boundary: ASCII, escapes, multi-byte runes, invalid UTF-8, long runs of
// continuation bytes.
func TestLongStrings(t *testing.T) {
	pieces := []string{"a", "<", "&", "\n", "\"", "é", "€", "😀", "\u2028", "\xff", "\x80", "\x80\x80\x80\x80\x80", "\xe2\x82", "\xf0\x9f\x98", "\xc3"}
	for off := chunk - 6; off <= chunk+1; off++ {
		for _, p := range pieces {
			s := strings.Repeat("x", off) + p + strings.Repeat(p, 3) + "tail"
			check(t, s)
			check(t, map[string]any{"k": []any{s}})
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 20 {
		var b strings.Builder
		for b.Len() < 3*chunk {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		check(t, b.String())
	}
	// A long run of continuation bytes across several chunks.
	check(t, strings.Repeat("\x80", 3*chunk+5))
	check(t, "\xe2"+strings.Repeat("\x82", 2*chunk))
}

func TestUnsupportedValue(t *testing.T) {
	var b bytes.Buffer
	if err := Encode(&b, map[string]any{"f": func() {}}, " "); err == nil {
		t.Fatal("no error for a func value")
	}
}

func FuzzEncode(f *testing.F) {
	f.Add([]byte(`{"a": [1, "x<y>", {"b": null}], "c": "\u00e9"}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, in []byte) {
		var v any
		if json.Unmarshal(in, &v) != nil {
			return
		}
		check(t, v)
		// The raw input as a string: invalid UTF-8 and all.
		check(t, map[string]any{"s": string(in)})
	})
}
