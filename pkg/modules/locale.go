package modules

// locale (cloud-init cc_locale, config stage, per-instance, all distros)
// applies `locale` (default: the distro's current or default locale, as
// cloud.get_locale() answers) with the distro's apply_locale, into
// `locale_configfile` when given. `locale: false` skips it. The plan —
// files and their contents, commands, Debian's "nothing to regenerate"
// rule — comes from pkg/distro (Facts.LocalePlan); this module writes the
// files and runs the commands, installing Debian's "locales" package
// first when locale-gen or update-locale is missing.

import (
	"context"
	"fmt"
	"path"

	"github.com/cloudroot/cloudroot/pkg/internal/pyval"
	"github.com/cloudroot/cloudroot/pkg/state"
)

// Locale is cc_locale.
var Locale = Module{
	Name:      "locale",
	Frequency: state.PerInstance,
	Keys:      []string{"locale", "locale_configfile"},
	Run:       Typed(runLocale),
}

// localeConfig is the module's configuration.
type localeConfig struct {
	// Locale is str() of locale ("" = the distro's); one util.is_false
	// takes for false (False, "off", "no"...) disables the module.
	Locale     string `cfg:"locale"`
	ConfigFile string `cfg:"locale_configfile"`
}

func runLocale(ctx context.Context, c *Context, lc localeConfig) error {
	if pyval.IsFalse(lc.Locale) {
		c.Log.Debug("Skipping module named locale, disabled by config", "module", "locale")
		return nil
	}
	f := c.Facts()
	locale := lc.Locale
	if locale == "" {
		locale = f.DefaultLocale(c.Root.ReadFile)
	}
	if locale == "" {
		return fmt.Errorf("Failed to provide locale value.")
	}
	c.Log.Debug("Setting locale", "module", "locale", "locale", locale)
	plan := f.LocalePlan(locale, lc.ConfigFile, c.Root.ReadFile, c.MakeHeader("Created"))
	if plan.Unsupported {
		c.Log.Debug("Cannot set the locale.", "module", "locale")
		return nil
	}
	if plan.Warning != "" {
		c.Warnf("%s", plan.Warning)
	}
	for _, w := range plan.Writes {
		if err := c.Root.WriteFile(w.Path, []byte(w.Content), 0o644); err != nil {
			return fmt.Errorf("locale: %w", err)
		}
	}
	installed := map[string]bool{}
	for _, cmd := range plan.Cmds {
		if pkg := plan.Requires[cmd.Argv[0]]; pkg != "" && !installed[pkg] && !c.inPath(cmd.Argv[0]) {
			if err := c.InstallPackages(ctx, f, []string{pkg}); err != nil {
				return fmt.Errorf("locale: %w", err)
			}
			installed[pkg] = true
		}
		if err := c.RunCmd(ctx, cmd); err != nil {
			return fmt.Errorf("locale: %w", err)
		}
	}
	return nil
}

// inPath is subp.which in the target: whether name is an executable in
// the default PATH's directories.
func (c *Context) inPath(name string) bool {
	for _, d := range []string{"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"} {
		if fi, err := c.Root.Stat(path.Join(d, name)); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return true
		}
	}
	return false
}
