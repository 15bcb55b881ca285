package target

import (
	"os"
	"os/exec"
	"path"

	securejoin "github.com/cyphar/filepath-securejoin"
	"strings"
	"syscall"
)

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
