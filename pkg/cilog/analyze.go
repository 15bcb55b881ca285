package cilog

// The reader side: cloud-init's analyze (cloudinit/analyze/dump.py and
// show.py) rebuilt, quirks included, so that `cloudroot analyze` prints what
// `cloud-init analyze` prints for the same log:
//
//   - a line is an event candidate when it contains "start:", "finish:" or
//     "Cloud-init v."; it must split on its separator (" - ", " [CLOUDINIT] "
//     or " cloud-init[") into exactly two parts;
//   - a candidate that does not parse is reported as "Skipping invalid
//     entry" and the previous event is counted again (dump.py keeps the
//     last parsed event in a variable it appends once more);
//   - the stage banner "Cloud-init v. V running 'S' at ..." is a start event
//     for S, "finished at" banners are ignored;
//   - show walks the events in file order, pairing a start with the event
//     right after it when that is its finish, and treating other starts as
//     stages; a new init-local start opens a new boot record.
//
// Timestamps: "YYYY-MM-DD HH:MM:SS,fff" and syslog's "Mon DD HH:MM:SS[.ffffff]"
// (this year, as cloud-init assumes) are read as UTC. cloud-init hands any
// other form to GNU date(1); cloudroot reports it as an invalid entry.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cloudroot/cloudroot/pkg/internal/pyval"
)

// LogEvent is one event as analyze dump prints it.
type LogEvent struct {
	Name        string
	Description string
	EventType   string
	Origin      string
	Result      string // finish events only
	Timestamp   float64
}

// stageBannerDescriptions is dump.py's stage_to_description.
var stageBannerDescriptions = sync.OnceValue(func() map[string]string {
	return map[string]string{
		"finished":       "finished running cloud-init",
		"init-local":     "starting search for local datasources",
		"init-network":   "searching for network datasources",
		"init":           "searching for network datasources",
		"modules-config": "running config modules",
		"modules-final":  "finalizing modules",
		"modules":        "running modules for",
		"single":         "running single module ",
	}
})

var errInvalid = errors.New("invalid entry")

// ParseEvents reads a cloud-init.log (or the JSON analyze dump writes) into
// events; each unparsable candidate line is reported on warn as cloud-init
// reports it. now gives the year for syslog timestamps.
func ParseEvents(data []byte, warn io.Writer, now time.Time) ([]LogEvent, error) {
	if evs, ok := parseDumpJSON(data); ok {
		return evs, nil
	}
	var events []LogEvent
	var last *LogEvent
	for _, line := range splitLines(string(data)) {
		for _, m := range []string{"start:", "finish:", "Cloud-init v."} {
			if !strings.Contains(line, m) {
				continue
			}
			ev, err := parseLine(line, now)
			switch {
			case errors.Is(err, errInvalid):
				fmt.Fprint(warn, "Skipping invalid entry\n")
			case err != nil:
				return events, err
			default:
				last = ev
			}
			if last != nil {
				events = append(events, *last)
			}
		}
	}
	return events, nil
}

