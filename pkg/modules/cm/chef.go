package cm

// chef (cloud-init cc_chef, final stage, every boot, all distros,
// activated by the `chef` key), as cloud-init 26.x does it:
//
//  1. directories (default /etc/chef, /var/log/chef, /var/lib/chef,
//     /var/chef/cache, /var/chef/backup, /var/run/chef) and /etc/chef are
//     created; files left in /var/cache/chef and /var/backups/chef move to
//     /var/chef/cache and /var/chef/backup unless already there;
//  2. validation_cert is written to validation_key (default
//     /etc/chef/validation.pem) unless it is "system" (then the key must
//     already exist, else a warning);
//  3. client.rb (config_path, default /etc/chef/client.rb) is rendered
//     from chef_client.rb (the target's /etc/cloud/templates, else
//     cloudroot's templates/chef) with cloud-init's template keys and
//     defaults; server_url and validation_name are required; the parent
//     directories of the path keys are created first;
//  4. firstboot_path (default /etc/chef/firstboot.json; empty: none) gets
//     {"run_list": ..., <initial_attributes>} as Python's json.dumps;
//  5. when /usr/bin/chef-client is missing or force_install is set, chef
//     is installed by install_type: packages (the chef package), gems
//     (ruby packages, gem/ruby links, `gem install chef`; exec defaults
//     to true), omnibus (omnibus_url, default chef.io's install.sh,
//     fetched with omnibus_url_retries, run with -v omnibus_version);
//  6. with exec, /usr/bin/chef-client runs with exec_arguments (default
//     -d -i 1800 -s 20), and delete_validation_post_exec removes
//     /etc/chef/validation.pem afterwards.
//
// Deliberate differences: the validation key is written 0600 (cloud-init:
// 0644); initial_attributes' keys are written in sorted order (the decoded
// config does not keep YAML's order).

import (
	"context"
	"fmt"
	"path"
	"slices"

	"github.com/cloudroot/cloudroot/pkg/internal/pyval"
	"github.com/cloudroot/cloudroot/pkg/modules"
	"github.com/cloudroot/cloudroot/pkg/modules/internal/render"
	"github.com/cloudroot/cloudroot/pkg/state"
	"github.com/cloudroot/cloudroot/templates"
)

// Chef is cc_chef.
var Chef = NewChef(FetchOptions{})

// NewChef builds the chef module with opts for the omnibus download.
func NewChef(opts FetchOptions) modules.Module {
	return modules.Module{
		Name:       "chef",
		Frequency:  state.PerAlways,
		Keys:       []string{"chef"},
		ActivateBy: []string{"chef"},
		Run: modules.Typed(func(ctx context.Context, c *modules.Context, cfg chefKeys) error {
			return runChef(ctx, c, opts, cfg)
		}),
	}
}

// Chef's paths and defaults (cloud-init's).
const (
	ChefValidationPEM = "/etc/chef/validation.pem"
	ChefFirstBoot     = "/etc/chef/firstboot.json"
	ChefClientRB      = "/etc/chef/client.rb"
	ChefExec          = "/usr/bin/chef-client"
	ChefOmnibusURL    = "https://www.chef.io/chef/install.sh"
	ChefRubyVersion   = "1.8"
)

var (
	chefDirs         = []string{"/etc/chef", "/var/log/chef", "/var/lib/chef", "/var/chef/cache", "/var/chef/backup", "/var/run/chef"}
	chefDirMigration = [][2]string{{"/var/backups/chef", "/var/chef/backup"}, {"/var/cache/chef", "/var/chef/cache"}}
	chefExecDefaults = []string{"-d", "-i", "1800", "-s", "20"}
	// chefTemplateDefaults are CHEF_RB_TPL_DEFAULTS (nil: None).
	chefTemplateDefaults = map[string]any{
		"ssl_verify_mode": ":verify_none", "log_level": ":info",
		"log_location": "/var/log/chef/client.log", "validation_key": ChefValidationPEM, "validation_cert": nil,
		"client_key": "/etc/chef/client.pem", "json_attribs": ChefFirstBoot, "file_cache_path": "/var/chef/cache",
		"file_backup_path": "/var/chef/backup", "pid_file": "/var/run/chef/client.pid", "show_time": true,
		"encrypted_data_bag_secret": nil,
	}
	chefPathKeys     = []string{"log_location", "validation_key", "client_key", "file_cache_path", "json_attribs", "pid_file", "encrypted_data_bag_secret"}
	chefTemplateKeys = []string{"server_url", "node_name", "environment", "validation_name", "chef_license"}
)

