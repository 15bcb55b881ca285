package modules

import (
	"context"
	"fmt"

	"github.com/cloudroot/cloudroot/pkg/state"
)

// Bootcmd is cc_bootcmd: run commands early, every boot, with INSTANCE_ID in
// the environment. In the initramfs it runs chrooted into the target.
var Bootcmd = Module{
	Name:       "bootcmd",
	ActivateBy: []string{"bootcmd"},
	Frequency:  state.PerAlways,
	Keys:       []string{"bootcmd"},
	Run: Typed(func(ctx context.Context, c *Context, cfg bootcmdConfig) error {
		cmds := cfg.Cmds
		if cmds == nil {
			c.Log.Debug("skipping module: no 'bootcmd' key in configuration", "module", "bootcmd")
			return nil
		}
		script, err := Shellify(cmds, "bootcmd")
		if err != nil {
			return fmt.Errorf("bootcmd: %w", err)
		}
		if err := c.Root.MkdirAll("/tmp", 0o1777); err != nil {
			return fmt.Errorf("bootcmd: %w", err)
		}
		if err := runScript(ctx, c, "/tmp", "cloudroot-bootcmd.sh", script, map[string]string{"INSTANCE_ID": c.InstanceID}); err != nil {
			return fmt.Errorf("bootcmd: failed to run bootcmd: %w", err)
		}
		return nil
	}),
}

// Runcmd is cc_runcmd: it does not run anything; it writes the commands to
// instance/scripts/runcmd, which scripts_user runs in the final stage.
var Runcmd = Module{
	Name:       "runcmd",
	ActivateBy: []string{"runcmd"},
	Frequency:  state.PerInstance,
	Keys:       []string{"runcmd"},
	Run: Typed(func(ctx context.Context, c *Context, cfg runcmdConfig) error {
		cmds := cfg.Cmds
		if cmds == nil {
			c.Log.Debug("skipping module: no 'runcmd' key in configuration", "module", "runcmd")
			return nil
		}
		script, err := Shellify(cmds, "runcmd")
		if err != nil {
			return fmt.Errorf("runcmd: %w", err)
		}
		if err := c.Root.WriteFile(c.InstanceDir()+"/scripts/runcmd", []byte(script), 0o700); err != nil {
			return fmt.Errorf("runcmd: %w", err)
		}
		return nil
	}),
}

// bootcmdConfig is bootcmd's configuration: the commands as given, a
// list or a string, for Shellify.
type bootcmdConfig struct {
	Cmds any `cfg:"bootcmd"`
}

// runcmdConfig is runcmd's configuration, as bootcmdConfig.
type runcmdConfig struct {
	Cmds any `cfg:"runcmd"`
}
