package cli

// analyze plot: the most recent boot as a timeline picture (SVG, or HTML
// with the same SVG inline). Time runs left to right in seconds since the
// kernel started; one row per step:
//
//   - kernel: from 0 to the first initramfs step, when the hand-off state
//     is there;
//   - the initramfs's own steps (early, drivers, entropy, mount-root,
//     detect, local, init, handoff) from the hand-off state's timings,
//     then a switch_root marker where the hand-off ends (after the last
//     step when the state predates the hand-off's own timing);
//   - the stages of cloud-init.log (init-local, init-network,
//     modules-config, modules-final) with one row per datasource attempt
//     and per module under them, failures in red.
//
// Log times are wall-clock; they are placed on the uptime axis by matching
// init-local's start in the log with its start in status.json. Without
// status.json the log's first event is placed at 0. The slowest steps
// (the five longest non-stage rows) are labelled "#1".."#5".

import (
	"encoding/json"
	"fmt"
	"html"
	"io"
	"math"
	"os"
	"sort"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/cilog"
	"github.com/cloudroot/cloudroot/pkg/state"
)

// plotRow is one bar.
type plotRow struct {
	name       string
	kind       string // "kernel", "initramfs", "stage", "step"
	start, end float64
	failed     bool
	rank       int // 1.. for the slowest steps
}

// plotSlowest is how many of the slowest steps are labelled.
const plotSlowest = 5

// lastBoot returns the events of the most recent boot (from the last
// init-local start).
func lastBoot(events []cilog.LogEvent) []cilog.LogEvent {
	from := 0
	for i, e := range events {
		if e.EventType == "start" && e.Name == "init-local" && (i == 0 || events[i-1].Name != "init-local") {
			from = i
		}
	}
	return events[from:]
}

// plotRows builds the rows from the log's events, the initramfs timings and
// init-local's start in uptime seconds (nil when unknown).
func plotRows(events []cilog.LogEvent, timings []state.Timing, localStart *float64) []plotRow {
	var rows []plotRow
	events = lastBoot(events)
	offset := 0.0
	if len(events) > 0 {
		offset = -events[0].Timestamp
		if localStart != nil {
			offset = *localStart - events[0].Timestamp
		}
	}
	first := math.Inf(1)
	for _, t := range timings {
		if strings.Contains(t.Stage, "/") {
			continue // init/<module>: the log has them
		}
		first = math.Min(first, t.Start)
	}
	if len(timings) > 0 && first > 0 && !math.IsInf(first, 1) {
		rows = append(rows, plotRow{name: "kernel", kind: "kernel", start: 0, end: first})
	}
	handoffEnd := -1.0
	for _, t := range timings {
		if strings.Contains(t.Stage, "/") {
			continue
		}
		rows = append(rows, plotRow{name: "initramfs: " + t.Stage, kind: "initramfs", start: t.Start, end: t.Start + t.Duration, failed: t.Error != ""})
		if t.Stage == "handoff" {
			handoffEnd = t.Start + t.Duration
		}
	}
	if handoffEnd < 0 && len(rows) > 0 && rows[len(rows)-1].kind == "initramfs" {
		// The hand-off step's own timing is taken after the state is
		// written (the instance mirror lacks it): switch_root follows the
		// last recorded step within the hand-off's few milliseconds.
		handoffEnd = rows[len(rows)-1].end
	}
	if handoffEnd >= 0 {
		rows = append(rows, plotRow{name: "switch_root", kind: "marker", start: handoffEnd, end: handoffEnd})
	}
	// Pair starts with finishes by name; a stage row goes before its
	// children, in start order.
	open := map[string]int{}
	for _, e := range events {
		t := e.Timestamp + offset
		switch e.EventType {
		case "start":
			if _, dup := open[e.Name]; dup {
				continue // the banner repeats the stage's start
			}
			kind := "step"
			if !strings.Contains(e.Name, "/") {
				kind = "stage"
			}
			open[e.Name] = len(rows)
			rows = append(rows, plotRow{name: e.Name, kind: kind, start: t, end: t})
		case "finish":
			if i, ok := open[e.Name]; ok {
				rows[i].end = t
				rows[i].failed = e.Result == "FAIL"
				delete(open, e.Name)
			}
		}
	}
	var steps []int
	for i, r := range rows {
		if r.kind == "step" || r.kind == "initramfs" {
			steps = append(steps, i)
		}
	}
	sort.SliceStable(steps, func(a, b int) bool {
		return rows[steps[a]].end-rows[steps[a]].start > rows[steps[b]].end-rows[steps[b]].start
	})
	for k, i := range steps {
		if k == plotSlowest || rows[i].end <= rows[i].start {
			break
		}
		rows[i].rank = k + 1
	}
	return rows
}

// niceStep is a 1-2-5 tick spacing giving at most about ten ticks.
func niceStep(span float64) float64 {
	if span <= 0 {
		return 1
	}
	raw := span / 10
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if raw <= m*p {
			return m * p
		}
	}
	return 10 * p
}

