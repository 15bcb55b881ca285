package cilog

import (
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestParseLine(t *testing.T) {
	now := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		line string
		want *LogEvent
		err  bool
	}{
		{line: "2026-11-22 08:00:00,020 - handlers.py[DEBUG]: finish: modules-config/config-ntp: FAIL: running config-ntp with frequency always (duration: 0.020s)",
			want: &LogEvent{Name: "modules-config/config-ntp", Description: "running config-ntp with frequency always (duration: 0.020s)", EventType: "finish", Origin: "cloudinit", Result: "FAIL", Timestamp: 1795334400.02}},
		{line: "2026-11-22 08:00:00,5 - log_util.py[DEBUG]: Cloud-init v. 26.2 running 'modules:final' at Sun, 22 Nov 2026 08:00:00 +0000. Up 2.00 seconds.",
			want: &LogEvent{Name: "modules-final", Description: "finalizing modules", EventType: "start", Origin: "cloudinit", Timestamp: 1795334400.5}},
		{line: "Nov 22 08:00:01 host [CLOUDINIT] handlers.py[DEBUG]: start: init-local: searching for local datasources",
			want: &LogEvent{Name: "init-local", Description: "searching for local datasources", EventType: "start", Origin: "cloudinit", Timestamp: 1795334401}},
		{line: "2026-11-22 08:00:00,020 - cc_final_message.py[WARNING]: Cloud-init v. 26.2 finished at Sun"},
		{line: "no separator start: here"},
		{line: "2026-11-22 08:00:00,020 - a - b start:", err: true},
		{line: "2026-11-22 08:00:00,020 - x[DEBUG]: start:", err: true},
		{line: "garbage time - x[DEBUG]: start: a: b", err: true},
	} {
		got, err := parseLine(tc.line, now)
		if (err != nil) != tc.err {
			t.Errorf("%q: err = %v", tc.line, err)
			continue
		}
		if (got == nil) != (tc.want == nil) || got != nil && *got != *tc.want {
			t.Errorf("%q:\n got %+v\nwant %+v", tc.line, got, tc.want)
		}
	}
}

func FuzzParseEvents(f *testing.F) {
	logs, _ := filepath.Glob("../cli/testdata/analyze/*/cloud-init.log")
	for _, p := range logs {
		b, err := os.ReadFile(p)
		if err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("2026-11-22 08:00:00,020 - handlers.py[DEBUG]: finish: a: : x\n"))
	f.Add([]byte(`[{"name": "init-local", "event_type": "start", "timestamp": 1}]`))
	now := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, data []byte) {
		evs, err := ParseEvents(data, io.Discard, now)
		if err != nil {
			return
		}
		_ = Show(io.Discard, evs, "%I%D @%Es +%ds %e %n %o %r %t %%")
		_ = Blame(io.Discard, evs)
		_ = Dump(io.Discard, evs)
	})
}
