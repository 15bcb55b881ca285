package target

import (
	"os"
	"os/exec"
	"path"
	"path/filepath"
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
// path as seen from inside the root.
func lookInRoot(root, name string, env []string) string {
	if strings.Contains(name, "/") {
		return name
	}
	p := DefaultPath
	for _, e := range env {
		if v, ok := strings.CutPrefix(e, "PATH="); ok {
			p = v
		}
	}
	for _, d := range filepath.SplitList(p) {
		cand := path.Join(d, name)
		if fi, err := os.Stat(filepath.Join(root, cand)); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return cand
		}
	}
	return name
}
