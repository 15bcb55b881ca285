package harness

import (
	"bufio"
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// CloudInitLogPath is the debug log both cloud-init and cloudroot write.
const CloudInitLogPath = "/var/log/cloud-init.log"

// ModuleTimes reads per-module durations (seconds, keyed by the module's
// cloud-init name, e.g. ssh, scripts_user) from a /var/log/cloud-init.log
// of either kind: cloud-init's reporting events, as `cloud-init analyze`
// reads them ("<asctime> - handlers.py[DEBUG]: start: init-network/config-ssh: ..."
// and the matching "finish:" line; finish minus start), or cloudroot's
// slog lines ("msg=\"finished module\" module=ssh duration=1.27").
// A module that ran in several stages adds up.
func ModuleTimes(log []byte) map[string]float64 {
	out := map[string]float64{}
	starts := map[string]time.Time{}
	sc := bufio.NewScanner(bytes.NewReader(log))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if name, d, ok := cloudrootModuleLine(line); ok {
			out[name] += d
			continue
		}
		kind, event, ts, ok := cloudInitEvent(line)
		if !ok {
			continue
		}
		_, mod, found := strings.Cut(event, "/config-")
		if !found || mod == "" || strings.Contains(mod, "/") {
			continue
		}
		name := strings.ReplaceAll(mod, "-", "_")
		switch kind {
		case "start":
			starts[event] = ts
		case "finish":
			if s, ok := starts[event]; ok && !ts.Before(s) {
				out[name] += ts.Sub(s).Seconds()
				delete(starts, event)
			}
		}
	}
	return out
}

var (
	slogModuleRE   = regexp.MustCompile(` module=("(?:[^"\\]|\\.)*"|\S+)`)
	slogDurationRE = regexp.MustCompile(` duration=([0-9][0-9.eE+-]*)(?:\s|$)`)
)

// cloudrootModuleLine reads a module's end from one of cloudroot's slog
// text lines: "finished module", or a failed module's "Running module ...
// failed" error, both carrying module= and duration= (seconds).
func cloudrootModuleLine(line string) (string, float64, bool) {
	if !strings.Contains(line, `msg="finished module"`) && !strings.Contains(line, `msg="Running module `) {
		return "", 0, false
	}
	m, d := slogModuleRE.FindStringSubmatch(line), slogDurationRE.FindStringSubmatch(line)
	if m == nil || d == nil {
		return "", 0, false
	}
	name := m[1]
	if u, err := strconv.Unquote(name); err == nil {
		name = u
	}
	secs, err := strconv.ParseFloat(d[1], 64)
	if err != nil || secs < 0 || name == "" {
		return "", 0, false
	}
	return name, secs, true
}

// cloudInitEvent reads one reporting event from a cloud-init.log line in
// its default format, "2026-11-25 15:22:01,123 - handlers.py[DEBUG]:
// start: init-network/config-ssh: running config-ssh ...".
func cloudInitEvent(line string) (kind, name string, ts time.Time, ok bool) {
	stamp, rest, found := strings.Cut(line, " - ")
	if !found {
		return "", "", time.Time{}, false
	}
	t, err := time.Parse("2006-01-02 15:04:05,000", strings.TrimSpace(stamp))
	if err != nil {
		return "", "", time.Time{}, false
	}
	f := strings.Fields(rest)
	if len(f) < 3 || (f[1] != "start:" && f[1] != "finish:") {
		return "", "", time.Time{}, false
	}
	return strings.TrimSuffix(f[1], ":"), strings.TrimSuffix(f[2], ":"), t, true
}

var hostKeyCPURE = regexp.MustCompile(`(?m)(?:msg="host key generation"|\]: host key generation) .*\bcpu=([0-9][0-9.]*)s(?:\s|$)`)

// HostKeyCPU reads the CPU seconds cloudroot's initramfs spent generating
// host keys in the background (cloud-init.log's "… [INFO]: host key
// generation keys=3 cpu=2.345s", or slog's text form); ok is false when
// the log has no such line (cloud-init's, or keys made in the booted
// system).
func HostKeyCPU(log []byte) (secs float64, ok bool) {
	for _, m := range hostKeyCPURE.FindAllSubmatch(log, -1) {
		if v, err := strconv.ParseFloat(string(m[1]), 64); err == nil && v >= 0 {
			secs += v
			ok = true
		}
	}
	return secs, ok
}
