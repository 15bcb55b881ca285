package modules

// Shared pieces of the "vendor" modules (snap, landscape, lxd, fan,
// wireguard, ubuntu_pro...): the list they are registered from and
// util.wait_for_snap_seeded.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/distro"
	"github.com/cloudroot/cloudroot/pkg/target"
)

// vendorModules are the modules of vendor.go's family, registered by
// Registry.
func vendorModules() []Module {
	return []Module{
		DisableEC2Metadata, Byobu, UbuntuAutoinstall, Fan, GrubDpkg, Spacewalk, SSHImportID, Snap, Landscape,
		LXD, Wireguard, ResetRMC, UbuntuDrivers, InstallHotplug, RaspberryPi, UbuntuPro, RHSubscription,
	}
}

// snapSeededSem is the semaphore util.wait_for_snap_seeded takes
// (cloud.run("snap-seeded", ..., freq=PER_ONCE)).
const snapSeededSem = "/var/lib/cloud/sem/snap_seeded.once"

// waitSnapSeeded is util.wait_for_snap_seeded: once per machine, `snap
// wait system seed.loaded` when the target has snap.
func waitSnapSeeded(ctx context.Context, c *Context) error {
	if c.Root.Exists(snapSeededSem) {
		return nil
	}
	body := fmt.Sprintf("%d: %f\n", os.Getpid(), float64(c.Now().UnixNano())/1e9)
	if err := c.Root.WriteFile(snapSeededSem, []byte(body), 0o644); err != nil {
		return fmt.Errorf("snap-seeded semaphore: %w", err)
	}
	if !c.which("snap") {
		c.Log.Debug("Skipping snap wait, no snap command present")
		return nil
	}
	return runCmd(ctx, c, distroCmd("snap", "wait", "system", "seed.loaded"))
}

// logexc is util.logexc: the message is logged at WARNING (recorded as a
// recoverable error) and the module goes on.
func logexc(c *Context, format string, args ...any) {
	c.warn(format, args...)
}

// instanceFile is a path in the current instance's directory
// (cloud.paths.get_ipath_cur()).
func instanceFile(c *Context, name string) string { return path.Join(c.InstanceDir(), name) }

// distroCmd is a command without extra environment.
func distroCmd(argv ...string) distro.Cmd { return distro.Cmd{Argv: argv} }

// cmdResult is what one command did: its output and exit code (-1 when it
// could not be started).
type cmdResult struct {
	Stdout, Stderr string
	Code           int
}

// runCapture runs argv in the target, capturing stdout and stderr; err is
// nil only for exit code 0.
func runCapture(ctx context.Context, c *Context, argv ...string) (cmdResult, error) {
	var o, e bytes.Buffer
	err := c.Root.Run(ctx, target.Cmd{Argv: argv, Env: cmdEnv(c, nil), Stdout: &o, Stderr: &e})
	r := cmdResult{Stdout: o.String(), Stderr: e.String()}
	var xe *target.ExitError
	switch {
	case err == nil:
	case errors.As(err, &xe):
		r.Code = xe.Code
	default:
		r.Code = -1
	}
	if err != nil {
		return r, fmt.Errorf("running %s: %w", strings.Join(argv, " "), err)
	}
	return r, nil
}

// shellCmd is subp(cmd, shell=True).
func shellCmd(script string) []string { return []string{"sh", "-c", script} }

// pyListRepr is Python's repr of a list of strings: ['a', 'b'].
func pyListRepr(l []string) string {
	q := make([]string, len(l))
	for i, s := range l {
		q[i] = "'" + strings.ReplaceAll(s, "'", `\'`) + "'"
	}
	return "[" + strings.Join(q, ", ") + "]"
}
