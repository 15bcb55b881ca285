package pkgmgr

// zypper_add_repo, as cloud-init 26.x's cc_zypper_add_repo (every boot):
// zypper.config settings are appended to /etc/zypp/zypp.conf (configdir
// refused, false values left out), and each zypper.repos entry with an id
// and a baseurl becomes <reposdir>/<id with "_" for spaces>.repo, unless
// the file exists or the id came before. Options are lower-cased, "-"
// becomes "_", enabled and autorefresh default to 1, and the file is
// written as Python's configobj writes it (quoting included, no final
// newline). Options and settings are written in name order (cloud-init
// keeps the YAML order, which the merged config no longer has).

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/internal/pyval"
	"github.com/cloudroot/cloudroot/pkg/modules"
	"github.com/cloudroot/cloudroot/pkg/modules/internal/configobj"
	"github.com/cloudroot/cloudroot/pkg/state"
)

// ZyppConf is zypper's main configuration file.
const ZyppConf = "/etc/zypp/zypp.conf"

// ZypperAddRepo is cc_zypper_add_repo.
var ZypperAddRepo = modules.Module{
	Name:       "zypper_add_repo",
	ActivateBy: []string{"zypper"},
	Frequency:  state.PerAlways,
	Keys:       []string{"zypper"},
	Distros:    []string{"opensuse", "opensuse-microos", "opensuse-tumbleweed", "opensuse-leap", "sle_hpc", "sle-micro", "sles"},
	Run:        modules.Typed(runZypperAddRepo),
}

// zypperConfig is the zypper key, decoded once.
type zypperConfig struct {
	Settings [][2]string // zypp.conf name=value, name order
	ReposDir string
	Repos    []pyval.Dict
	Present  bool
}

// zypperKeys are the module's keys as the decoder reads them (values of
// the wrong shape are ignored, as cloud-init's .get() chain does).
type zypperKeys struct {
	Zypper *struct {
		Repos  []pyval.Dict `cfg:"repos,loose"`
		Config pyval.Dict   `cfg:"config"`
	} `cfg:"zypper,loose"`
}

func decodeZypper(k zypperKeys) zypperConfig {
	z := zypperConfig{ReposDir: "/etc/zypp/repos.d/"}
	sec := k.Zypper
	if sec == nil {
		return z
	}
	z.Repos = sec.Repos
	if len(z.Repos) == 0 {
		return z
	}
	z.Present = true
	if d, ok := sec.Config.Get("reposdir"); ok {
		z.ReposDir = pyval.ScalarStr(d)
	}
	for _, e := range sec.Config.Entries {
		z.Settings = append(z.Settings, [2]string{e.Key, pyval.StrIfTrue(e.Value)})
	}
	return z
}

func runZypperAddRepo(ctx context.Context, c *modules.Context, k zypperKeys) error {
	z := decodeZypper(k)
	if !z.Present {
		return nil
	}
	var errs []error
	if err := writeZyppConf(c, z.Settings); err != nil {
		errs = append(errs, err)
	}
	pending := map[string]bool{}
	for i, r := range z.Repos {
		var missing []string
		for _, k := range []string{"id", "baseurl"} {
			if _, ok := r.Get(k); !ok {
				missing = append(missing, k)
			}
		}
		if len(missing) > 0 {
			c.Warnf("Repo config at index %d is missing required config keys: %s", i, strings.Join(missing, ","))
			continue
		}
		idv, _ := r.Get("id")
		id := pyval.Str(idv)
		fn := path.Join(z.ReposDir, strings.ReplaceAll(id, " ", "_")+".repo")
		if c.Root.Exists(fn) {
			c.Log.Info(fmt.Sprintf("Skipping repo %s, file %s already exists!", id, fn))
			continue
		}
		if pending[id] {
			c.Log.Info(fmt.Sprintf("Skipping repo %s, file %s already pending!", id, fn))
			continue
		}
		pending[id] = true
		body, err := zypperRepoFile(id, r)
		if err != nil {
			errs = append(errs, fmt.Errorf("repo %s: %w", id, err))
			continue
		}
		if err := c.Root.WriteFile(fn, []byte(body), 0o644); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// writeZyppConf appends the settings to zypp.conf.
func writeZyppConf(c *modules.Context, settings [][2]string) error {
	if len(settings) == 0 {
		return nil
	}
	old, err := c.Root.ReadFile(ZyppConf)
	if err != nil {
		return fmt.Errorf("reading %s: %w", ZyppConf, err)
	}
	lines := []string{"# Added via cloud.cfg"}
	for _, s := range settings {
		if s[0] == "configdir" {
			c.Warnf(`Changing the location of the zypper configuration is not supported, skipping "configdir" setting`)
			continue
		}
		if s[1] != "" {
			lines = append(lines, s[0]+"="+s[1])
		}
	}
	out := string(old)
	if len(lines) > 1 {
		out += strings.Join(lines, "\n")
	}
	return c.Root.WriteFile(ZyppConf, []byte(out), 0o644)
}

// zypperValue is _format_repo_value.
func zypperValue(v any) string {
	switch t := v.(type) {
	case bool:
		if t {
			return "1"
		}
		return "0"
	case []any:
		parts := make([]string, len(t))
		for i, e := range t {
			parts[i] = zypperValue(e)
		}
		return strings.Join(parts, "\n    ")
	case string:
		return t
	}
	return pyval.Str(v)
}

// zypperRepoFile is _format_repository_config.
func zypperRepoFile(id string, r pyval.Dict) (string, error) {
	opts := map[string]string{}
	for _, e := range r.Entries {
		if e.Key == "" || e.Key == "id" {
			continue
		}
		opts[strings.ReplaceAll(strings.TrimSpace(strings.ToLower(e.Key)), "-", "_")] = zypperValue(e.Value)
	}
	keys := make([]string, 0, len(opts))
	for k := range opts {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range []string{"enabled", "autorefresh"} {
		if _, ok := opts[k]; !ok {
			opts[k] = "1"
			keys = append(keys, k)
		}
	}
	sec, err := configobj.Quote(id, false)
	if err != nil {
		return "", err
	}
	lines := []string{"[" + sec + "]"}
	for _, k := range keys {
		qk, err := configobj.Quote(k, false)
		if err != nil {
			return "", err
		}
		qv, err := configobj.Quote(opts[k], true)
		if err != nil {
			return "", err
		}
		lines = append(lines, qk+" = "+qv)
	}
	return strings.Join(lines, "\n"), nil
}
