package schema

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// ProblemPath is the location `cloud-init schema` prints for f: its key path,
// or format-l<line>.c<column> for a problem with the document itself (""
// for a Root finding).
func ProblemPath(f Finding) string {
	if f.Path != "" || f.Root {
		return f.Path
	}
	return fmt.Sprintf("format-l%d.c%d", max(f.Line, 1), max(f.Column, 1))
}

// Summary joins findings the way cloud-init's SchemaValidationError does:
// "<prefix>path: message, path: message", sorted and without repeats; "" for
// none.
func Summary(prefix string, fs []Finding) string {
	if len(fs) == 0 {
		return ""
	}
	var items []string
	for _, f := range fs {
		items = append(items, ProblemPath(f)+": "+f.Message)
	}
	slices.Sort(items)
	return prefix + strings.Join(slices.Compact(items), ", ")
}

// Prefixes of the summary lines.
const (
	ErrorsPrefix       = "Cloud config schema errors: "
	DeprecationsPrefix = "Cloud config schema deprecations: "
	WarningsPrefix     = "Cloud config schema warnings: "
)

// WriteText prints r as `cloud-init schema --config-file` does: the
// deprecation (and, cloudroot's addition, warning) summaries and "Valid
// schema <source>" on stdout, or "Invalid <kind> <source>" on stdout and
// the error summary and "Error: Invalid schema: <kind>" on stderr. kind is
// the data type ("user-data" when empty).
func WriteText(stdout, stderr io.Writer, r Report, kind string) error {
	if kind == "" {
		kind = "user-data"
	}
	var out, errOut strings.Builder
	if s := Summary(DeprecationsPrefix, r.Of(Deprecation)); s != "" {
		out.WriteString(s + "\n")
	}
	if s := Summary(WarningsPrefix, r.Of(Warning)); s != "" {
		out.WriteString(s + "\n")
	}
	if errs := r.Of(Error); len(errs) > 0 {
		fmt.Fprintf(&out, "Invalid %s %s\n", kind, r.Source)
		fmt.Fprintf(&errOut, "Error: %s\n\nError: Invalid schema: %s\n", Summary(ErrorsPrefix, errs), kind)
	} else {
		fmt.Fprintf(&out, "Valid schema %s\n", r.Source)
	}
	if _, err := io.WriteString(stdout, out.String()); err != nil {
		return fmt.Errorf("schema: write report: %w", err)
	}
	if errOut.Len() > 0 {
		if _, err := io.WriteString(stderr, errOut.String()); err != nil {
			return fmt.Errorf("schema: write report: %w", err)
		}
	}
	return nil
}

// Annotate returns doc with each problem line marked as `cloud-init schema
// --annotate` marks it ("\t\t# E1,D1") followed by footers listing the
// problems ("# Errors: -------------", "# E1: message", ...). Deprecations
// are D<n>, warnings (cloudroot's addition) W<n>. A document without
// findings is returned unchanged.
func Annotate(doc []byte, r Report) string {
	if len(r.Findings) == 0 {
		return string(doc)
	}
	lines := strings.Split(string(doc), "\n")
	byLine := map[int][]Finding{}
	for _, f := range r.Findings {
		l := max(f.Line, 1)
		if l > len(lines) {
			l = len(lines)
		}
		byLine[l] = append(byLine[l], f)
	}
	type footer struct {
		title, label string
		items        []string
	}
	footers := []*footer{{"Errors", "E", nil}, {"Deprecations", "D", nil}, {"Warnings", "W", nil}}
	var out []string
	for i, line := range lines {
		fs := byLine[i+1]
		if len(fs) == 0 {
			out = append(out, line)
			continue
		}
		var labels []string
		for sev, ft := range footers {
			for _, f := range fs {
				if int(f.Severity) != sev {
					continue
				}
				label := fmt.Sprintf("%s%d", ft.label, len(ft.items)+1)
				labels = append(labels, label)
				ft.items = append(ft.items, fmt.Sprintf("# %s: %s", label, f.Message))
			}
		}
		out = append(out, line+"\t\t# "+strings.Join(labels, ","))
	}
	for _, ft := range footers {
		if len(ft.items) > 0 {
			out = append(out, fmt.Sprintf("# %s: -------------\n%s\n\n", ft.title, strings.Join(ft.items, "\n")))
		}
	}
	return strings.Join(out, "\n")
}
