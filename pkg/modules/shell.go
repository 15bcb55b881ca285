package modules

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/target"
)

// Shellify turns a cloud-init command list into a shell script the way
// cloud-init's util.shellify does: a string entry is a shell line as-is, a
// list entry is argv, each argument single-quoted.
func Shellify(cmds any, source string) (string, error) {
	list, ok := cmds.([]any)
	if !ok {
		if s, isStr := cmds.(string); isStr {
			// cloud-init accepts a single string for runcmd/bootcmd too.
			return "#!/bin/sh\n" + s + "\n", nil
		}
		return "", fmt.Errorf("%s: expected a list of commands, got %T", source, cmds)
	}
	var b strings.Builder
	b.WriteString("#!/bin/sh\n")
	for i, e := range list {
		switch t := e.(type) {
		case string:
			b.WriteString(t)
			b.WriteString("\n")
		case []any:
			// Every argument in single quotes, whether it needs them or
			// not, as util.shellify writes it.
			args := make([]string, 0, len(t))
			for _, a := range t {
				args = append(args, "'"+strings.ReplaceAll(scalarString(a), "'", `'\''`)+"'")
			}
			b.WriteString(strings.Join(args, " "))
			b.WriteString("\n")
		case nil:
		default:
			s := scalarString(t)
			if s == "" {
				return "", fmt.Errorf("%s: item %d: unable to shellify type %T", source, i, e)
			}
			b.WriteString(s)
			b.WriteString("\n")
		}
	}
	return b.String(), nil
}

// ShellQuote quotes s for a POSIX shell (Python's shlex.quote).
func ShellQuote(s string) string {
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

// runScript writes script into the target under dir and runs it with
// /bin/sh inside the target, with extra environment variables.
func runScript(ctx context.Context, c *Context, dir, name, script string, env map[string]string) error {
	p := dir + "/" + name
	if err := c.Root.WriteFile(p, []byte(script), 0o700); err != nil {
		return err
	}
	defer c.Root.Remove(p)
	return runFile(ctx, c, []string{"/bin/sh", p}, env)
}

// runFile runs argv inside the target with output to c.Out.
func runFile(ctx context.Context, c *Context, argv []string, env map[string]string) error {
	e := []string{"PATH=" + target.DefaultPath, "HOME=/root", "LANG=C.UTF-8"}
	if c.Root.Dir() == "/" {
		e = os.Environ()
	}
	for k, v := range env {
		e = append(e, k+"="+v)
	}
	out := c.Out
	if out == nil {
		out = io.Discard
	}
	return c.Root.Run(ctx, target.Cmd{Argv: argv, Env: e, Stdout: out, Stderr: out})
}
