package modules

import (
	"fmt"
	"sort"
	"strings"
)

// MarkdownTable renders the module compatibility table of docs/modules.md
// from the registry, cloud-init's default stage lists and doc_tested.go,
// so the document never drifts from the code (a test compares them).
func MarkdownTable() string {
	impl := map[string]Module{}
	for _, m := range Registry() {
		impl[m.Name] = m
	}
	var b strings.Builder
	b.WriteString("| stage | module | cloudroot | frequency | config keys | distros | tested by |\n|---|---|---|---|---|---|---|\n")
	seen := map[string]bool{}
	row := func(stage, n string) {
		seen[n] = true
		m, ok := impl[n]
		status := "not yet (keys reported as unsupported)"
		if why, ok := missing[n]; ok {
			status = "no: " + why
		}
		freq, distros, tested := "—", "—", "—"
		keys := knownKeys[n]
		if ok {
			status, freq, keys, distros = "yes", string(m.Frequency), m.Keys, "all"
			if len(m.Distros) > 0 {
				distros = strings.Join(m.Distros, ", ")
			}
			if p, ok := partial[n]; ok {
				status = p
			}
			tested = howTested[n]
			if tested == "" {
				status, tested = "implemented, untested", "—"
			}
		}
		ks := make([]string, 0, len(keys))
		for _, k := range keys {
			ks = append(ks, "`"+k+"`")
		}
		fmt.Fprintf(&b, "| %s | `%s` | %s | %s | %s | %s | %s |\n", stage, n, status, freq, strings.Join(ks, ", "), distros, tested)
	}
	for _, st := range []Stage{StageInit, StageConfig, StageFinal} {
		for _, n := range DefaultStageLists[st] {
			row(string(st), n)
		}
		var others []string
		for n, s := range otherStages {
			if s == st {
				others = append(others, n)
			}
		}
		sort.Strings(others)
		for _, n := range others {
			row(string(st)+" (other images' lists)", n)
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
		row("(not in default lists)", n)
	}
	return b.String()
}
