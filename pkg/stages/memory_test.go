package stages

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cloudroot/cloudroot/pkg/state"
	"github.com/cloudroot/cloudroot/pkg/target"
)

// peakHeap runs fn while sampling the Go heap (objects in use, garbage not
// yet collected included) and returns the highest sample above the heap in
// use when fn started. A sample every 200µs misses short peaks, so the figure
// is a lower bound of the true peak; the GC runs before the baseline.
func peakHeap(fn func()) (peak uint64) {
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 {
		metrics.Read(sample)
		return sample[0].Value.Uint64()
	}
	base := read()
	var mu sync.Mutex
	max := base
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tk := time.NewTicker(200 * time.Microsecond)
		defer tk.Stop()
		for {
			select {
			case <-done:
				return
			case <-tk.C:
				if v := read(); v > max {
					mu.Lock()
					max = v
					mu.Unlock()
				}
			}
		}
	}()
	fn()
	if v := read(); v > max {
		max = v
	}
	close(done)
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	return max - base
}

// bigUserData builds user-data of about size bytes of kind: a cloud-config
// whose write_files content is plain text, base64 (starting with a letter,
// or with a digit), or gzip+base64, or a MIME
// multipart with one such cloud-config part and one large shell script.
func bigUserData(kind string, size int) string {
	var payload strings.Builder
	for i := 0; payload.Len() < size; i++ {
		fmt.Fprintf(&payload, "%08d the quick brown fox jumps over the lazy dog %08x\n", i, i*2654435761)
	}
	text := payload.String()
	indent := func(s string) string {
		return "      " + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n      ") + "\n"
	}
	switch kind {
	case "plain":
		return "#cloud-config\nwrite_files:\n  - path: /var/big/plain.txt\n    content: |\n" + indent(text)
	case "b64":
		enc := base64.StdEncoding.EncodeToString([]byte(text[:size*3/4]))
		return "#cloud-config\nwrite_files:\n  - path: /var/big/b64.bin\n    encoding: b64\n    content: " + enc + "\n"
	case "b64-digit":
		// A plain scalar that starts with a digit (as about a sixth of
		// base64 texts do): yaml.v3 tries it as a number while parsing, and
		// each strconv error copies it.
		enc := base64.StdEncoding.EncodeToString([]byte("\xd4" + text[:size*3/4-1]))
		return "#cloud-config\nwrite_files:\n  - path: /var/big/b64.bin\n    encoding: b64\n    content: " + enc + "\n"
	case "gzip":
		var z bytes.Buffer
		w, _ := gzip.NewWriterLevel(&z, gzip.BestSpeed)
		// Random-ish content so it stays large once compressed.
		x := uint64(88172645463325252)
		buf := make([]byte, 8)
		for z.Len() < size*3/4 {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			for i := range buf {
				buf[i] = byte(x >> (8 * i))
			}
			w.Write(buf)
		}
		w.Close()
		enc := base64.StdEncoding.EncodeToString(z.Bytes())
		return "#cloud-config\nwrite_files:\n  - path: /var/big/gz.bin\n    encoding: gz+b64\n    content: " + enc + "\n"
	case "mime":
		half := text[:size/2]
		return "Content-Type: multipart/mixed; boundary=\"BOUNDARY\"\nMIME-Version: 1.0\n\n" +
			"--BOUNDARY\nContent-Type: text/cloud-config\n\n#cloud-config\nwrite_files:\n  - path: /var/big/mime.txt\n    content: |\n" + indent(half) +
			"--BOUNDARY\nContent-Type: text/x-shellscript\n\n#!/bin/sh\ncat <<'EOF' > /dev/null\n" + half + "EOF\n" +
			"--BOUNDARY--\n"
	}
	panic(kind)
}