// chefKeys is the module's key: whether chef is given and, when it is a
// mapping, its keys.
type chefKeys struct {
	Present    bool                  `cfg:"chef,present"`
	Chef       chefSection           `cfg:"chef,loose"`
	SystemInfo modules.TemplatePaths `cfg:"system_info,loose"`
}

// chefSection is the chef mapping, each key as given (read as
// util.get_cfg_option_bool/_str read them: absent is the default).
type chefSection struct {
	// All is the whole mapping, passed through: its template keys
	// become client.rb's parameters (chefClientRB).
	All            map[string]any `cfg:",all"`
	Directories    pyval.Opt      `cfg:"directories"`
	ValidationKey  pyval.Opt      `cfg:"validation_key"`
	ValidationCert pyval.Opt      `cfg:"validation_cert"`
	FirstbootPath  pyval.Opt      `cfg:"firstboot_path"`
	RunList        pyval.Opt      `cfg:"run_list"`
	// InitialAttributes is initial_attributes when it is a mapping,
	// passed through into the first-boot JSON.
	InitialAttributes map[string]any `cfg:"initial_attributes,loose"`
	ForceInstall      pyval.Opt      `cfg:"force_install"`
	Exec              pyval.Opt      `cfg:"exec"`
	ExecArguments     pyval.Opt      `cfg:"exec_arguments"`
	DeleteValidation  pyval.Opt      `cfg:"delete_validation_post_exec"`
	ConfigPath        pyval.Opt      `cfg:"config_path"`
	NodeName          pyval.Opt      `cfg:"node_name"`
	Environment       pyval.Opt      `cfg:"environment"`
	ServerURL         pyval.Opt      `cfg:"server_url"`
	ValidationName    pyval.Opt      `cfg:"validation_name"`
	InstallType       pyval.Opt      `cfg:"install_type"`
	RubyVersion       pyval.Opt      `cfg:"ruby_version"`
	Version           pyval.Opt      `cfg:"version"`
	OmnibusURL        pyval.Opt      `cfg:"omnibus_url"`
	OmnibusRetries    pyval.Opt      `cfg:"omnibus_url_retries"`
	OmnibusVersion    pyval.Opt      `cfg:"omnibus_version"`
}

