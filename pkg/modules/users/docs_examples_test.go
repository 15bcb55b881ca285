package users

import (
	"testing"

	"github.com/cloudroot/cloudroot/pkg/modules"
	"github.com/cloudroot/cloudroot/pkg/modules/internal/famtest"
	"github.com/cloudroot/cloudroot/pkg/modules/internal/modtest"
)

// TestDocsExamplesApply: the docs examples of keys_to_console and
// ssh_authkey_fingerprints (pkg/modules/testdata/docs) run on a Debian
// target with host keys without error.
func TestDocsExamplesApply(t *testing.T) {
	famtest.RunDocsExamples(t, []modules.Module{KeysToConsole, SSHAuthkeyFingerprints}, func(t *testing.T, doc string) *modules.Context {
		c, _, _ := famtest.NewContext(t, famtest.YAML(t, doc), modtest.HostKeyRoot(), nil)
		c.Root.WriteFile("/usr/bin/apt-get", nil, 0o755)
		return c
	})
}
