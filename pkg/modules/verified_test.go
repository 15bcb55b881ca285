package modules_test

import (
	"testing"

	. "github.com/cloudroot/cloudroot/pkg/modules"
	"github.com/cloudroot/cloudroot/pkg/modules/builtin"
)

// TestNTPVerifiedDistros: a module runs only on the distros its meta
// lists, unless unverified_modules names it (ntp, from its family).
func TestNTPVerifiedDistros(t *testing.T) {
	// runs reports whether a stage listing ntp, with an ntp key, runs it.
	runs := func(c *Context) bool { return len(PlanStage(c, []Entry{{Name: "ntp"}})) == 1 }
	for id, want := range map[string]bool{"debian": true, "ubuntu": true, "rhel": true, "alpine": true, "arch": false, "gentoo": false} {
		c := NewTestContextFiles(t, Config{"ntp": map[string]any{}}, map[string]string{"/etc/os-release": "ID=" + id + "\n"}, builtin.Modules())
		if got := runs(c); got != want {
			t.Errorf("%s: ntp runs = %v, want %v", id, got, want)
		}
		if id == "arch" {
			c.Config["unverified_modules"] = []any{"ntp"}
			if !runs(c) {
				t.Errorf("arch with unverified_modules: [ntp] is still skipped")
			}
		}
	}
}