// initPeak runs the init stage and the hand-off's state marshalling on ud,
// as the initramfs does, and returns the peak heap growth.
func initPeak(t *testing.T, ud string) uint64 {
	t.Helper()
	tr := newRoot(t, &fakeRunner{}, target.WithDeferredSync())
	d := seed(t, "instance-id: i-mem\nlocal-hostname: mem\n", ud)
	ud = ""
	var s state.State
	st := state.NewStatus()
	var err error
	peak := peakHeap(func() {
		if err = Init(context.Background(), initOpts(tr, tr, d), st.Get(state.StageInit), &s); err != nil {
			return
		}
		err = tr.WriteFileWith(state.StateFile, target.WriteOpts{Perm: 0o600, UID: -1, GID: -1}, func(w io.Writer) error { return state.Encode(w, &s) })
	})
	if err != nil {
		t.Fatal(err)
	}
	if errs := st.Get(state.StageInit).Errors; len(errs) > 0 {
		t.Fatalf("init errors: %q", errs)
	}
	return peak
}

// memoryCeiling is the documented bound of the memory the init stage needs
// for a user-data of n bytes, the user-data itself included
// (docs/security.md, "Memory ceiling").
func memoryCeiling(n int) uint64 { return uint64(memoryFactor*float64(n)) + memoryBase }

// leastPeak measures up to three times while the peak is over the
// ceiling and returns the least: the sampled heap includes garbage the
// collector has not yet reclaimed, and on a loaded host its workers can
// fall behind the allocating goroutine for a moment. What the stage needs
// is the least of the measures; more than that is scheduling noise.
func leastPeak(t *testing.T, ceiling uint64, measure func() uint64) uint64 {
	t.Helper()
	peak := measure()
	for try := 2; try <= 3 && peak > ceiling; try++ {
		t.Logf("peak heap %d bytes over the ceiling %d: measuring again (%d of 3)", peak, ceiling, try)
		peak = min(peak, measure())
	}
	return peak
}

// The factor is what yaml.v3 needs to parse a large plain scalar that
// starts with a digit (b64-digit: the raw user-data, the scalar's buffer
// grown by append, its copy into the node, and a copy made by each strconv
// error while yaml.v3 tries it as a number: 5x at 60 MiB) with a small
// margin; other user-data stays nearer 3-4x (docs/security.md, "Memory
// ceiling").
const (
	memoryFactor = 4.75
	memoryBase   = 32 << 20
)

// TestMemoryCeiling feeds large user-data through the init stage and holds
// what it needs at once under the ceiling. The need is measured with the Go
// runtime's memory limit at 1 MiB, so the collector reclaims garbage as
// early as it can (cloudroot-init runs with a limit too, MemoryLimit): the
// peak heap, the user-data itself counted, is then the live data plus the
// collector's pacing slack. CLOUDROOT_MEMTEST_MB sets the size (default
// 16 MiB, which keeps the unit suite quick; the figures in the docs are for
// 60). With CLOUDROOT_MEMTEST_NOLIMIT=1 no limit is set and the figures
// (the default collector's garbage included) are only logged.
func TestMemoryCeiling(t *testing.T) {
	if testing.Short() {
		t.Skip("large allocations")
	}
	mb := 16
	if s := os.Getenv("CLOUDROOT_MEMTEST_MB"); s != "" {
		fmt.Sscan(s, &mb)
	}
	noLimit := os.Getenv("CLOUDROOT_MEMTEST_NOLIMIT") == "1"
	size := mb << 20
	for _, kind := range []string{"plain", "b64", "b64-digit", "gzip", "mime"} {
		t.Run(kind, func(t *testing.T) {
			ud := bigUserData(kind, size)
			n := len(ud)
			if !noLimit {
				defer debug.SetMemoryLimit(debug.SetMemoryLimit(1 << 20))
			}
			peak := uint64(n)
			if noLimit {
				peak += initPeak(t, ud)
			} else {
				peak += leastPeak(t, memoryCeiling(n)-uint64(n), func() uint64 { return initPeak(t, ud) })
			}
			t.Logf("%s: user-data %.1f MiB, peak heap %.1f MiB with the user-data (%.2f× it), ceiling %.1f MiB (tight limit: %v)",
				kind, float64(n)/(1<<20), float64(peak)/(1<<20), float64(peak)/float64(n), float64(memoryCeiling(n))/(1<<20), !noLimit)
			if !noLimit && peak > memoryCeiling(n) {
				t.Errorf("peak heap %d bytes over the ceiling %d (%.2f× + %d MiB of %d bytes of user-data)", peak, memoryCeiling(n), memoryFactor, memoryBase>>20, n)
			}
		})
	}
}
