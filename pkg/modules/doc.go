package modules

import (
	"fmt"
	"sort"
	"strings"
)

// MarkdownTable renders the module compatibility table of docs/modules.md
// from the registry and cloud-init's default stage lists, so the document
// never drifts from the code (a test compares them).
func MarkdownTable() string {
	impl := map[string]Module{}
	for _, m := range Registry() {
		impl[m.Name] = m
	}
	var b strings.Builder
	b.WriteString("| stage | module | cloudroot | frequency | config keys | distros |\n|---|---|---|---|---|---|\n")
	seen := map[string]bool{}
	for _, st := range []Stage{StageInit, StageConfig, StageFinal} {
		for _, n := range DefaultStageLists[st] {
			seen[n] = true
			m, ok := impl[n]
			status := "not yet (keys reported as unsupported)"
			freq := "—"
			keys := knownKeys[n]
			distros := "—"
			if ok {
				status = "yes"
				freq = string(m.Frequency)
				keys = m.Keys
				distros = "all"
				if len(m.Distros) > 0 {
					distros = strings.Join(m.Distros, ", ")
				}
			}
			ks := make([]string, 0, len(keys))
			for _, k := range keys {
				ks = append(ks, "`"+k+"`")
			}
			fmt.Fprintf(&b, "| %s | `%s` | %s | %s | %s | %s |\n", st, n, status, freq, strings.Join(ks, ", "), distros)
		}
	}
	var extra []string
	for n := range impl {
		if !seen[n] {
			extra = append(extra, n)
		}
	}
	sort.Strings(extra)
	for _, n := range extra {
		m := impl[n]
		ks := make([]string, 0, len(m.Keys))
		for _, k := range m.Keys {
			ks = append(ks, "`"+k+"`")
		}
		distros := "all"
		if len(m.Distros) > 0 {
			distros = strings.Join(m.Distros, ", ")
		}
		fmt.Fprintf(&b, "| (not in default lists) | `%s` | yes | %s | %s | %s |\n", n, m.Frequency, strings.Join(ks, ", "), distros)
	}
	return b.String()
}
