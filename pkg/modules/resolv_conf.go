package modules

// resolv_conf (cloud-init cc_resolv_conf, init stage, per-instance, its
// distro list) writes the resolver configuration from resolv_conf when
// manage_resolv_conf is true: /etc/resolv.conf, or systemd-resolved's
// resolved.conf where the distro class says so (pkg/distro
// Facts.ResolvConfPath), from the target's /etc/cloud/templates/<name>.tmpl
// or cloudroot's templates/resolv. Boolean options become the "flags"
// the template lists after "options"; the others stay key:value options.

import (
	"context"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
	"unicode"

	"github.com/cloudroot/cloudroot/pkg/modules/internal/render"
	"github.com/cloudroot/cloudroot/pkg/state"
	"github.com/cloudroot/cloudroot/templates"
)

// ResolvConf is cc_resolv_conf.
var ResolvConf = Module{
	Name:      "resolv_conf",
	Frequency: state.PerInstance,
	Keys:      []string{"manage_resolv_conf", "resolv_conf"},
	Distros: []string{"alpine", "azurelinux", "fedora", "mariner", "opensuse", "opensuse-leap", "opensuse-microos",
		"opensuse-tumbleweed", "photon", "rhel", "sle_hpc", "sle-micro", "sles", "openeuler"},
	ActivateBy: []string{"manage_resolv_conf"},
	Run:        Typed(runResolvConf),
}

// resolvTemplates maps resolve_conf_fn to its template name.
var resolvTemplates = map[string]string{
	"/etc/resolv.conf":           "resolv.conf",
	"/etc/systemd/resolved.conf": "systemd.resolved.conf",
}

// resolvParams is resolv_conf turned into the template's parameters
// (generate_resolv_conf; the context is the mapping as given, an opaque
// pass-through): its options (decoded apart, nil when not a mapping) are
// split into flags, the true boolean options, and the other options;
// false ones are dropped. Flags are sorted (cloud-init keeps their YAML
// order, which the decoded config no longer has).
func resolvParams(m, options map[string]any) map[string]any {
	p := maps.Clone(m)
	if p == nil {
		p = map[string]any{}
	}
	opts := map[string]any{}
	on := []any{}
	for _, k := range slices.Sorted(maps.Keys(options)) {
		switch b := options[k].(type) {
		case bool:
			// false flags are dropped, as cloud-init drops them
			if b {
				on = append(on, k)
			}
		default:
			opts[k] = options[k]
		}
	}
	p["options"], p["flags"] = opts, on
	return p
}

// resolvConfConfig is the module's configuration.
type resolvConfConfig struct {
	HasManage bool `cfg:"manage_resolv_conf,present"`
	Manage    bool `cfg:"manage_resolv_conf"`
	// Params is resolv_conf when it is a mapping (anything else is "no
	// parameters", as cloud-init treats it), passed through: it becomes
	// the template's context (resolvParams).
	Params map[string]any `cfg:"resolv_conf,loose"`
	// Section is what resolvParams reads of it: options, passed through
	// (nil when not a mapping).
	Section struct {
		Options map[string]any `cfg:"options,loose"`
	} `cfg:"resolv_conf,loose"`
	// SystemInfo is the system_info keys the module reads (ignored when
	// system_info or its paths are not mappings).
	SystemInfo struct {
		Paths struct {
			TemplatesDir string `cfg:"templates_dir"`
		} `cfg:"paths,loose"`
	} `cfg:"system_info,loose"`
}

func runResolvConf(_ context.Context, c *Context, cfg resolvConfConfig) error {
	if !cfg.HasManage {
		return nil
	}
	if !cfg.Manage {
		c.Log.Debug("Skipping module named resolv_conf, 'manage_resolv_conf' present but set to False", "module", "resolv_conf")
		return nil
	}
	params := cfg.Params
	if params == nil {
		c.Warnf("manage_resolv_conf True but no parameters provided!")
		return nil
	}
	fn := c.Facts().ResolvConfPath()
	name, ok := resolvTemplates[fn]
	if !ok {
		c.Warnf("No template found, not rendering resolve configs")
		return nil
	}
	dir := cfg.SystemInfo.Paths.TemplatesDir
	if dir == "" {
		dir = "/etc/cloud/templates"
	}
	tmpl, err := c.Root.ReadFile(path.Join(dir, name+".tmpl"))
	if err != nil {
		b, ok := templates.Resolv(name)
		if !ok {
			c.Warnf("No template found, not rendering resolve configs")
			return nil
		}
		tmpl = b
	}
	// The options are cleaned apart (each warning once), then replaced.
	rest := maps.Clone(params)
	delete(rest, "options")
	opts := withoutControl(c, "resolv_conf.options", cfg.Section.Options)
	out, err := render.Jinja(tmpl, resolvParams(withoutControl(c, "resolv_conf", rest), opts))
	if err != nil {
		return fmt.Errorf("resolv_conf: rendering %s: %w", fn, err)
	}
	return c.Root.WriteFile(fn, out, 0o644)
}

// TemplatePaths is the system_info a module rendering a template reads
// (decoded as `cfg:"system_info,loose"`).
type TemplatePaths struct {
	Paths struct {
		TemplatesDir string `cfg:"templates_dir,scalar"`
	} `cfg:"paths,loose"`
}

// Dir is system_info.paths.templates_dir (/etc/cloud/templates).
func (t TemplatePaths) Dir() string {
	if t.Paths.TemplatesDir != "" {
		return t.Paths.TemplatesDir
	}
	return "/etc/cloud/templates"
}

// withoutControl returns m without the keys, string values and list
// elements that hold a control character (a newline would add a line to
// resolv.conf: a nameserver nobody configured), each dropped with a
// warning naming its key. cloud-init renders them as given.
func withoutControl(c *Context, where string, m map[string]any) map[string]any {
	bad := func(s string) bool { return strings.ContainsFunc(s, unicode.IsControl) }
	out := make(map[string]any, len(m))
	for k, v := range m {
		key := where + "." + k
		if bad(k) {
			c.Warnf("%s: key %q holds a control character; dropped", where, k)
			continue
		}
		switch x := v.(type) {
		case string:
			if bad(x) {
				c.Warnf("%s: %q holds a control character; dropped", key, x)
				continue
			}
		case []any:
			var keep []any
			for _, e := range x {
				if s, ok := e.(string); ok && bad(s) {
					c.Warnf("%s: %q holds a control character; dropped", key, s)
					continue
				}
				keep = append(keep, e)
			}
			v = keep
		case map[string]any:
			v = withoutControl(c, key, x)
		}
		out[k] = v
	}
	return out
}
