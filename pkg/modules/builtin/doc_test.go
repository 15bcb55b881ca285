package builtin

import (
	"os"
	"strings"
	"testing"

	"github.com/cloudroot/cloudroot/pkg/internal/golden"
	"github.com/cloudroot/cloudroot/pkg/modules"
)

const docPath = "../../../docs/modules.md"

// TestModulesDoc keeps docs/modules.md's table equal to the registry
// (go test ./pkg/modules/builtin -run TestModulesDoc -update rewrites it).
func TestModulesDoc(t *testing.T) {
	b, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatal(err)
	}
	const begin, end = "<!-- BEGIN GENERATED: modules -->\n", "<!-- END GENERATED: modules -->"
	s := string(b)
	i, j := strings.Index(s, begin), strings.Index(s, end)
	if i < 0 || j < i {
		t.Fatalf("%s lacks the generated-table markers", docPath)
	}
	want := modules.MarkdownTable(Modules())
	if got := s[i+len(begin) : j]; got != want {
		if golden.Update() {
			if err := os.WriteFile(docPath, []byte(s[:i+len(begin)]+want+s[j:]), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		t.Errorf("docs/modules.md is stale; run go test ./pkg/modules/builtin -run TestModulesDoc -update")
	}
}
