package cilog

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// Result is a finish event's outcome, as cloudinit.reporting.events.status.
type Result string

// The results cloud-init reports.
const (
	Success Result = "SUCCESS"
	Fail    Result = "FAIL"
	Warn    Result = "WARN"
)

// EventLogger is the file cloud-init's reporting LogHandler logs events under.
const EventLogger = "handlers.py"

// BannerLogger is the file cloud-init's stage banner is logged under.
const BannerLogger = "log_util.py"

// Event is one cloud-init reporting event stack (ReportEventStack): Start
// logs "start: NAME: DESCRIPTION"; Finish logs "finish: NAME: RESULT:
// MESSAGE (duration: N.NNNs)" where MESSAGE is the description unless set
// and RESULT is FAIL when the event or one of its children failed. A nil
// *Event (no logger) does nothing, so callers never check.
type Event struct {
	log         *slog.Logger
	parent      *Event
	fullName    string
	description string
	message     string
	now         func() time.Time
	start       time.Time
	failed      bool
	childFailed bool
	done        bool
}

// Start logs the start of a top-level event (a stage: "init-local"). now
// is the clock durations are measured with (time.Now when nil).
func Start(log *slog.Logger, now func() time.Time, name, description string) *Event {
	if log == nil {
		return nil
	}
	if now == nil {
		now = time.Now
	}
	e := &Event{log: log, now: now, fullName: name, description: description, start: now()}
	e.emit(fmt.Sprintf("start: %s: %s", name, description))
	return e
}

// Child logs the start of an event nested in e ("init-local/search-NoCloud").
func (e *Event) Child(name, description string) *Event {
	if e == nil {
		return nil
	}
	c := &Event{log: e.log, now: e.now, parent: e, fullName: e.fullName + "/" + name, description: description, start: e.now()}
	c.emit(fmt.Sprintf("start: %s: %s", c.fullName, description))
	return c
}

// Name is the event's full name ("modules-config/config-ntp").
func (e *Event) Name() string {
	if e == nil {
		return ""
	}
	return e.fullName
}

// SetMessage sets the finish line's text (the description by default).
func (e *Event) SetMessage(msg string) {
	if e != nil {
		e.message = msg
	}
}

// Fail marks the event failed (an exception in cloud-init's terms).
func (e *Event) Fail() {
	if e != nil {
		e.failed = true
	}
}

// Finish logs the finish line once; later calls do nothing.
func (e *Event) Finish() {
	if e == nil || e.done {
		return
	}
	e.done = true
	res := Success
	if e.failed || e.childFailed {
		res = Fail
	}
	if res == Fail && e.parent != nil {
		e.parent.childFailed = true
	}
	msg := e.message
	if msg == "" {
		msg = e.description
	}
	e.emit(fmt.Sprintf("finish: %s: %s: %s (duration: %.3fs)", e.fullName, res, msg, e.now().Sub(e.start).Seconds()))
}

func (e *Event) emit(msg string) {
	e.log.LogAttrs(context.Background(), slog.LevelDebug, msg,
		slog.String(LoggerKey, EventLogger), slog.Bool(eventKey, true))
}

// Banner logs cloud-init's stage banner, "Cloud-init v. VERSION running
// 'ACTION' at Wed, 25 Nov 2026 15:20:53 +0000. Up 3.45 seconds.", which
// analyze also reads as a stage start. action is "init-local", "init",
// "modules:config" or "modules:final"; now is UTC-formatted as
// time.gmtime; uptime is seconds since boot.
func Banner(log *slog.Logger, version, action string, now time.Time, uptime float64) {
	if log == nil {
		return
	}
	msg := fmt.Sprintf("Cloud-init v. %s running '%s' at %s. Up %.2f seconds.",
		version, action, now.UTC().Format("Mon, 02 Jan 2006 15:04:05 -0700"), uptime)
	log.LogAttrs(context.Background(), slog.LevelDebug, msg,
		slog.String(LoggerKey, BannerLogger), slog.Bool(eventKey, true))
}

// Stage names and descriptions as cloud-init's main() reports them.
var stageDescriptions = sync.OnceValue(func() map[string]string {
	return map[string]string{
		"init-local":     "searching for local datasources",
		"init-network":   "searching for network datasources",
		"modules-config": "running modules for config",
		"modules-final":  "running modules for final",
	}
})

// bannerActions is the action each stage's banner names.
var bannerActions = sync.OnceValue(func() map[string]string {
	return map[string]string{
		"init-local":     "init-local",
		"init-network":   "init",
		"modules-config": "modules:config",
		"modules-final":  "modules:final",
	}
})

// StartStage logs a stage's start event and its banner, as cloud-init's
// main() does for init-local, init-network, modules-config, modules-final.
// now is the clock (time.Now when nil), uptime the seconds since boot.
func StartStage(log *slog.Logger, stage, version string, now func() time.Time, uptime float64) *Event {
	desc, ok := stageDescriptions()[stage]
	if !ok {
		desc = fmt.Sprintf("running 'cloud-init %s'", stage)
	}
	e := Start(log, now, stage, desc)
	if a, ok := bannerActions()[stage]; ok && e != nil {
		Banner(log, version, a, e.now(), uptime)
	}
	return e
}

// StartModule logs a module's start event under its stage, as cloud-init's
// Modules._run_modules: "config-NAME", "running config-NAME with frequency F".
func (e *Event) StartModule(name, frequency string) *Event {
	run := "config-" + name
	return e.Child(run, fmt.Sprintf("running %s with frequency %s", run, frequency))
}

// StartSearch logs a datasource attempt under its stage, as cloud-init's
// find_source: "search-NoCloud", "searching for local data from
// DataSourceNoCloud"; FoundSearch/NotFound set its finish message.
func (e *Event) StartSearch(mode, source string) *Event {
	c := e.Child("search-"+source, fmt.Sprintf("searching for %s data from DataSource%s", mode, source))
	c.SetMessage(fmt.Sprintf("no %s data found from DataSource%s", mode, source))
	return c
}

// Found sets a datasource attempt's finish message to a success.
func (e *Event) Found(mode, source string) {
	e.SetMessage(fmt.Sprintf("found %s data from DataSource%s", mode, source))
}
