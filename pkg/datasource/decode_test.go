package datasource

import (
	"bytes"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cloudroot/cloudroot/pkg/imds"
)

func TestDecodeBase64(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		err      bool
	}{
		{in: "I2Nsb3VkLWNvbmZpZwo=", want: "#cloud-config\n"},
		{in: " I2Nsb3Vk\nLWNvbmZp*Zwo= \n", want: "#cloud-config\n"},
		{in: "", want: ""},
		{in: "I2Nsb3VkLWNvbmZpZwo", err: true},
		{in: "!!!", want: ""},
	} {
		got, err := DecodeBase64(tc.in)
		if tc.err {
			if err == nil {
				t.Errorf("DecodeBase64(%q) = %q, want an error", tc.in, got)
			}
			continue
		}
		if err != nil || string(got) != tc.want {
			t.Errorf("DecodeBase64(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func FuzzDecodeBase64(f *testing.F) {
	f.Add([]byte("#cloud-config\n"), " \n")
	f.Add([]byte{0xff, 0}, "*")
	f.Fuzz(func(t *testing.T, b []byte, noise string) {
		noise = strings.Map(func(r rune) rune {
			if r < 128 && strings.ContainsRune(base64Alphabet, r) {
				return -1
			}
			return r
		}, noise)
		enc := base64.StdEncoding.EncodeToString(b)
		var in strings.Builder
		for _, c := range enc {
			in.WriteRune(c)
			in.WriteString(noise)
		}
		got, err := DecodeBase64(in.String())
		if err != nil || !bytes.Equal(got, b) {
			t.Fatalf("DecodeBase64(%q) = %q, %v; want %q", in.String(), got, err, b)
		}
		DecodeBase64(noise + string(b))
	})
}

const base64Alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/="

func TestJSONKind(t *testing.T) {
	for _, tc := range []struct {
		v    any
		want string
	}{
		{nil, "null"},
		{[]any{}, "a list"},
		{map[string]any{}, "an object"},
		{"", "a string"},
		{1.5, "a number"},
		{false, "a boolean"},
		{3, "int"},
	} {
		if got := JSONKind(tc.v); got != tc.want {
			t.Errorf("JSONKind(%#v) = %q, want %q", tc.v, got, tc.want)
		}
	}
}

func TestSeconds(t *testing.T) {
	for _, tc := range []struct {
		v    any
		want time.Duration
		err  string
	}{
		{v: 5, want: 5 * time.Second},
		{v: int64(2), want: 2 * time.Second},
		{v: 0.25, want: 250 * time.Millisecond},
		{v: "1.5", want: 1500 * time.Millisecond},
		{v: "-1", want: -time.Second},
		{v: " 1", err: `" 1" is not a number`},
		{v: []any{1}, err: "[1] ([]interface {}) is not a number"},
	} {
		got, err := Seconds(tc.v)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("Seconds(%#v) = %v, %v; want error %q", tc.v, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("Seconds(%#v) = %v, %v; want %v", tc.v, got, err, tc.want)
		}
	}
}

func TestOptional(t *testing.T) {
	broken := errors.New("connection reset")
	for _, tc := range []struct {
		name string
		r    imds.Result
		want []byte
		err  error
	}{
		{name: "404 is none", r: imds.Result{Err: imds.ErrNotFound}},
		{name: "empty answer is empty", r: imds.Result{}, want: []byte{}},
		{name: "answer", r: imds.Result{Data: []byte("#!/bin/sh\n")}, want: []byte("#!/bin/sh\n")},
		{name: "failure", r: imds.Result{Err: broken}, err: broken},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Optional(tc.r)
			if !errors.Is(err, tc.err) || (err == nil) != (tc.err == nil) {
				t.Fatalf("err = %v, want %v", err, tc.err)
			}
			if (got == nil) != (tc.want == nil) || !bytes.Equal(got, tc.want) {
				t.Errorf("got %#v, want %#v", got, tc.want)
			}
		})
	}
}
