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
	name := cmd.Argv[0]
	if root != "/" {
		// The kernel resolves the program after the chroot; exec.Command
		// would look it up on the initramfs's PATH, so find it in the root.
		resolved, ok := lookInRoot(root, name, cmd.Env)
		if !ok {
			return fmt.Errorf("run %q: %w", name, &exec.Error{Name: name, Err: exec.ErrNotFound})
		}
		name = resolved
	}
	c := exec.CommandContext(ctx, name, cmd.Argv[1:]...)
	c.Args[0] = cmd.Argv[0]
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