// splitLines is Python's str.splitlines for the separators a log holds.
func splitLines(s string) []string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	lines := strings.Split(s, "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

func parseDumpJSON(data []byte) ([]LogEvent, bool) {
	var raw []map[string]any
	if err := json.Unmarshal(data, &raw); err != nil || len(raw) == 0 {
		return nil, false
	}
	out := make([]LogEvent, 0, len(raw))
	for _, m := range raw {
		s := func(k string) string { v, _ := m[k].(string); return v }
		ts, _ := m["timestamp"].(float64)
		out = append(out, LogEvent{Name: s("name"), Description: s("description"), EventType: s("event_type"),
			Origin: s("origin"), Result: s("result"), Timestamp: ts})
	}
	return out, true
}

// parseLine is dump.py's parse_ci_logline: nil, nil for a line that is not
// an event (no separator, a "finished at" banner).
func parseLine(line string, now time.Time) (*LogEvent, error) {
	const amazon = " cloud-init["
	sep := ""
	for _, s := range []string{" - ", " [CLOUDINIT] ", amazon} {
		if strings.Contains(line, s) {
			sep = s
			break
		}
	}
	if sep == "" {
		return nil, nil
	}
	parts := strings.Split(line, sep)
	if len(parts) != 2 {
		return nil, errInvalid
	}
	timehost, eventstr := parts[0], parts[1]
	if strings.HasSuffix(timehost, ":") {
		f := strings.Fields(timehost)
		timehost = strings.Join(f[:len(f)-1], " ")
	}
	var tsStr string
	if strings.Contains(timehost, ",") {
		p := strings.Split(timehost, ",")
		if len(p) != 2 {
			return nil, errInvalid
		}
		extra := strings.Fields(p[1])
		if len(extra) == 0 {
			return nil, errInvalid
		}
		tsStr = p[0] + "," + extra[0]
	} else {
		f := strings.Fields(timehost)
		if len(f) == 0 {
			return nil, errInvalid
		}
		host := f[len(f)-1]
		if sep == amazon {
			tsStr = strings.TrimSpace(timehost)
			ef := strings.SplitN(strings.TrimLeft(eventstr, " \t\n"), " ", 2)
			if len(ef) < 2 {
				return nil, errInvalid
			}
			eventstr = strings.TrimLeft(ef[1], " \t\n")
		} else {
			tsStr = strings.TrimSpace(strings.Split(timehost, host)[0])
		}
	}
	var ev LogEvent
	if strings.Contains(eventstr, "Cloud-init v.") {
		if !strings.Contains(eventstr, "running") {
			return nil, nil
		}
		st := strings.TrimLeft(strings.Split(eventstr, "running")[1], " \t\n")
		p := strings.Split(st, " at ")
		if len(p) != 2 {
			return nil, errInvalid
		}
		name := strings.ReplaceAll(strings.ReplaceAll(p[0], "'", ""), ":", "-")
		if name == "init" {
			name = "init-network"
		}
		desc, ok := stageBannerDescriptions()[name]
		if !ok {
			return nil, fmt.Errorf("KeyError: '%s'", name)
		}
		ev = LogEvent{EventType: "start", Name: name, Description: desc}
	} else {
		f := strings.Fields(eventstr)
		if len(f) < 3 {
			return nil, errInvalid
		}
		name := f[2]
		ev = LogEvent{EventType: f[1], Name: name,
			Description: strings.TrimSpace(strings.Split(eventstr, name)[1])}
	}
	ts, err := parseTimestamp(tsStr, now)
	if err != nil {
		return nil, errInvalid
	}
	ev.Name = strings.TrimRight(ev.Name, ":")
	ev.EventType = strings.TrimRight(ev.EventType, ":")
	ev.Timestamp = ts
	ev.Origin = "cloudinit"
	if ev.EventType == "finish" {
		res := strings.Split(ev.Description, ":")[0]
		if res == "" {
			return nil, errInvalid // Python: empty separator
		}
		ev.Result = res
		ev.Description = strings.TrimSpace(strings.TrimLeft(strings.Split(ev.Description, res)[1], ":"))
	}
	return &ev, nil
}

var months = "Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec"

func parseTimestamp(s string, now time.Time) (float64, error) {
	f := strings.Fields(s)
	if len(f) > 0 && len(f[0]) == 3 && strings.Contains(months, f[0]) {
		layout := "Jan 02 15:04:05 2006"
		if strings.Contains(s, ".") {
			layout = "Jan 02 15:04:05.000000 2006"
		}
		t, err := time.Parse(layout, s+" "+strconv.Itoa(now.Year()))
		if err != nil {
			return 0, err
		}
		return float64(t.UnixMicro()) / 1e6, nil
	}
	if strings.Contains(s, ",") {
		p := strings.SplitN(s, ",", 2)
		if len(p[1]) == 0 || len(p[1]) > 6 || strings.Trim(p[1], "0123456789") != "" {
			return 0, errInvalid
		}
		t, err := time.Parse("2006-01-02 15:04:05", p[0])
		if err != nil {
			return 0, err
		}
		us, _ := strconv.Atoi(p[1] + strings.Repeat("0", 6-len(p[1])))
		return float64(t.Unix()*1_000_000+int64(us)) / 1e6, nil
	}
	return 0, errInvalid
}

// micros is datetime.fromtimestamp's rounding to microseconds.
func micros(ts float64) int64 {
	sec := math.Floor(ts)
	return int64(sec)*1_000_000 + int64(math.RoundToEven((ts-sec)*1e6))
}

func deltaSeconds(a, b float64) float64 { return float64(micros(b)-micros(a)) / 1e6 }

// record is show.py's event_record: the finish event with delta, elapsed
// and indent.
type record struct {
	LogEvent
	delta, elapsed float64
	indent         string
}

// FormatRecord expands show's format keys (%d delta, %D description, %E
// elapsed, %e event type, %I indent, %l level, %n name, %o origin, %r
// result, %t timestamp, %T total time).
func formatRecord(format string, r record) string {
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		if format[i] != '%' || i+1 == len(format) {
			b.WriteByte(format[i])
			continue
		}
		i++
		switch format[i] {
		case 'd':
			fmt.Fprintf(&b, "%08.5f", r.delta)
		case 'D':
			b.WriteString(r.Description)
		case 'E':
			fmt.Fprintf(&b, "%08.5f", r.elapsed)
		case 'e':
			b.WriteString(r.EventType)
		case 'I':
			b.WriteString(r.indent)
		case 'n':
			b.WriteString(r.Name)
		case 'o':
			b.WriteString(r.Origin)
		case 'r':
			b.WriteString(r.Result)
		case 't':
			fmt.Fprintf(&b, "%08.5f", r.Timestamp)
		default:
			b.WriteByte('%')
			b.WriteByte(format[i])
		}
	}
	return b.String()
}

