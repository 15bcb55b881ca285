package cm

// Helpers shared by the configuration-management modules (ansible, puppet,
// chef, salt_minion, mcollective): running a command with cloud-init's
// extra environment, a working directory and captured output; running one
// as another user the way cloud-init's Distro.do_as does; Python's repr of
// a config value for messages and command-line flags; socket.getfqdn()
// answered from the target.

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/internal/pyval"
	"github.com/cloudroot/cloudroot/pkg/modules"
	"github.com/cloudroot/cloudroot/pkg/target"
)

// cmCmd is one command a configuration-management module runs.
type cmCmd struct {
	Argv []string
	// Env is the extra environment (subp's update_env), in order.
	Env []string
	// Dir is the working directory ("" = /).
	Dir string
	// Capture returns standard output instead of sending it to c.Out.
	Capture bool
}

// run runs cmd in the target; with Capture its standard output is
// returned, otherwise it goes to c.Out with standard error.
func (cmd cmCmd) run(ctx context.Context, c *modules.Context) (string, error) {
	out := c.Out
	if out == nil {
		out = io.Discard
	}
	var buf bytes.Buffer
	stdout := out
	if cmd.Capture {
		stdout = &buf
	}
	err := c.Root.Run(ctx, target.Cmd{Argv: cmd.Argv, Env: c.CmdEnv(cmd.Env), Dir: cmd.Dir, Stdout: stdout, Stderr: out})
	if err != nil {
		return buf.String(), fmt.Errorf("running %s: %w", strings.Join(cmd.Argv, " "), err)
	}
	return buf.String(), nil
}

// doAs is Distro.do_as: argv run as user through `su - USER -c`, PATH
// passed on with env, after `cd DIR &&` when dir is set. The extra
// environment of the caller does not reach the command (as upstream).
func doAs(argv []string, user, dir string) []string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = shellQuote(a)
	}
	s := "env PATH=$PATH " + strings.Join(q, " ")
	if dir != "" {
		s = "cd " + dir + " && " + s
	}
	return []string{"su", "-", user, "-c", s}
}

// shellQuote is Python's shlex.quote.
func shellQuote(s string) string {
	if s == "" {
		return "''"
	}
	safe := true
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("@%+=:,./-_", r)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'"'"'`) + "'"
}

// fqdn is socket.getfqdn() for the target: its host name (the running
// kernel's when booted, else /etc/hostname) and, among the names of the
// /etc/hosts line that carries it, the first one with a dot.
func fqdn(c *modules.Context) string {
	host := ""
	if c.Booted {
		host, _ = os.Hostname()
	}
	if host == "" {
		b, _ := c.Root.ReadFile("/etc/hostname")
		host = strings.TrimSpace(string(b))
	}
	if host == "" {
		return "localhost"
	}
	b, _ := c.Root.ReadFile("/etc/hosts")
	for _, line := range strings.Split(string(b), "\n") {
		line, _, _ = strings.Cut(line, "#")
		f := strings.Fields(line)
		if len(f) < 2 || !slices.Contains(f[1:], host) {
			continue
		}
		for _, n := range f[1:] {
			if strings.Contains(n, ".") {
				return n
			}
		}
		break
	}
	return host
}

// optBool is util.get_cfg_option_bool of a key decoded as a pyval.Opt: an
// absent key is def, a given one goes through translate_bool (None and
// unknown values are false).
func optBool(o pyval.Opt, def bool) bool {
	if !o.Given {
		return def
	}
	return pyval.TranslateBool(o.Value, false)
}

// cfgInt is int(value) for a YAML integer or numeric string.
func cfgInt(v any) (int, bool) {
	switch t := v.(type) {
	case int:
		return t, true
	case string:
		n, err := strconv.Atoi(strings.TrimSpace(t))
		return n, err == nil
	}
	return 0, false
}
