package pkgmgr

import (
	"testing"

	"github.com/cloudroot/cloudroot/pkg/modules"
	"github.com/cloudroot/cloudroot/pkg/modules/internal/famtest"
)

// TestDocsExamplesApply: the examples of the family's modules that need
// no network run on a Debian target without error.
func TestDocsExamplesApply(t *testing.T) {
	famtest.RunDocsExamples(t, []modules.Module{PackageUpdateUpgradeInstall, AptPipelining}, func(t *testing.T, doc string) *modules.Context {
		c, _, _ := testContext(t, yamlCfg(t, doc), baseFiles)
		c.Root.WriteFile("/usr/bin/apt-get", nil, 0o755)
		return c
	})
}