func runChef(ctx context.Context, c *modules.Context, opts FetchOptions, cfg chefKeys) error {
	if !cfg.Present {
		return nil
	}
	m := cfg.Chef
	dirs := pyStrList(m.Directories.Value)
	if s, ok := m.Directories.Value.(string); ok {
		dirs = []string{s}
	}
	if len(dirs) == 0 {
		dirs = chefDirs
	}
	for _, d := range append(slices.Clone(dirs), "/etc/chef") {
		if err := c.Root.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("chef: %w", err)
		}
	}
	if err := chefMigrateDirs(c); err != nil {
		return err
	}
	vkey := ChefValidationPEM
	if m.ValidationKey.Given {
		vkey = m.ValidationKey.Str()
	}
	if vcert := m.ValidationCert.Value; pyval.Truthy(vcert) {
		if vcert != "system" {
			if err := c.Root.WriteFile(vkey, []byte(pyval.Str(vcert)), 0o600); err != nil {
				return fmt.Errorf("chef: %w", err)
			}
		} else if fi, err := c.Root.Stat(vkey); err != nil || !fi.Mode().IsRegular() {
			c.Warnf("chef validation_cert provided as 'system', but validation_key path '%s' does not exist.", vkey)
		}
	}
	if err := chefClientRB(c, m, cfg.SystemInfo.Dir()); err != nil {
		return err
	}
	if fb := m.FirstbootPath.Or(ChefFirstBoot); fb == "" {
		c.Log.Info("First boot path empty, not writing first boot json file")
	} else {
		doc := &chefFirstBoot{vals: map[string]any{}}
		if m.RunList.Given {
			doc.set("run_list", m.RunList.Value)
		}
		if attrs := m.InitialAttributes; attrs != nil {
			keys := make([]string, 0, len(attrs))
			for k := range attrs {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				doc.set(k, attrs[k])
			}
		}
		js, err := pyval.JSONDumps(doc, pyval.JSONOptions{})
		if err != nil {
			return fmt.Errorf("chef: %s: %w", fb, err)
		}
		if err := c.Root.WriteFile(fb, []byte(js), 0o644); err != nil {
			return fmt.Errorf("chef: %w", err)
		}
	}
	run := false
	if !c.Which(ChefExec) || optBool(m.ForceInstall, false) {
		var err error
		if run, err = chefInstall(ctx, c, m, opts); err != nil {
			return err
		}
	} else {
		run = optBool(m.Exec, false)
	}
	if !run {
		return nil
	}
	argv := []string{ChefExec}
	switch a := m.ExecArguments.Value.(type) {
	case []any:
		argv = append(argv, pyStrList(a)...)
	case string:
		argv = append(argv, a)
	default:
		if m.ExecArguments.Given {
			c.Warnf("Unknown type %s provided for chef 'exec_arguments' expected list, tuple, or string", pyTypeRepr(a))
		}
		argv = append(argv, chefExecDefaults...)
	}
	if _, err := (cmCmd{Argv: argv}).run(ctx, c); err != nil {
		return err
	}
	if optBool(m.DeleteValidation, false) {
		if fi, err := c.Root.Stat(ChefValidationPEM); err == nil && fi.Mode().IsRegular() {
			if err := c.Root.Remove(ChefValidationPEM); err != nil {
				return fmt.Errorf("chef: %w", err)
			}
		}
	}
	return nil
}

// chefMigrateDirs moves what the legacy cache and backup directories hold
// into the new ones (a name already there is left behind).
func chefMigrateDirs(c *modules.Context) error {
	for _, mv := range chefDirMigration {
		old, dst := mv[0], mv[1]
		ents, err := c.Root.ReadDir(old)
		if err != nil {
			continue
		}
		for _, e := range ents {
			if c.Root.Exists(path.Join(dst, e.Name())) {
				c.Log.Debug(fmt.Sprintf("Ignoring migration of %s. File already exists in %s.", path.Join(old, e.Name()), dst))
				continue
			}
			to := dst
			if fi, err := c.Root.Stat(dst); err == nil && fi.IsDir() {
				to = path.Join(dst, e.Name())
			}
			if err := c.Root.Rename(path.Join(old, e.Name()), to); err != nil {
				return fmt.Errorf("chef: %w", err)
			}
		}
	}
	return nil
}

