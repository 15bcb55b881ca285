package modules

// fan, as cloud-init 26.x's cc_fan: `fan.config` is written to
// `fan.config_path` (default /etc/network/fan), ubuntu-fan installed when
// fanctl is missing, then the service is stopped, the file rewritten
// (ending in a newline), started and enabled. Stop and start failures are
// warnings; enable's is the module's error.

import (
	"context"
	"fmt"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/state"
)

// DefaultFanConfigPath is fan.config_path's default.
const DefaultFanConfigPath = "/etc/network/fan"

// Fan is cc_fan.
var Fan = Module{
	Name:       "fan",
	Frequency:  state.PerInstance,
	Keys:       []string{"fan"},
	Distros:    []string{"ubuntu"},
	ActivateBy: []string{"fan"},
	Run:        Typed(runFan),
}

// fanConfig is the module's configuration (a fan that is not a mapping
// is no configuration).
type fanConfig struct {
	Fan struct {
		Config     string `cfg:"config,scalar"`
		ConfigPath string `cfg:"config_path,scalar"`
	} `cfg:"fan,loose"`
}

func runFan(ctx context.Context, c *Context, cfg fanConfig) error {
	fc := cfg.Fan
	if fc.ConfigPath == "" {
		fc.ConfigPath = DefaultFanConfigPath
	}
	if fc.Config == "" {
		c.Log.Debug("fan: no 'fan' config entry. disabling")
		return nil
	}
	if err := c.Root.WriteFile(fc.ConfigPath, []byte(fc.Config), 0o644); err != nil {
		return fmt.Errorf("fan: %w", err)
	}
	f := c.Facts()
	if !c.Which("fanctl") {
		if err := c.InstallPackages(ctx, f, []string{"ubuntu-fan"}); err != nil {
			return err
		}
	}
	const svc = "ubuntu-fan"
	stopFailed := false
	if err := c.ManageService(ctx, f, "stop", svc); err != nil {
		stopFailed = true
		c.Warnf("failed to stop %s: %v", svc, err)
	}
	content := fc.Config
	if !strings.HasSuffix(content, "\n") {
		content += "\n"
	}
	if err := c.Root.WriteFile(fc.ConfigPath, []byte(content), 0o644); err != nil {
		return fmt.Errorf("fan: %w", err)
	}
	if err := c.ManageService(ctx, f, "start", svc); err != nil {
		c.Warnf("failed to start %s: %v", svc, err)
	} else if stopFailed {
		c.Warnf("success: %s started", svc)
	}
	return c.ManageService(ctx, f, "enable", svc)
}
