//go:build !linux

package target

import (
	"errors"
	"os/exec"
)

func chrootAttr(c *exec.Cmd, root string) error {
	return errors.New("target: running commands in a chroot needs Linux")
}

func lookInRoot(root, name string, env []string) (string, bool) { return name, true }

// BindMounter is the Mounter of the running kernel (Linux only).
type BindMounter struct{}

// Bind implements Mounter.
func (BindMounter) Bind(src, dst string) error { return errors.New("target: bind mounts need Linux") }

// Unmount implements Mounter.
func (BindMounter) Unmount(dst string) error { return errors.New("target: bind mounts need Linux") }
