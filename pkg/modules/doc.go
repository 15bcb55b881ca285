package modules

import (
	"fmt"
	"sort"
	"strings"
)

// MarkdownTable renders the module compatibility table of docs/modules.md
// from the implemented modules (pkg/modules/builtin's), cloud-init's
// default stage lists and doc_tested.go, so the document never drifts
// from the code (a test compares them).
func MarkdownTable(implemented []Module) string {
	impl := map[string]Module{}
	for _, m := range implemented {
		impl[m.Name] = m
	}
	var b strings.Builder
	b.WriteString("| stage | module | cloudroot | frequency | activated by | config keys | distros | tested by |\n|---|---|---|---|---|---|---|---|\n")
	seen := map[string]bool{}
	row := func(stage, n string) {
		seen[n] = true
		m, ok := impl[n]
		status := "not implemented"
		if why, ok := missing[n]; ok {
			status = "no: " + why
		}
		freq, activate, distros, tested := "—", "—", "—", "—"
		var keys []string
		if ok {
			status, freq, keys, distros = "yes", string(m.Frequency), m.Keys, "all"
			activate = "always"
			if len(m.ActivateBy) > 0 {
				activate = codeList(m.ActivateBy)
			}
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
		fmt.Fprintf(&b, "| %s | `%s` | %s | %s | %s | %s | %s | %s |\n", stage, n, status, freq, activate, codeList(keys), distros, tested)
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

// codeList renders keys as `a`, `b`.
func codeList(keys []string) string {
	ks := make([]string, 0, len(keys))
	for _, k := range keys {
		ks = append(ks, "`"+k+"`")
	}
	return strings.Join(ks, ", ")
}
