package famtest

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/cloudroot/cloudroot/pkg/modules"
	"github.com/cloudroot/cloudroot/pkg/modules/internal/modtest"
)

// RunDocsExamples runs each module's docs examples (modtest.Shared()/docs/<name>/
// example*.yaml, cloud-init's module docs) through m.Run on the context
// newContext builds from the example's text, and fails the test for a
// module without examples or an example that fails.
func RunDocsExamples(t *testing.T, mods []modules.Module, newContext func(t *testing.T, doc string) *modules.Context) {
	t.Helper()
	for _, m := range mods {
		files, _ := filepath.Glob(filepath.Join(modtest.Shared(), "docs", m.Name, "example*.yaml"))
		if len(files) == 0 {
			t.Errorf("%s: no examples", m.Name)
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			c := newContext(t, string(b))
			if err := m.Run(context.Background(), c); err != nil {
				t.Errorf("%s: %v", f, err)
			}
		}
	}
}
