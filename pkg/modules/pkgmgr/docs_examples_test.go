package pkgmgr

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/cloudroot/cloudroot/pkg/modules"
	"github.com/cloudroot/cloudroot/pkg/modules/internal/modtest"
)

// TestDocsExamplesApply: the examples of the family's modules that need
// no network run on a Debian target without error.
func TestDocsExamplesApply(t *testing.T) {
	for _, m := range []modules.Module{PackageUpdateUpgradeInstall, AptPipelining} {
		files, _ := filepath.Glob(filepath.Join(modtest.Shared(), "docs", m.Name, "example*.yaml"))
		if len(files) == 0 {
			t.Errorf("%s: no examples", m.Name)
		}
		for _, f := range files {
			b, _ := os.ReadFile(f)
			c, _, _ := testContext(t, yamlCfg(t, string(b)), baseFiles)
			c.Root.WriteFile("/usr/bin/apt-get", nil, 0o755)
			if err := m.Run(context.Background(), c); err != nil {
				t.Errorf("%s: %v", f, err)
			}
		}
	}
}
