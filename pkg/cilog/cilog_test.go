package cilog

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// clock returns a fake clock starting at start, advancing step per call.
func clock(start time.Time, step time.Duration) func() time.Time {
	t := start.Add(-step)
	return func() time.Time { t = t.Add(step); return t }
}

func TestHandlerFormat(t *testing.T) {
	var buf bytes.Buffer
	now := clock(time.Date(2026, 11, 22, 8, 0, 0, 123_456_789, time.UTC), time.Millisecond)
	log := slog.New(NewHandler(&buf, Options{Logger: "stages.py", Now: now}))
	log.Debug("plain")
	log.Info("running module", "module", "ntp", "frequency", "once-per-instance")
	log.With("stage", "init").Warn("bad thing", "err", errors.New("no such file"), "path", "/etc/x y")
	log.Error("fetch failed", LoggerKey, "url_helper.py", "attempt", 2, "duration", 0.25)
	log.WithGroup("g").Info("grouped", "k", "v")
	log.With("datasource", "Ec2").Debug("imds: ok", "url", "http://127.0.0.1/x", "attempt", 1)
	log.With("datasource", "Ec2").Info("probing")
	log.Info("found datasource", "datasource", "DataSourceNoCloud [seed=/dev/sr0]")
	log.Log(context.Background(), LevelDeprecated, "Key 'x' is deprecated in 22.1 and scheduled to be removed in 27.1.", LoggerKey, "lifecycle.py")
	want := `2026-11-22 08:00:00,123 - stages.py[DEBUG]: plain
2026-11-22 08:00:00,124 - cc_ntp.py[INFO]: running module module=ntp frequency=once-per-instance
2026-11-22 08:00:00,125 - stages.py[WARNING]: bad thing stage=init err="no such file" path="/etc/x y"
2026-11-22 08:00:00,126 - url_helper.py[ERROR]: fetch failed attempt=2 duration=0.25
2026-11-22 08:00:00,127 - stages.py[INFO]: grouped g.k=v
2026-11-22 08:00:00,128 - url_helper.py[DEBUG]: imds: ok datasource=Ec2 url=http://127.0.0.1/x attempt=1
2026-11-22 08:00:00,129 - DataSourceEc2.py[INFO]: probing datasource=Ec2
2026-11-22 08:00:00,130 - stages.py[INFO]: found datasource datasource="DataSourceNoCloud [seed=/dev/sr0]"
2026-11-22 08:00:00,131 - lifecycle.py[DEPRECATED]: Key 'x' is deprecated in 22.1 and scheduled to be removed in 27.1.
`
	if diff := cmp.Diff(want, buf.String()); diff != "" {
		t.Errorf("log (-want +got):\n%s", diff)
	}
}

func TestHandlerLevel(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(NewHandler(&buf, Options{Level: slog.LevelWarn}))
	log.Info("hidden")
	if buf.Len() != 0 {
		t.Errorf("info logged at warn level: %q", buf.String())
	}
}

func TestEvents(t *testing.T) {
	var buf bytes.Buffer
	now := clock(time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC), 10*time.Millisecond)
	log := slog.New(NewHandler(&buf, Options{Now: now})).With("stage", "modules-config")
	st := StartStage(log, "init-local", "26.2", now, 3.456)
	s := st.StartSearch("local", "ConfigDrive")
	s.Finish()
	s = st.StartSearch("local", "NoCloud")
	s.Found("local", "NoCloud")
	s.Finish()
	st.Finish()
	st = StartStage(log, "modules-config", "26.2", now, 9)
	m := st.StartModule("ntp", "once-per-instance")
	m.Fail()
	m.Finish()
	m.Finish() // once only
	st.Finish()
	// Each line takes one tick of the handler's clock and one of the
	// events' (they share it here).
	want := `2026-11-22 08:00:00,010 - handlers.py[DEBUG]: start: init-local: searching for local datasources
2026-11-22 08:00:00,030 - log_util.py[DEBUG]: Cloud-init v. 26.2 running 'init-local' at Sun, 22 Nov 2026 08:00:00 +0000. Up 3.46 seconds.
2026-11-22 08:00:00,050 - handlers.py[DEBUG]: start: init-local/search-ConfigDrive: searching for local data from DataSourceConfigDrive
2026-11-22 08:00:00,070 - handlers.py[DEBUG]: finish: init-local/search-ConfigDrive: SUCCESS: no local data found from DataSourceConfigDrive (duration: 0.020s)
2026-11-22 08:00:00,090 - handlers.py[DEBUG]: start: init-local/search-NoCloud: searching for local data from DataSourceNoCloud
2026-11-22 08:00:00,110 - handlers.py[DEBUG]: finish: init-local/search-NoCloud: SUCCESS: found local data from DataSourceNoCloud (duration: 0.020s)
2026-11-22 08:00:00,130 - handlers.py[DEBUG]: finish: init-local: SUCCESS: searching for local datasources (duration: 0.120s)
2026-11-22 08:00:00,150 - handlers.py[DEBUG]: start: modules-config: running modules for config
2026-11-22 08:00:00,170 - log_util.py[DEBUG]: Cloud-init v. 26.2 running 'modules:config' at Sun, 22 Nov 2026 08:00:00 +0000. Up 9.00 seconds.
2026-11-22 08:00:00,190 - handlers.py[DEBUG]: start: modules-config/config-ntp: running config-ntp with frequency once-per-instance
2026-11-22 08:00:00,210 - handlers.py[DEBUG]: finish: modules-config/config-ntp: FAIL: running config-ntp with frequency once-per-instance (duration: 0.020s)
2026-11-22 08:00:00,230 - handlers.py[DEBUG]: finish: modules-config: FAIL: running modules for config (duration: 0.080s)
`
	if diff := cmp.Diff(want, buf.String()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func TestNilEvent(t *testing.T) {
	e := StartStage(nil, "init-local", "x", nil, 0)
	c := e.StartModule("ntp", "always")
	c.Fail()
	c.Finish()
	e.Finish()
	if e != nil || c != nil || e.Name() != "" {
		t.Error("events without a logger are not nil")
	}
}