// chefClientRB renders client.rb.
func chefClientRB(c *modules.Context, m chefSection, templatesDir string) error {
	out := m.ConfigPath.Or(ChefClientRB)
	tmpl, err := c.Root.ReadFile(path.Join(templatesDir, "chef_client.rb.tmpl"))
	if err != nil {
		tmpl = templates.ChefClient
	}
	params := map[string]any{}
	for k, v := range chefTemplateDefaults {
		params[k] = v
	}
	for k, v := range m.All {
		_, isDefault := chefTemplateDefaults[k]
		if !isDefault && !slices.Contains(chefTemplateKeys, k) {
			continue
		}
		switch {
		case v == nil:
			params[k] = nil
		case k == "show_time":
			params[k] = pyval.TranslateBool(v, false)
		default:
			params[k] = pyval.Str(v)
		}
	}
	for _, k := range []struct {
		name string
		o    pyval.Opt
	}{{"server_url", m.ServerURL}, {"validation_name", m.ValidationName}} {
		if !k.o.Given {
			return fmt.Errorf("'%s'", k.name)
		}
	}
	params["generated_by"] = c.MakeHeader("Created")
	params["node_name"] = m.NodeName.Or(c.InstanceID)
	params["environment"] = m.Environment.Or("_default")
	params["server_url"] = jinjaValue(m.ServerURL.Value)
	params["validation_name"] = jinjaValue(m.ValidationName.Value)
	for _, k := range chefPathKeys {
		if s, ok := params[k].(string); ok && s != "" {
			if err := c.Root.MkdirAll(path.Dir(s), 0o755); err != nil {
				return fmt.Errorf("chef: %w", err)
			}
		}
	}
	body, err := render.Jinja(tmpl, params)
	if err != nil {
		return fmt.Errorf("chef: rendering %s: %w", out, err)
	}
	if err := c.Root.WriteFile(out, body, 0o644); err != nil {
		return fmt.Errorf("chef: %w", err)
	}
	return nil
}

// jinjaValue is a raw config value as the template prints it (Python's
// str for scalars).
func jinjaValue(v any) any {
	switch v.(type) {
	case nil, string:
		return v
	}
	return pyval.Str(v)
}

// chefInstall installs chef by install_type and says whether to run it.
func chefInstall(ctx context.Context, c *modules.Context, m chefSection, opts FetchOptions) (bool, error) {
	run := optBool(m.Exec, false)
	f := c.Facts()
	switch t := m.InstallType.Or("packages"); t {
	case "gems":
		ruby := m.RubyVersion.Or(ChefRubyVersion)
		pkgs := []string{"ruby" + ruby, "ruby" + ruby + "-dev"}
		if ruby == "1.8" {
			pkgs = append(pkgs, "libopenssl-ruby1.8", "rubygems1.8")
		}
		if err := installPackageSpecs(ctx, c, f, pkgs); err != nil {
			return false, err
		}
		for _, n := range []string{"gem", "ruby"} {
			if !c.Root.Exists("/usr/bin/" + n) {
				if err := c.Root.Symlink("/usr/bin/"+n+ruby, "/usr/bin/"+n); err != nil {
					return false, fmt.Errorf("chef: %w", err)
				}
			}
		}
		argv := []string{"/usr/bin/gem", "install", "chef"}
		if v := m.Version.Or(""); v != "" {
			argv = append(argv, "-v "+v)
		}
		argv = append(argv, "--no-ri", "--no-rdoc", "--bindir", "/usr/bin", "-q")
		if _, err := (cmCmd{Argv: argv}).run(ctx, c); err != nil {
			return false, err
		}
		return optBool(m.Exec, true), nil
	case "packages":
		return run, installPackageSpecs(ctx, c, f, []string{"chef"})
	case "omnibus":
		url := ChefOmnibusURL
		if v := m.OmnibusURL.Value; v != nil {
			url = pyval.Str(v)
		}
		retries, _ := cfgInt(m.OmnibusRetries.Value)
		var args []string
		if m.OmnibusVersion.Given {
			args = []string{"-v", m.OmnibusVersion.Str()}
		}
		blob, err := opts.fetch(ctx, c, url, retries)
		if err != nil {
			return false, err
		}
		return run, runBlob(ctx, c, blob, "chef-omnibus-install", args)
	default:
		c.Warnf("Unknown chef install type '%s'", t)
		return false, nil
	}
}

// chefFirstBoot is the first boot JSON object as cloud-init builds its
// dict: keys in insertion order, a key set again keeps its place.
type chefFirstBoot struct {
	keys []string
	vals map[string]any
}

func (o *chefFirstBoot) set(k string, v any) {
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

// Keys and Get make it a yaml11.Ordered for pyval.JSONDumps.
func (o *chefFirstBoot) Keys() []string { return o.keys }

// Get is the value of k.
func (o *chefFirstBoot) Get(k string) any { return o.vals[k] }
