package users

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/cloudroot/cloudroot/pkg/modules"
	"github.com/cloudroot/cloudroot/pkg/modules/internal/famtest"
	"github.com/cloudroot/cloudroot/pkg/modules/internal/modtest"
)

// TestDocsExamplesApply: the docs examples of keys_to_console and
// ssh_authkey_fingerprints (pkg/modules/testdata/docs) run on a Debian
// target with host keys without error.
func TestDocsExamplesApply(t *testing.T) {
	for _, m := range []modules.Module{KeysToConsole, SSHAuthkeyFingerprints} {
		files, _ := filepath.Glob(filepath.Join(modtest.Shared(), "docs", m.Name, "example*.yaml"))
		if len(files) == 0 {
			t.Errorf("%s: no examples", m.Name)
		}
		for _, f := range files {
			b, _ := os.ReadFile(f)
			c, _, _ := famtest.NewContext(t, famtest.YAML(t, string(b)), modtest.HostKeyRoot(), nil)
			c.Root.WriteFile("/usr/bin/apt-get", nil, 0o755)
			if err := m.Run(context.Background(), c); err != nil {
				t.Errorf("%s: %v", f, err)
			}
		}
	}
}
