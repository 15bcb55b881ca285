package ntp

// ntp (cloud-init cc_ntp, config stage, per-instance, cloud-init's distro
// list) configures an NTP client from the `ntp` key:
//
//  1. ntp.enabled false skips it; `ntp: null` configures the default client.
//  2. The client is ntp.ntp_client, else system_info.ntp_client, else
//     ("auto") the first of the distro's preferred clients whose check_exe
//     is installed in the target, else the first preferred one. Its
//     settings come from the distro's table (pkg/distro Facts.NTP), with
//     ntp.config's keys overriding them; check_exe, confpath, packages and
//     service_name, and a template or template_name, are required.
//  3. An existing confpath is renamed to <confpath>.dist; the template
//     (ntp.config.template, else /etc/cloud/templates/<template_name>.tmpl
//     in the target, else cloudroot's templates/ntp) is rendered with
//     servers, pools, peers and allow into confpath. With neither servers
//     nor pools, the distro's 0-3.<distro>.pool.ntp.org pools are used
//     (servers for Alpine's busybox ntpd).
//  4. The client's packages are installed when check_exe is missing, and
//     on a booted system the service is reloaded (systemctl
//     reload-or-restart, rc-service restart...). In the initramfs nothing
//     runs yet and the service reads its configuration when it starts.

import (
	"context"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/distro"
	"github.com/cloudroot/cloudroot/pkg/internal/pyval"
	"github.com/cloudroot/cloudroot/pkg/modules"
	"github.com/cloudroot/cloudroot/pkg/modules/internal/render"
	"github.com/cloudroot/cloudroot/pkg/state"
	"github.com/cloudroot/cloudroot/templates"
)

// NTP is cc_ntp.
var NTP = modules.Module{
	Name:      "ntp",
	Frequency: state.PerInstance,
	Keys:      []string{"ntp"},
	Distros: []string{"almalinux", "alpine", "aosc", "azurelinux", "centos", "cloudlinux", "cos", "debian",
		"eurolinux", "fedora", "freebsd", "mariner", "miraclelinux", "openbsd", "openeuler", "OpenCloudOS",
		"openmandriva", "opensuse", "opensuse-microos", "opensuse-tumbleweed", "opensuse-leap", "photon",
		"raspberry-pi-os", "rhel", "rocky", "sle_hpc", "sle-micro", "sles", "TencentOS", "ubuntu", "virtuozzo"},
	ActivateBy: []string{"ntp"},
	Run:        modules.Typed(runNTP),
}

// ntpConfig is the module's configuration.
type ntpConfig struct {
	Present bool       `cfg:"ntp,present"`
	NTP     ntpSection `cfg:"ntp"`
	// SystemInfo is the system_info keys the module reads (ignored when
	// system_info or its paths are not mappings).
	SystemInfo struct {
		NTPClient string `cfg:"ntp_client"`
		Paths     struct {
			TemplatesDir string `cfg:"templates_dir"`
		} `cfg:"paths,loose"`
	} `cfg:"system_info,loose"`
}

// ntpSection is the ntp mapping (`ntp: null` is an empty one).
type ntpSection struct {
	// Enabled is str() of enabled: util.is_false of it disables the module
	// (absent or null: enabled).
	Enabled string   `cfg:"enabled"`
	Client  string   `cfg:"ntp_client"`
	Servers []string `cfg:"servers"`
	Pools   []string `cfg:"pools"`
	Peers   []string `cfg:"peers"`
	Allow   []string `cfg:"allow"`
	// Config is ntp.config, checked key by key as cloud-init's
	// supplemental schema validation does (selectNTPClient): the keys
	// given override the client's.
	Config map[string]any `cfg:"config,loose"`
}

// TypeErrors is cloud-init's message for an ntp value that is not a
// mapping.
func (ntpConfig) TypeErrors() map[string]string {
	return map[string]string{"ntp": "'ntp' key existed in config, but not a dictionary type, is a %s instead"}
}

// ntpClient is a client's merged settings.
type ntpClient struct {
	CheckExe, ConfPath, Service, Template, TemplateName string
	Packages                                            []string
}

func runNTP(ctx context.Context, c *modules.Context, cfg ntpConfig) error {
	nc := cfg.NTP
	if !cfg.Present || pyval.IsFalse(nc.Enabled) {
		c.Log.Debug("Skipping module named ntp, not present or disabled by cfg", "module", "ntp")
		return nil
	}
	f := c.Facts()
	dname := f.SystemInfo.Distro
	cl, err := selectNTPClient(c, f, cfg)
	if err != nil {
		return err
	}
	if c.Root.Exists(cl.ConfPath) {
		if err := c.Root.Rename(cl.ConfPath, cl.ConfPath+".dist"); err != nil {
			return err
		}
	}
	tmpl := cl.Template
	if tmpl == "" {
		name := strings.ReplaceAll(cl.TemplateName, "{distro}", dname)
		t, ok := ntpTemplate(c, cfg, name)
		if !ok {
			return fmt.Errorf("No template found, not rendering %s", cl.TemplateName)
		}
		tmpl = t
	}
	servers, pools := nc.Servers, nc.Pools
	switch {
	case len(servers) == 0 && len(pools) == 0 && dname == "cos":
		tmpl = ""
	case len(servers) == 0 && dname == "alpine" && cl.Service == "ntpd":
		servers = distro.NTPPoolNames(dname)
	case len(servers) == 0 && len(pools) == 0:
		pools = distro.NTPPoolNames(dname)
	}
	if tmpl != "" {
		out, err := renderNTPTemplate(tmpl, map[string][]string{"servers": servers, "pools": pools, "peers": nc.Peers, "allow": nc.Allow})
		if err != nil {
			return fmt.Errorf("ntp: rendering %s: %w", cl.ConfPath, err)
		}
		if err := c.Root.WriteFile(cl.ConfPath, []byte(out), 0o644); err != nil {
			return fmt.Errorf("ntp: %w", err)
		}
	}
	if !c.Which(cl.CheckExe) && len(cl.Packages) > 0 {
		if err := c.InstallPackages(ctx, f, cl.Packages); err != nil {
			return fmt.Errorf("ntp: %w", err)
		}
	}
	if !c.Booted {
		c.Log.Debug("not reloading the NTP service: the target is not running yet", "module", "ntp")
		return nil
	}
	if err := c.ManageService(ctx, f, distro.ActionReload, cl.Service); err != nil {
		return fmt.Errorf("Failed to reload/start ntp service: %w", err)
	}
	return nil
}

