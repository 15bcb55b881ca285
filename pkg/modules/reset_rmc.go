package modules

// reset_rmc, as cloud-init 26.x's cc_reset_rmc (IBM PowerVM's RSCT):
// unless the datasource is None, on a target with /opt/rsct/install/bin,
// `rmcctrl -z` stops RMC and `recfgct` makes a new node id, both with that
// directory first in PATH; the module fails when /etc/ct_node_id is the
// same afterwards.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/distro"
	"github.com/cloudroot/cloudroot/pkg/state"
	"github.com/cloudroot/cloudroot/pkg/target"
)

// RSCT paths.
const (
	RSCTPath       = "/opt/rsct/install/bin"
	RSCTNodeIDFile = "/etc/ct_node_id"
)

// ResetRMC is cc_reset_rmc.
var ResetRMC = Module{
	Name:      "reset_rmc",
	Frequency: state.PerInstance,
	Run:       Typed(runResetRMC),
}

func runResetRMC(ctx context.Context, c *Context, _ NoKeys) error {
	if strings.HasPrefix(c.Datasource, "DataSourceNone") {
		c.Log.Debug("Skipping creation of new ct_node_id node")
		return nil
	}
	if fi, err := c.Root.Stat(RSCTPath); err != nil || !fi.IsDir() {
		c.Log.Debug("module disabled, RSCT_PATH not present")
		return nil
	}
	env := []string{"PATH=" + RSCTPath + ":" + target.DefaultPath}
	nodeID := func() (string, error) {
		b, err := c.Root.ReadFile(RSCTNodeIDFile)
		if err != nil {
			c.Logexc("Failed to get node ID from file %s.", RSCTNodeIDFile)
			if errors.Is(err, fs.ErrNotExist) {
				err = fs.ErrNotExist // (not the host path of the target)
			}
			return "", fmt.Errorf("reading %s: %w", RSCTNodeIDFile, err)
		}
		id, _, _ := strings.Cut(string(b), "\n")
		return id, nil
	}
	before, err := nodeID()
	if err != nil {
		return err
	}
	if err := c.RunCmd(ctx, distro.Cmd{Argv: []string{"rmcctrl", "-z"}, Env: env}); err != nil {
		c.Logexc("Failed to stop the RMC subsystem.")
		return err
	}
	if err := c.RunCmd(ctx, distro.Cmd{Argv: []string{"recfgct"}, Env: env}); err != nil {
		c.Logexc("Failed to reconfigure the RSCT subsystems.")
		return err
	}
	after, err := nodeID()
	if err != nil {
		return err
	}
	if after == before {
		c.Warnf("New node ID did not get generated.")
		return errors.New("New node ID did not get generated.")
	}
	return nil
}
