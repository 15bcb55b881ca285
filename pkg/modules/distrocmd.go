package modules

// Helpers for modules that run the distro's commands: the target's facts
// (with its init system read from the target), running a distro.Cmd through
// the target's runner (RunCmd, RunCapture, RunOutput), writing to the
// console only, and util.logexc.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/cilog"
	"github.com/cloudroot/cloudroot/pkg/distro"
	"github.com/cloudroot/cloudroot/pkg/internal/pyval"
	"github.com/cloudroot/cloudroot/pkg/target"
)

// Facts is the distro's facts for the target, under the init system the
// target boots. A target without systemd whose init is SysV's (it has
// /etc/inittab) counts as sysvinit where DetectInit would assume the
// distro's default.
func (c *Context) Facts() distro.Facts {
	init := c.Distro.DetectInit(c.Root.Exists, c.Readlink)
	if init == distro.InitSystemd && c.Root.Exists("/etc/inittab") &&
		!c.Root.Exists("/lib/systemd/systemd") && !c.Root.Exists("/usr/lib/systemd/systemd") {
		init = distro.InitSysVinit
	}
	return c.Distro.FactsFor(init)
}

// CmdEnv is the environment a command runs with: a minimal one in a
// target root (the agent's own on /), plus extra.
func (c *Context) CmdEnv(extra []string) []string {
	e := []string{"PATH=" + target.DefaultPath, "HOME=/root", "LANG=C.UTF-8"}
	if c.Root.Dir() == "/" {
		e = os.Environ()
	}
	return append(e, extra...)
}

// RunCmd runs a distro command in the target, output to c.Out.
func (c *Context) RunCmd(ctx context.Context, cmd distro.Cmd) error {
	out := c.Out
	if out == nil {
		out = io.Discard
	}
	if err := c.Root.Run(ctx, target.Cmd{Argv: cmd.Argv, Env: c.CmdEnv(cmd.Env), Stdout: out, Stderr: out}); err != nil {
		return fmt.Errorf("running %s: %w", strings.Join(cmd.Argv, " "), err)
	}
	return nil
}

// RunCmdInput runs argv in the target with stdin, output to c.Out.
func (c *Context) RunCmdInput(ctx context.Context, argv []string, stdin []byte) error {
	out := c.Out
	if out == nil {
		out = io.Discard
	}
	if err := c.Root.Run(ctx, target.Cmd{Argv: argv, Env: c.CmdEnv(nil), Stdin: bytes.NewReader(stdin), Stdout: out, Stderr: out}); err != nil {
		return fmt.Errorf("running %s: %w", strings.Join(argv, " "), err)
	}
	return nil
}

// RunOutput runs argv in the target and returns its standard output.
func (c *Context) RunOutput(ctx context.Context, argv ...string) (string, error) {
	var b bytes.Buffer
	err := c.Root.Run(ctx, target.Cmd{Argv: argv, Env: c.CmdEnv(nil), Stdout: &b, Stderr: io.Discard})
	if err != nil {
		return b.String(), fmt.Errorf("running %s: %w", strings.Join(argv, " "), err)
	}
	return b.String(), nil
}

// ManageService runs the distro's command for action on service.
func (c *Context) ManageService(ctx context.Context, f distro.Facts, action, service string, extra ...string) error {
	cmd, err := f.Services().Command(action, service, extra...)
	if err != nil {
		return err
	}
	return c.RunCmd(ctx, cmd)
}

// InstallPackages installs pkgs with the distro's package manager.
func (c *Context) InstallPackages(ctx context.Context, f distro.Facts, pkgs []string) error {
	pm := f.Packages()
	if pm == nil {
		return fmt.Errorf("installing %s: %w", strings.Join(pkgs, " "), ErrNoPackageManager)
	}
	var list []distro.Package
	for _, p := range pkgs {
		list = append(list, distro.Package{Name: p})
	}
	for _, cmd := range pm.Install(list) {
		if err := c.RunCmd(ctx, cmd); err != nil {
			return err
		}
	}
	return nil
}

// ErrNoPackageManager is InstallPackages' error on a distro without one.
var ErrNoPackageManager = errors.New("cloudroot knows no package manager for this distro")

// ToConsole writes text to the console only (log_util.multi_log with
// stderr=False, fallback_to_stdout=False): it never reaches a log file.
func (c *Context) ToConsole(text string) {
	if c.Console != nil {
		_, _ = io.WriteString(c.Console, text)
		return
	}
	f, err := os.OpenFile("/dev/console", os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return
	}
	defer f.Close()
	_, _ = io.WriteString(f, text)
}

// Deprecate is cloud-init's lifecycle.deprecate message (removal scheduled
// five major versions later), logged as lifecycle.py at cloud-init's
// DEPRECATED level and recorded under DEPRECATED in recoverable_errors,
// once per Context as cloud-init does once per process.
func (c *Context) Deprecate(what, version, extra string) {
	c.deprecated(pyval.Deprecation(what, version, extra))
}

// deprecated logs and records msg, a deprecation already worded, once per
// Context.
func (c *Context) deprecated(msg string) {
	if c.deprecations[msg] {
		return
	}
	if c.deprecations == nil {
		c.deprecations = map[string]bool{}
	}
	c.deprecations[msg] = true
	if c.Log != nil {
		c.Log.Log(context.Background(), cilog.LevelDeprecated, msg, cilog.LoggerKey, lifecyclePy)
	}
	if c.Deprecated != nil {
		c.Deprecated(msg)
	} else if c.Warn != nil {
		c.Warn(msg)
	}
}

// lifecyclePy is the file cloud-init logs deprecations under
// (cloudinit/lifecycle.py).
const lifecyclePy = "lifecycle.py"

// Logexc is util.logexc: the message is logged at WARNING (recorded as a
// recoverable error) and the module goes on.
func (c *Context) Logexc(format string, args ...any) {
	c.Warnf(format, args...)
}

// InstanceFile is a path in the current instance's directory
// (cloud.paths.get_ipath_cur()).
func (c *Context) InstanceFile(name string) string { return path.Join(c.InstanceDir(), name) }

// DistroCmd is a command without extra environment.
func DistroCmd(argv ...string) distro.Cmd { return distro.Cmd{Argv: argv} }

// CmdResult is what one command did: its output and exit code (-1 when it
// could not be started).
type CmdResult struct {
	Stdout, Stderr string
	Code           int
}

// RunCapture runs argv in the target, capturing stdout and stderr; err is
// nil only for exit code 0.
func (c *Context) RunCapture(ctx context.Context, argv ...string) (CmdResult, error) {
	var o, e bytes.Buffer
	err := c.Root.Run(ctx, target.Cmd{Argv: argv, Env: c.CmdEnv(nil), Stdout: &o, Stderr: &e})
	r := CmdResult{Stdout: o.String(), Stderr: e.String()}
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

// ShellCmd is subp(cmd, shell=True).
func ShellCmd(script string) []string { return []string{"sh", "-c", script} }

// Which is subp.which in the target: an absolute path that is an
// executable file, or a name found in the default PATH.
func (c *Context) Which(name string) bool {
	if name == "" {
		return false
	}
	if strings.HasPrefix(name, "/") {
		fi, err := c.Root.Stat(name)
		return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
	}
	return c.inPath(name)
}
