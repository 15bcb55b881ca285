package modules

import (
	"errors"
	"io/fs"

	"github.com/cloudroot/cloudroot/pkg/distro"
)

// updateSysconfig is rhel_util.update_sysconfig_file for one key: KEY=value
// set in a shell-variable file (distro.SetShellVar), other lines kept; a
// new file starts with cloud-init's "Created by" header.
func updateSysconfig(c *Context, fn, key, value string) error {
	b, err := c.Root.ReadFile(fn)
	if errors.Is(err, fs.ErrNotExist) {
		b, err = []byte(c.MakeHeader("Created")+"\n"), nil
	}
	if err != nil {
		return err
	}
	return c.Root.WriteFile(fn, []byte(distro.SetShellVar(b, key, value)), 0o644)
}