func newRecord(start float64, s, f LogEvent) record {
	indent := "|"
	if s.Name != "" {
		indent += strings.Repeat(" ", max(strings.Count(s.Name, "/")-1, 0)) + "`->"
	}
	return record{LogEvent: f, delta: deltaSeconds(s.Timestamp, f.Timestamp), elapsed: deltaSeconds(start, s.Timestamp), indent: indent}
}

// Records is show.py's generate_records: per boot, the formatted lines.
func Records(events []LogEvent, format string) ([][]string, error) {
	var boots [][]string
	var lines []string
	var unprocessed []LogEvent
	started := false
	var start, total float64
	totalLine := func() string { return fmt.Sprintf("Total Time: %3.5f seconds\n", total) }
	for i, ev := range events {
		var next *LogEvent
		if i+1 < len(events) {
			next = &events[i+1]
		}
		if ev.EventType == "start" {
			if len(lines) > 0 && ev.Name == "init-local" {
				boots = append(boots, append(lines, totalLine()))
				lines, started, total = nil, false, 0
			}
			if !started {
				start, started = ev.Timestamp, true
			}
			if next != nil && ev.Name == next.Name {
				if next.EventType == "finish" {
					lines = append(lines, formatRecord(format, newRecord(start, ev, *next)))
				}
			} else {
				lines = append(lines, "Starting stage: "+ev.Name)
				unprocessed = append(unprocessed, ev)
			}
			continue
		}
		if len(unprocessed) == 0 {
			return nil, errors.New("IndexError: pop from empty list")
		}
		prev := unprocessed[len(unprocessed)-1]
		unprocessed = unprocessed[:len(unprocessed)-1]
		if ev.Name != prev.Name {
			unprocessed = append(unprocessed, prev)
			continue
		}
		if started {
			r := newRecord(start, prev, ev)
			lines = append(lines, formatRecord("Finished stage: (%n) %d seconds", r)+"\n")
			total += r.delta
		}
	}
	boots = append(boots, append(lines, totalLine()))
	return boots, nil
}

// Show writes analyze show's report.
func Show(w io.Writer, events []LogEvent, format string) error {
	boots, err := Records(events, format)
	if err != nil {
		return err
	}
	for i, rec := range boots {
		fmt.Fprintf(w, "-- Boot Record %02d --\n", i+1)
		fmt.Fprint(w, "The total time elapsed since completing an event is printed after the \"@\" character.\n")
		fmt.Fprint(w, "The time the event takes is printed after the \"+\" character.\n\n")
		fmt.Fprint(w, strings.Join(rec, "\n")+"\n")
	}
	fmt.Fprintf(w, "%d boot records analyzed\n", len(boots))
	return nil
}

var blameLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s+\d+\.\d+`) })

// Blame writes analyze blame's report: each boot's events, slowest first.
func Blame(w io.Writer, events []LogEvent) error {
	boots, err := Records(events, "     %ds (%n)")
	if err != nil {
		return err
	}
	for i, rec := range boots {
		var s []string
		for _, l := range rec {
			if blameLine().MatchString(l) {
				s = append(s, l)
			}
		}
		sort.Sort(sort.Reverse(sort.StringSlice(s)))
		fmt.Fprintf(w, "-- Boot Record %02d --\n", i+1)
		fmt.Fprint(w, strings.Join(s, "\n")+"\n\n")
	}
	fmt.Fprintf(w, "%d boot records analyzed\n", len(boots))
	return nil
}

// Dump writes the events as analyze dump does: json.dumps(events,
// indent=1, sort_keys=True) and a newline; a finish event carries its
// result when it has one.
func Dump(w io.Writer, events []LogEvent) error {
	list := make([]any, 0, len(events))
	for _, ev := range events {
		m := map[string]any{"description": ev.Description, "event_type": ev.EventType,
			"name": ev.Name, "origin": ev.Origin, "timestamp": ev.Timestamp}
		if ev.EventType == "finish" && ev.Result != "" {
			m["result"] = ev.Result
		}
		list = append(list, m)
	}
	out, err := pyval.JSONDumps(list, pyval.JSONOptions{Indent: 1, SortKeys: true})
	if err != nil {
		return fmt.Errorf("writing the analyze dump: %w", err)
	}
	_, err = io.WriteString(w, out+"\n")
	return err
}
