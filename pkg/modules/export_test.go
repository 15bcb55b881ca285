package modules

import (
	"testing"

	"github.com/cloudroot/cloudroot/pkg/modules/internal/modtest"
)

// Hooks for the external tests (package modules_test): they run the
// runner over pkg/modules/builtin's registry, which this package cannot
// import (builtin imports the families, and they import this package).

// NewTestContext is testContext (no files) resolving names in mods.
func NewTestContext(t *testing.T, cfg Config, mods []Module) (*Context, *modtest.Recorder) {
	t.Helper()
	c, rr, _ := testContext(t, cfg, nil)
	c.Modules = mods
	return c, rr
}

// NewTestContextFiles is testContext on a root holding files, resolving
// names in mods.
func NewTestContextFiles(t *testing.T, cfg Config, files map[string]string, mods []Module) *Context {
	t.Helper()
	c, _, _ := testContext(t, cfg, files)
	c.Modules = mods
	return c
}

// ResetDeprecations forgets the deprecations c has logged (a new process).
func ResetDeprecations(c *Context) { c.deprecations = nil }

// PlanStage is the [name, frequency] of each module planStage would run.
func PlanStage(c *Context, entries []Entry) [][]string {
	var out [][]string
	for _, p := range planStage(c, entries).run {
		out = append(out, []string{p.name, string(p.freq)})
	}
	return out
}
