package modules

// updateSysconfig is rhel_util.update_sysconfig_file: KEY=value lines of
// a shell-variable file (/etc/sysconfig/clock, /etc/locale.conf) are set,
// others kept; a new file starts with cloud-init's "Created by" header.
// Values with whitespace are single-quoted, as shlex.quote does.

import (
	"errors"
	"io/fs"
	"strings"
)

func updateSysconfig(c *Context, fn string, keys []string, vals map[string]string) error {
	b, err := c.Root.ReadFile(fn)
	exists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	lines := splitKeepLines(string(b))
	for _, k := range keys {
		v := vals[k]
		if v == "" {
			continue
		}
		if strings.ContainsAny(v, " \t\r\n") {
			v = "'" + strings.ReplaceAll(v, "'", `'"'"'`) + "'"
		}
		done := false
		for i, l := range lines {
			lk, _, ok := strings.Cut(strings.TrimSpace(l), "=")
			if ok && strings.TrimSpace(lk) == k {
				lines[i] = k + "=" + v
				done = true
			}
		}
		if !done {
			lines = append(lines, k+"="+v)
		}
	}
	if !exists {
		lines = append([]string{makeHeader(c, "Created")}, lines...)
	}
	return c.Root.WriteFile(fn, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
}
