package cloudcfg

import (
	"fmt"
	"strings"
)

// MergeModesTable renders the merge-mode table of docs/configuration.md
// from Modes(), so the document never drifts from the code (a test compares
// them).
func MergeModesTable() string {
	var b strings.Builder
	b.WriteString("| merger | option | default | effect |\n|---|---|---|---|\n")
	for _, m := range Modes() {
		def := ""
		if m.Default {
			def = "yes"
		}
		opt := "`" + m.Option + "`"
		if m.Merger == "str" && m.Option == "replace" {
			opt = "(none)"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", m.Merger, opt, def, m.Doc)
	}
	return b.String()
}
