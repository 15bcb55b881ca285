package modules

import (
	"context"
	"slices"
	"testing"

	"github.com/cloudroot/cloudroot/pkg/internal/pyval"
	"github.com/cloudroot/cloudroot/pkg/state"
)

// TestActivateBy: a module with activation keys neither runs nor takes its
// semaphore when the config has none of them (cloud-init's _is_active), so
// adding the key on a later boot of the same instance still applies it.
func TestActivateBy(t *testing.T) {
	c, _, _ := testContext(t, Config{"cloud_config_modules": []any{"timezone"}}, nil)
	// A stand-in for timezone (pkg/modules/ntp, which this package's tests
	// cannot import): what matters is its activation key.
	c.Modules = append(c.Modules, Module{Name: "timezone", Frequency: state.PerInstance, ActivateBy: []string{"timezone"},
		Run: func(_ context.Context, c *Context) error {
			return c.Root.WriteFile("/etc/timezone", []byte(pyval.Str(c.Config["timezone"])+"\n"), 0o644)
		}})
	rep := RunStage(t.Context(), c, StageConfig)
	if len(rep.Ran) != 0 || !slices.Contains(rep.Skipped, "timezone") {
		t.Fatalf("without the key: ran %v, skipped %v", rep.Ran, rep.Skipped)
	}
	c.Config["timezone"] = "UTC"
	rep = RunStage(t.Context(), c, StageConfig)
	if !slices.Equal(rep.Ran, []string{"timezone"}) || len(rep.Errors) > 0 {
		t.Fatalf("with the key: ran %v, errors %v", rep.Ran, rep.Errors)
	}
	if got := readFile(t, c, "/etc/timezone"); got != "UTC\n" {
		t.Errorf("/etc/timezone = %q", got)
	}
}