// renderSVG draws rows.
func renderSVG(w io.Writer, rows []plotRow, title string) {
	const (
		labelW = 300.0
		chartW = 720.0
		rowH   = 20.0
		top    = 56.0
		right  = 130.0
	)
	end := 0.0
	for _, r := range rows {
		end = math.Max(end, r.end)
	}
	if end <= 0 {
		end = 1
	}
	step := niceStep(end)
	end = math.Ceil(end/step) * step
	x := func(t float64) float64 { return labelW + t/end*chartW }
	h := top + float64(len(rows))*rowH + 40
	width := labelW + chartW + right
	fmt.Fprintf(w, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="DejaVu Sans, Helvetica, Arial, sans-serif" font-size="12">`+"\n", width, h, width, h)
	fmt.Fprint(w, `<style>.kernel{fill:#9e9e9e}.initramfs{fill:#5c6bc0}.stage{fill:#26a69a}.step{fill:#80cbc4}.fail{fill:#e53935}.slow{font-weight:bold;fill:#bf360c}.grid{stroke:#e0e0e0}.lbl{fill:#212121}.dur{fill:#616161}</style>`+"\n")
	fmt.Fprintf(w, `<rect width="100%%" height="100%%" fill="#ffffff"/>`+"\n")
	fmt.Fprintf(w, `<text x="10" y="22" font-size="16" font-weight="bold">%s</text>`+"\n", html.EscapeString(title))
	fmt.Fprintf(w, `<text x="10" y="40" class="dur">seconds since the kernel started; the %d slowest steps are marked #1..#%d</text>`+"\n", plotSlowest, plotSlowest)
	for t := 0.0; t <= end+step/2; t += step {
		fmt.Fprintf(w, `<line class="grid" x1="%.1f" y1="%.0f" x2="%.1f" y2="%.0f"/>`+"\n", x(t), top-4, x(t), h-32)
		fmt.Fprintf(w, `<text x="%.1f" y="%.0f" text-anchor="middle" class="dur">%gs</text>`+"\n", x(t), h-18, math.Round(t*1000)/1000)
	}
	for i, r := range rows {
		y := top + float64(i)*rowH
		name := r.name
		indent := 0.0
		if r.kind == "step" {
			indent = 14
			name = name[strings.LastIndex(name, "/")+1:]
		}
		fmt.Fprintf(w, `<text x="%.0f" y="%.1f" class="lbl">%s</text>`+"\n", 10+indent, y+14, html.EscapeString(name))
		if r.kind == "marker" {
			fmt.Fprintf(w, `<line x1="%.1f" y1="%.0f" x2="%.1f" y2="%.0f" stroke="#ff6f00" stroke-width="2" stroke-dasharray="4 3" data-name="switch_root"/>`+"\n", x(r.start), top-4, x(r.start), h-32)
			fmt.Fprintf(w, `<text x="%.1f" y="%.1f" class="slow">switch_root @ %.3fs</text>`+"\n", x(r.start)+4, y+14, r.start)
			continue
		}
		class := r.kind
		if r.failed {
			class = "fail"
		}
		bw := math.Max(x(r.end)-x(r.start), 1)
		d := r.end - r.start
		fmt.Fprintf(w, `<rect class="bar %s" data-name="%s" x="%.1f" y="%.1f" width="%.1f" height="%.0f" rx="2"><title>%s: %.3fs (from %.3fs)</title></rect>`+"\n",
			class, html.EscapeString(r.name), x(r.start), y+3, bw, rowH-6, html.EscapeString(r.name), d, r.start)
		label := fmt.Sprintf("%.3fs", d)
		lclass := "dur"
		if r.rank > 0 {
			label = fmt.Sprintf("#%d %.3fs", r.rank, d)
			lclass = "slow"
		}
		if r.failed {
			label += " FAIL"
		}
		fmt.Fprintf(w, `<text x="%.1f" y="%.1f" class="%s">%s</text>`+"\n", x(r.start)+bw+4, y+14, lclass, label)
	}
	fmt.Fprint(w, "</svg>\n")
}

// analyzePlot writes the picture of the last boot in the log.
func analyzePlot(env *Env, out io.Writer, events []cilog.LogEvent, format string) error {
	// The initramfs's phases come from the hand-off in /run, or, when /run
	// no longer holds it (a later boot's tmpfs, a root that cleared it),
	// from its mirror in the instance directory.
	var timings []state.Timing
	for _, p := range []string{state.StateFile, state.InstanceLink + "/" + state.InstanceStateName} {
		b, err := os.ReadFile(env.Path(p))
		if err != nil {
			continue
		}
		var s struct {
			Timings []state.Timing `json:"timings"`
		}
		if json.Unmarshal(b, &s) == nil && len(s.Timings) > 0 {
			timings = s.Timings
			break
		}
	}
	var localStart *float64
	if b, err := os.ReadFile(env.Path(state.StatusFile)); err == nil {
		var st state.Status
		if json.Unmarshal(b, &st) == nil {
			localStart = st.Get(state.StageInitLocal).Start
		}
	}
	rows := plotRows(events, timings, localStart)
	if len(rows) == 0 {
		return fmt.Errorf("no boot events in the log")
	}
	title := "cloudroot boot timeline"
	if format == "html" {
		fmt.Fprintf(out, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>%s</title></head>\n<body style=\"margin:0;background:#fafafa\">\n", title)
		renderSVG(out, rows, title)
		fmt.Fprint(out, "</body></html>\n")
		return nil
	}
	renderSVG(out, rows, title)
	return nil
}
