package identify

import (
	"fmt"
	"github.com/cloudroot/cloudroot/pkg/internal/golden"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const (
	docPath    = "../../docs/identify.md"
	beginRules = "<!-- BEGIN GENERATED: rules (go test ./pkg/identify -run TestDocs -update) -->"
	endRules   = "<!-- END GENERATED: rules -->"
)

// rulesTable renders the registry as the Markdown table of docs/identify.md.
func rulesTable() string {
	var b strings.Builder
	b.WriteString("| # | datasource | ds-identify rule |\n|---|---|---|\n")
	for i, d := range Datasources() {
		fmt.Fprintf(&b, "| %d | %s | %s |\n", i+1, d.Name, strings.ReplaceAll(d.Rule, "|", `\|`))
	}
	return b.String()
}

// TestDocs keeps docs/identify.md's rule table in step with the registry.
func TestDocs(t *testing.T) {
	b, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	i, j := strings.Index(doc, beginRules), strings.Index(doc, endRules)
	if i < 0 || j < i {
		t.Fatalf("%s: generated-rules markers missing", docPath)
	}
	head, tail := doc[:i+len(beginRules)], doc[j:]
	want := head + "\n" + rulesTable() + tail
	if golden.Update() {
		if err := os.WriteFile(docPath, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if diff := cmp.Diff(want, doc); diff != "" {
		t.Errorf("%s is stale; run go test ./pkg/identify -run TestDocs -update (-want +got):\n%s", docPath, diff)
	}
}
