package cloudcfg

import (
	"github.com/cloudroot/cloudroot/pkg/internal/golden"
	"os"
	"strings"
	"testing"
)

const docPath = "../../docs/configuration.md"

// TestConfigurationDoc keeps docs/configuration.md's merge-mode table equal
// to Modes() (go test ./pkg/cloudcfg -run TestConfigurationDoc -update
// rewrites it).
func TestConfigurationDoc(t *testing.T) {
	b, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatal(err)
	}
	const begin, end = "<!-- BEGIN GENERATED: merge -->\n", "<!-- END GENERATED: merge -->"
	s := string(b)
	i, j := strings.Index(s, begin), strings.Index(s, end)
	if i < 0 || j < i {
		t.Fatalf("%s lacks the generated-table markers", docPath)
	}
	want := MergeModesTable()
	if got := s[i+len(begin) : j]; got != want {
		if golden.Update() {
			if err := os.WriteFile(docPath, []byte(s[:i+len(begin)]+want+s[j:]), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		t.Errorf("docs/configuration.md is stale; run go test ./pkg/cloudcfg -run TestConfigurationDoc -update")
	}
}
