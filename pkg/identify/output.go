package identify

import (
	"strconv"
	"strings"
)

// LogFrame is what the ds-identify.log framing needs besides the Result:
// the arguments and the uptime at start and end (seconds; negative means
// unavailable), and the process ids _print_info reports (0: left out).
type LogFrame struct {
	Args       string
	Start, End float64
	PID, PPID  int
}

// FormatLog renders one run's ds-identify.log entry the way ds-identify
// writes it at its DEBUG_LEVEL: "[up N.NNs] ds-identify <args>", the log
// body (policy, key=value dump, checks, decision), then
// "[up N.NNs] returning <code>".
func (r Result) FormatLog(fr LogFrame) string {
	var b strings.Builder
	b.WriteString("[up " + upString(fr.Start) + "s] ds-identify " + fr.Args + "\n")
	for _, l := range r.Log {
		if strings.HasPrefix(l, "is_container=") && fr.PID != 0 {
			b.WriteString("pid=" + strconv.Itoa(fr.PID) + " ppid=" + strconv.Itoa(fr.PPID) + "\n")
		}
		b.WriteString(l + "\n")
	}
	b.WriteString("[up " + upString(fr.End) + "s] returning " + strconv.Itoa(r.ExitCode) + "\n")
	return b.String()
}

func upString(v float64) string {
	if v < 0 {
		return Unavailable
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}
