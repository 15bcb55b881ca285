package target

import (
	"os"
	"os/exec"
	"path"
	"strings"
	"syscall"

	securejoin "github.com/cyphar/filepath-securejoin"
	"golang.org/x/sys/unix"
)

// BindMounter is the Mounter of the running kernel: recursive bind mounts
// (the mount point is created), lazily unmounted.
type BindMounter struct{}

// Bind implements Mounter.
func (BindMounter) Bind(src, dst string) error {
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	return unix.Mount(src, dst, "", unix.MS_BIND|unix.MS_REC, "")
}

// Unmount implements Mounter.
func (BindMounter) Unmount(dst string) error { return unix.Unmount(dst, unix.MNT_DETACH) }

func chrootAttr(c *exec.Cmd, root string) error {
	if c.SysProcAttr == nil {
		c.SysProcAttr = &syscall.SysProcAttr{}
	}
	c.SysProcAttr.Chroot = root
	return nil
}

// lookInRoot finds name on the PATH from env, inside root, and returns the
// path as seen from inside the root (symlinks are resolved inside the root).
func lookInRoot(root, name string, env []string) (string, bool) {
	if strings.Contains(name, "/") {
		return name, true
	}
	p := DefaultPath
	for _, e := range env {
		if v, ok := strings.CutPrefix(e, "PATH="); ok {
			p = v
		}
	}
	for _, d := range strings.Split(p, ":") {
		cand := path.Join(d, name)
		hp, err := securejoin.SecureJoin(root, cand)
		if err != nil {
			continue
		}
		if fi, err := os.Stat(hp); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return cand, true
		}
	}
	return "", false
}
