package pkgmgr

import (
	"bytes"
	"slices"
	"testing"

	"github.com/cloudroot/cloudroot/pkg/modules"
	"github.com/cloudroot/cloudroot/pkg/modules/internal/famtest"
	"github.com/cloudroot/cloudroot/pkg/modules/internal/modtest"
)

// The family's tests run on famtest's recorded targets.

// testContext is a module context on a fresh temp root holding files,
// resolving names in pkg/modules' own modules and this family's.
func testContext(t *testing.T, cfg modules.Config, files map[string]string) (*modules.Context, *modtest.Recorder, *bytes.Buffer) {
	t.Helper()
	return famtest.NewContext(t, cfg, files, slices.Concat(modules.Core(), Modules()))
}

func yamlCfg(t *testing.T, s string) modules.Config { t.Helper(); return famtest.YAML(t, s) }

func readFile(t *testing.T, c *modules.Context, p string) string {
	t.Helper()
	return famtest.ReadFile(t, c, p)
}

// baseFiles is a Debian root with two users.
var baseFiles = map[string]string{
	"etc/passwd":     "root:x:0:0:root:/root:/bin/sh\nalice:x:1000:1000::/home/alice:/bin/sh\n",
	"etc/group":      "root:x:0:\nadm:x:4:\nalice:x:1000:\n",
	"etc/os-release": "ID=debian\nVERSION_ID=\"12\"\n",
}