// selectNTPClient is select_ntp_client merged with ntp.config and checked
// as supplemental_schema_validation does.
func selectNTPClient(c *modules.Context, f distro.Facts, cfg ntpConfig) (ntpClient, error) {
	nc := cfg.NTP
	table := f.NTP.Clients
	var base distro.NTPClient
	var found bool
	choice := nc.Client
	if choice == "" || choice == "auto" {
		choice = "auto"
		if cfg.SystemInfo.NTPClient != "" {
			choice = cfg.SystemInfo.NTPClient
		} else if f.SystemInfo.NTPClient != "" {
			choice = f.SystemInfo.NTPClient
		}
		if choice == "auto" {
			for _, name := range f.NTP.Preferred {
				if cl, ok := table[name]; ok && c.Which(cl.CheckExe) {
					base, found = cl, true
					break
				}
			}
			if !found && len(f.NTP.Preferred) > 0 {
				base, found = table[f.NTP.Preferred[0]]
			}
		}
	}
	if !found && choice != "auto" {
		base, found = table[choice]
	}
	present := map[string]bool{}
	if found {
		for _, k := range []string{"check_exe", "confpath", "packages", "service_name", "template_name"} {
			present[k] = true
		}
	}
	cl := ntpClient{CheckExe: base.CheckExe, ConfPath: base.ConfPath, Service: base.Service,
		TemplateName: base.Template, Packages: base.Packages}
	var errs []string
	keys := make([]string, 0, len(nc.Config))
	for k := range nc.Config {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := nc.Config[k]
		present[k] = true
		s, isStr := v.(string)
		switch k {
		case "packages":
			l, ok := v.([]any)
			if !ok {
				errs = append(errs, fmt.Sprintf("Expected a list of required package names for ntp:config:packages. Found (%v)", v))
				continue
			}
			cl.Packages = modules.StringList(l)
		case "template", "template_name":
			if v == nil {
				present[k] = false
				continue
			}
			if !isStr {
				errs = append(errs, fmt.Sprintf("Expected a string type for ntp:config:%s. Found (%v)", k, v))
				continue
			}
			if k == "template" {
				cl.Template = s
			} else {
				cl.TemplateName = s
			}
		default:
			if !isStr || (k == "confpath" && s == "") {
				what := "a string type for"
				if k == "confpath" {
					what = "a config file path"
				}
				errs = append(errs, fmt.Sprintf("Expected %s ntp:config:%s. Found (%v)", what, k, v))
				continue
			}
			switch k {
			case "check_exe":
				cl.CheckExe = s
			case "confpath":
				cl.ConfPath = s
			case "service_name":
				cl.Service = s
			}
		}
	}
	var missing []string
	for _, k := range []string{"check_exe", "confpath", "packages", "service_name"} {
		if !present[k] {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		errs = append([]string{"Missing required ntp:config keys: " + strings.Join(missing, ", ")}, errs...)
	} else if cl.Template == "" && cl.TemplateName == "" {
		errs = append([]string{"Either ntp:config:template or ntp:config:template_name values are required"}, errs...)
	}
	if len(errs) > 0 {
		return cl, errors.New("Invalid ntp configuration:\\n" + strings.Join(errs, "\n"))
	}
	return cl, nil
}

// ntpTemplate finds a template by name: the target's
// /etc/cloud/templates/<name>.tmpl (templates_dir), else cloudroot's.
func ntpTemplate(c *modules.Context, cfg ntpConfig, name string) (string, bool) {
	dir := "/etc/cloud/templates"
	if d := cfg.SystemInfo.Paths.TemplatesDir; d != "" {
		dir = d
	}
	if b, err := c.Root.ReadFile(path.Join(dir, name+".tmpl")); err == nil {
		return string(b), true
	}
	b, ok := templates.NTP(name)
	return string(b), ok
}

// renderNTPTemplate renders a Jinja template ("## template: jinja") with
// the project's engine, or a headerless one with cloud-init's basic $var
// renderer (lists as Python prints them).
func renderNTPTemplate(tmpl string, params map[string][]string) (string, error) {
	first, _, _ := strings.Cut(tmpl, "\n")
	if strings.HasPrefix(strings.ReplaceAll(strings.ToLower(first), " ", ""), "##template:jinja") {
		data := map[string]any{}
		for k, v := range params {
			l := make([]any, 0, len(v))
			for _, s := range v {
				l = append(l, s)
			}
			data[k] = l
		}
		out, err := render.Jinja([]byte(tmpl), data)
		return string(out), err
	}
	strs := map[string]string{}
	for k, v := range params {
		q := make([]string, 0, len(v))
		for _, s := range v {
			q = append(q, "'"+s+"'")
		}
		strs[k] = "[" + strings.Join(q, ", ") + "]"
	}
	return render.Basic(tmpl, strs)
}
