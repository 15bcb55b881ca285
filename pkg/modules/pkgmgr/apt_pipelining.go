package pkgmgr

// apt_pipelining, as cloud-init 26.x's cc_apt_pipelining: `false` writes
// a pipeline depth of 0, 0..5 that depth, "os" (the default) and the
// deprecated "none"/"unchanged" leave apt alone; anything else (true
// included, as str(True) is no depth) is a warning.

import (
	"context"
	"fmt"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/internal/pyval"
	"github.com/cloudroot/cloudroot/pkg/modules"
	"github.com/cloudroot/cloudroot/pkg/state"
)

// AptPipeliningFile is where the depth is written.
const AptPipeliningFile = "/etc/apt/apt.conf.d/90cloud-init-pipelining"

// AptDistros are the distros cloud-init verifies its apt modules on.
var AptDistros = []string{"ubuntu", "debian", "raspberry-pi-os"}

// AptPipelining is cc_apt_pipelining.
var AptPipelining = modules.Module{
	Name:       "apt_pipelining",
	Frequency:  state.PerInstance,
	Keys:       []string{"apt_pipelining"},
	ActivateBy: []string{"apt_pipelining"},
	Distros:    AptDistros,
	Run:        modules.Typed(runAptPipelining),
}

// decodeAptPipelining gives the depth to write ("" for none), whether the
// value was valid, and a deprecation note.
func decodeAptPipelining(cfg aptPipeliningConfig) (depth string, valid bool, note string) {
	if !cfg.Present {
		return "", true, ""
	}
	s := strings.ToLower(strings.TrimSpace(pyval.Str(cfg.Value)))
	switch s {
	case "false":
		return "0", true, ""
	case "os":
		return "", true, ""
	case "none", "unchanged":
		return "", true, "apt_pipelining: Deprecated in version 22.4. Use ``os`` instead."
	case "0", "1", "2", "3", "4", "5":
		return s, true, ""
	}
	return "", false, ""
}

// aptPipeliningConfig is the module's configuration: apt_pipelining as
// given (its str() is what counts, None included).
type aptPipeliningConfig struct {
	Present bool `cfg:"apt_pipelining,present"`
	Value   any  `cfg:"apt_pipelining"`
}

func runAptPipelining(ctx context.Context, c *modules.Context, cfg aptPipeliningConfig) error {
	depth, valid, note := decodeAptPipelining(cfg)
	if note != "" {
		c.Log.Info(note, "module", "apt_pipelining")
	}
	if !valid {
		c.Warnf("Invalid option for apt_pipelining: %s", pyval.Str(cfg.Value))
		return nil
	}
	if depth == "" {
		return nil
	}
	body := fmt.Sprintf("//Written by cloud-init per 'apt_pipelining'\nAcquire::http::Pipeline-Depth \"%s\";\n", depth)
	if err := c.Root.WriteFile(AptPipeliningFile, []byte(body), 0o644); err != nil {
		return fmt.Errorf("apt_pipelining: %w", err)
	}
	return nil
}
