package dstest

// The conformance suite of sources read over a serial port, a socket or a
// hypervisor backdoor (ConformTransport): what fits of Conform's cases
// when there is no URL to serve.

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/cloudroot/cloudroot/pkg/datasource"
)

// Transport is a source read over a device that answers requests, for
// ConformTransport.
type Transport struct {
	// Absent is the source and Env of a machine that looks like the
	// source's platform (DMI) but has no device (no port, no socket, no
	// backdoor).
	Absent func(t *testing.T) (datasource.Source, datasource.Env)
	// Answering is the source and Env of a device that answers every
	// request with reply (as the transport frames an answer), and the
	// name errors must give it (the device's path, the key).
	Answering func(t *testing.T, reply []byte) (src datasource.Source, env datasource.Env, where string)
	// WhyEmptyNotFound, when not "", says why an empty answer is
	// ErrNotFound for this source (the "empty answer" case then expects
	// that).
	WhyEmptyNotFound string
}

// ConformTransport runs the cases every request/answer transport shares:
//   - "absent device": ErrNotFound;
//   - "garbage answer": 4 KiB of (seeded) random bytes: an error naming
//     where, not ErrNotFound, no Data;
//   - "empty answer": likewise (else ErrNotFound, WhyEmptyNotFound);
//   - "oversized answer": 2 MiB without an end: likewise (the reader is
//     bounded in bytes or time).
//
// Each Get is bounded by MaxGet. The source's own cases (its protocol's
// errors, its documents, platform detection) stay in its tests.
func ConformTransport(t *testing.T, tr Transport) {
	t.Helper()
	get := func(t *testing.T, src datasource.Source, env datasource.Env) (*datasource.Data, error) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), MaxGet)
		defer cancel()
		start := time.Now()
		d, err := src.Get(ctx, env)
		if el := time.Since(start); el > MaxGet {
			t.Errorf("took %v", el)
		}
		return d, err
	}
	t.Run("absent device", func(t *testing.T) {
		src, env := tr.Absent(t)
		d, err := get(t, src, env)
		if d != nil || !errors.Is(err, datasource.ErrNotFound) {
			t.Fatalf("got %v, %v; want ErrNotFound", d != nil, err)
		}
	})
	garbage := make([]byte, 4<<10)
	r := rand.New(rand.NewPCG(29, 29))
	for i := range garbage {
		garbage[i] = byte(r.Uint32())
	}
	for _, tc := range []struct {
		name  string
		reply []byte
	}{
		{"garbage answer", garbage},
		{"empty answer", nil},
		{"oversized answer", bytes.Repeat([]byte("x"), 2<<20)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src, env, where := tr.Answering(t, tc.reply)
			d, err := get(t, src, env)
			if tc.reply == nil && tr.WhyEmptyNotFound != "" {
				if d != nil || !errors.Is(err, datasource.ErrNotFound) {
					t.Fatalf("got %v, %v; want ErrNotFound", d != nil, err)
				}
				return
			}
			if d != nil || err == nil {
				t.Fatalf("got Data (err %v), want an error", err)
			}
			if errors.Is(err, datasource.ErrNotFound) {
				t.Errorf("a device answering badly is not ErrNotFound: %v", err)
			}
			if !strings.Contains(err.Error(), where) {
				t.Errorf("err = %v, want naming %q", err, where)
			}
		})
	}
}
