package target

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path"
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

// SystemMounts are the directories of the running system bound into a
// root before commands run chrooted in it (cloud-init's commands expect a
// normal system: /proc/mounts, devices, /run/cloud-init).
var SystemMounts = []string{"/dev", "/proc", "/sys", "/run"}

// Mounter binds and unmounts directories (mount --rbind / umount -l);
// BindMounter is the real one, tests record the calls.
type Mounter interface {
	Bind(src, dst string) error
	Unmount(dst string) error
}

// BindSystem binds SystemMounts into the root directory dir with m and
// returns the function that unmounts them, in reverse order. A mount that
// fails is reported in the error and skipped; the others stay bound (the
// boot goes on, commands may see less).
func BindSystem(dir string, m Mounter) (unbind func() error, err error) {
	var bound []string
	var errs []error
	for _, p := range SystemMounts {
		dst := path.Join(dir, p)
		if err := m.Bind(p, dst); err != nil {
			errs = append(errs, fmt.Errorf("binding %s on %s: %w", p, dst, err))
			continue
		}
		bound = append(bound, dst)
	}
	return func() error {
		var errs []error
		for i := len(bound) - 1; i >= 0; i-- {
			if err := m.Unmount(bound[i]); err != nil {
				errs = append(errs, fmt.Errorf("unmounting %s: %w", bound[i], err))
			}
		}
		return errors.Join(errs...)
	}, errors.Join(errs...)
}
