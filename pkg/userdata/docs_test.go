package userdata

import (
	"github.com/cloudroot/cloudroot/pkg/internal/golden"
	"os"
	"strings"
	"testing"
)

const (
	docFile   = "../../docs/userdata.md"
	beginMark = "<!-- BEGIN GENERATED: formats -->\n"
	endMark   = "<!-- END GENERATED: formats -->"
)

// TestDocsTable fails when docs/userdata.md's table drifts from Formats;
// -update rewrites it.
func TestDocsTable(t *testing.T) {
	b, err := os.ReadFile(docFile)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	i := strings.Index(doc, beginMark)
	j := strings.Index(doc, endMark)
	if i < 0 || j < i {
		t.Fatalf("%s: generated-table markers missing", docFile)
	}
	want := doc[:i+len(beginMark)] + MarkdownTable() + doc[j:]
	if want == doc {
		return
	}
	if golden.Update() {
		if err := os.WriteFile(docFile, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s: the formats table is stale; run go test ./pkg/userdata -run TestDocsTable -update", docFile)
}
