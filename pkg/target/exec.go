package target

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
)

// execRunner runs commands with os/exec, chrooted into root unless root is "/".
type execRunner struct{}

// ExitError is a command that ran and failed.
type ExitError struct {
	Argv []string
	Code int
	Err  error
}

func (e *ExitError) Error() string {
	return fmt.Sprintf("command %q exited with code %d", strings.Join(e.Argv, " "), e.Code)
}

func (e *ExitError) Unwrap() error { return e.Err }

func (execRunner) Run(ctx context.Context, root string, cmd Cmd) error {
	c := exec.CommandContext(ctx, cmd.Argv[0], cmd.Argv[1:]...)
	c.Env = cmd.Env
	c.Stdin = cmd.Stdin
	c.Stdout = cmd.Stdout
	c.Stderr = cmd.Stderr
	c.Dir = cmd.Dir
	if root != "/" {
		if err := chrootAttr(c, root); err != nil {
			return err
		}
		if c.Dir == "" {
			c.Dir = "/"
		}
		// exec.Command resolves argv[0] against the host PATH; inside a
		// chroot the kernel must resolve it, so pass the bare path through.
		c.Path = lookInRoot(root, cmd.Argv[0], cmd.Env)
	}
	err := c.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return &ExitError{Argv: cmd.Argv, Code: ee.ExitCode(), Err: err}
	}
	if err != nil {
		return fmt.Errorf("run %q: %w", cmd.Argv[0], err)
	}
	return nil
}
