package modules

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"regexp"
	"strings"
	"sync"

	"github.com/cloudroot/cloudroot/pkg/internal/dnsname"
	"github.com/cloudroot/cloudroot/pkg/state"
	"github.com/cloudroot/cloudroot/templates"
)

// HostnameInfo is cloud-init's util.get_hostname_fqdn result.
type HostnameInfo struct {
	Hostname, FQDN string
	IsDefault      bool
}

// GetHostnameFQDN follows cloud-init's util.get_hostname_fqdn: `fqdn`, then a
// dotted `hostname`, then the datasource's local-hostname (with
// "localdomain" as the default domain), then the current hostname.
//
// A name that is not a valid host name (see validHostname) is ignored with a
// warning, as if it were not set: cloud-init writes what it is given, so a
// newline in local-hostname would add lines to /etc/hosts and
// /etc/hostname (docs/compatibility.md).
func GetHostnameFQDN(c *Context, names hostnameKeys) HostnameInfo {
	fqdnCfg, hostCfg := configHostname(c, "fqdn", names.FQDN), configHostname(c, "hostname", names.Hostname)
	if fqdnCfg != "" {
		fqdn := fqdnCfg
		h := hostCfg
		if h == "" {
			h, _, _ = strings.Cut(fqdn, ".")
		}
		return HostnameInfo{Hostname: h, FQDN: fqdn}
	}
	if h := hostCfg; strings.Index(h, ".") > 0 {
		short, _, _ := strings.Cut(h, ".")
		return HostnameInfo{Hostname: short, FQDN: h}
	}
	fqdn, isDefault := dsHostname(c, true)
	if h := hostCfg; h != "" {
		return HostnameInfo{Hostname: h, FQDN: fqdn}
	}
	h, isDefault2 := dsHostname(c, false)
	return HostnameInfo{Hostname: h, FQDN: fqdn, IsDefault: isDefault || isDefault2}
}

// DSHostname is DataSource.get_hostname: the datasource's host name (with
// its domain when fqdn) and whether it is a default.
func (c *Context) DSHostname(fqdn bool) (string, bool) { return dsHostname(c, fqdn) }

// dsHostname is DataSource.get_hostname.
func dsHostname(c *Context, fqdn bool) (string, bool) {
	const defDomain, defHost = "localdomain", "localhost"
	var toks []string
	isDefault := false
	lh := c.Metadata().LocalHostname
	if lh != "" && !validHostname(lh) {
		c.Warnf("local-hostname %q from the datasource is not a valid host name; ignored", lh)
		lh = ""
	}
	if lh == "" {
		cur := currentHostname(c)
		switch {
		case strings.Index(cur, ".") > 0:
			toks = strings.Split(cur, ".")
		case cur != "":
			toks = []string{cur, defDomain}
		default:
			toks = []string{defHost, defDomain}
		}
		isDefault = cur == "" || cur == defHost
	} else if net.ParseIP(lh) != nil {
		toks = []string{lh}
	} else {
		toks = strings.Split(lh, ".")
	}
	host, domain := toks[0], defDomain
	if len(toks) > 1 {
		domain = strings.Join(toks[1:], ".")
	}
	if fqdn && domain != defDomain {
		host = host + "." + domain
	}
	return host, isDefault
}

// validHostname reports whether name can be written as a host name: an IP
// address (a local-hostname may be one), or a DNS name (dnsname.Valid:
// letters, digits, hyphens and underscores in labels of at most 63, at
// most 253 in all). Nothing else: no white space or control character
// that would add a line to /etc/hostname or /etc/hosts, no quote or $
// for the distros whose hostname file is shell (/etc/conf.d/hostname,
// /etc/rc.conf, /etc/sysconfig/network).
func validHostname(name string) bool {
	return net.ParseIP(name) != nil || dnsname.Valid(name, false)
}

// hostnameKeys are the cloud-config's hostname and fqdn.
type hostnameKeys struct {
	Hostname string `cfg:"hostname,scalar"`
	FQDN     string `cfg:"fqdn,scalar"`
}

// hostnameConfig is set_hostname's and update_hostname's configuration.
type hostnameConfig struct {
	Preserve           bool         `cfg:"preserve_hostname"`
	PreferFQDN         bool         `cfg:"prefer_fqdn_over_hostname"`
	CreateHostnameFile bool         `cfg:"create_hostname_file,default=true"`
	Names              hostnameKeys `cfg:",inline"`
}

// etcHostsConfig is update_etc_hosts' configuration.
type etcHostsConfig struct {
	// Mode is manage_etc_hosts as text ("template", "localhost"); Manage
	// is it read as a flag.
	Mode       string        `cfg:"manage_etc_hosts,scalar"`
	Manage     bool          `cfg:"manage_etc_hosts"`
	Names      hostnameKeys  `cfg:",inline"`
	SystemInfo TemplatePaths `cfg:"system_info,loose"`
}

// configHostname is h, the cloud-config's hostname or fqdn (key), "" when
// unset or not a valid host name (with a warning).
func configHostname(c *Context, key, h string) string {
	if h != "" && !validHostname(h) {
		c.Warnf("%s %q is not a valid host name; ignored", key, h)
		return ""
	}
	return h
}

// currentHostname is util.get_hostname (socket.gethostname): the running
// kernel's hostname in a booted system (the agent: after an initramfs boot,
// in-root, in a chroot or container, where it need not be /etc/hostname's);
// in the initramfs, where the kernel's is not the target's yet, the target's
// /etc/hostname.
func currentHostname(c *Context) string {
	if c.Booted {
		if h, err := os.Hostname(); err == nil && h != "" {
			return h
		}
	}
	if b, err := c.Root.ReadFile("/etc/hostname"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			l = strings.TrimSpace(l)
			if l != "" && !strings.HasPrefix(l, "#") {
				return l
			}
		}
	}
	return ""
}

func writeHostnameFile(c *Context, cfg hostnameConfig, name string) error {
	if !cfg.CreateHostnameFile && !c.Root.Exists("/etc/hostname") {
		c.Log.Info("create_hostname_file is false and /etc/hostname does not exist; not writing it")
		return nil
	}
	return c.Root.WriteFile("/etc/hostname", []byte(name+"\n"), 0o644)
}

func applyHostname(c *Context, name string) error {
	if c.SetLiveHostname == nil {
		return nil
	}
	return c.SetLiveHostname(name)
}

// SetHostname is cc_set_hostname.
var SetHostname = Module{
	Name:      "set_hostname",
	Frequency: state.PerInstance,
	Keys:      []string{"preserve_hostname", "hostname", "fqdn", "prefer_fqdn_over_hostname", "create_hostname_file"},
	Run: Typed(func(ctx context.Context, c *Context, cfg hostnameConfig) error {
		if cfg.Preserve {
			c.Log.Debug("configured to preserve hostname; not setting it", "module", "set_hostname")
			return nil
		}
		hi := GetHostnameFQDN(c, cfg.Names)
		if hi.IsDefault && hi.Hostname == "localhost" {
			c.Log.Debug("no hostname was provided, skipping set_hostname", "module", "set_hostname")
			return nil
		}
		name := hi.Hostname
		if cfg.PreferFQDN && hi.FQDN != "" {
			name = hi.FQDN
		}
		if err := writeHostnameFile(c, cfg, name); err != nil {
			return fmt.Errorf("set_hostname: failed to set the hostname to %s (%s): %w", hi.FQDN, hi.Hostname, err)
		}
		if err := applyHostname(c, name); err != nil {
			return fmt.Errorf("set_hostname: apply hostname %s: %w", name, err)
		}
		// atomic_helper.write_json: indent 1, sorted keys, a final newline.
		b, _ := json.MarshalIndent(map[string]string{"hostname": hi.Hostname, "fqdn": hi.FQDN}, "", " ")
		if err := c.Root.WriteFile(state.SetHostnameFile, append(b, '\n'), 0o644); err != nil {
			return fmt.Errorf("set_hostname: %w", err)
		}
		return nil
	}),
}

// UpdateHostname is cc_update_hostname: every boot, update the hostname
// unless the admin changed it since cloudroot last wrote it.
var UpdateHostname = Module{
	Name:      "update_hostname",
	Frequency: state.PerAlways,
	Keys:      []string{"preserve_hostname", "prefer_fqdn_over_hostname", "create_hostname_file"},
	Run: Typed(func(ctx context.Context, c *Context, cfg hostnameConfig) error {
		if cfg.Preserve {
			c.Log.Debug("configured to preserve hostname; not updating it", "module", "update_hostname")
			return nil
		}
		hi := GetHostnameFQDN(c, cfg.Names)
		if hi.IsDefault && hi.Hostname == "localhost" {
			c.Log.Debug("no hostname was provided, skipping update_hostname", "module", "update_hostname")
			return nil
		}
		applying := hi.Hostname
		if cfg.PreferFQDN && hi.FQDN != "" {
			applying = hi.FQDN
		}
		prev := ""
		if b, err := c.Root.ReadFile(state.PrevHostnameFile); err == nil {
			prev = strings.TrimSpace(string(b))
		}
		sys := currentHostname(c)
		updatePrev := prev == "" || prev != applying
		updateSys := sys == "" || sys == prev || sys == "localhost" || sys == "localhost.localdomain"
		if updateSys && sys != applying {
			if err := writeHostnameFile(c, cfg, applying); err != nil {
				return fmt.Errorf("update_hostname: %w", err)
			}
		}
		if updateSys {
			if err := applyHostname(c, applying); err != nil {
				return fmt.Errorf("update_hostname: apply hostname %s: %w", applying, err)
			}
		}
		if updatePrev {
			if err := c.Root.WriteFile(state.PrevHostnameFile, []byte(applying+"\n"), 0o644); err != nil {
				return fmt.Errorf("update_hostname: %w", err)
			}
		}
		return nil
	}),
}

// UpdateEtcHosts is cc_update_etc_hosts.
var UpdateEtcHosts = Module{
	Name:       "update_etc_hosts",
	ActivateBy: []string{"manage_etc_hosts"},
	Frequency:  state.PerAlways,
	Keys:       []string{"manage_etc_hosts", "fqdn", "hostname"},
	Run: Typed(func(ctx context.Context, c *Context, cfg etcHostsConfig) error {
		mode := strings.ToLower(cfg.Mode)
		switch {
		case mode == "template" || (mode != "localhost" && cfg.Manage):
			if mode == "template" {
				c.Warnf("Deprecated: manage_etc_hosts: template is deprecated; use manage_etc_hosts: true")
			}
			hi := GetHostnameFQDN(c, cfg.Names)
			if hi.Hostname == "" {
				c.Warnf("Option 'manage_etc_hosts' was set, but no hostname was found")
				return nil
			}
			tmpl, src, err := hostsTemplate(c, cfg.SystemInfo.Dir())
			if err != nil {
				return fmt.Errorf("update_etc_hosts: %w", err)
			}
			out, err := RenderBasicJinja(tmpl, map[string]string{"hostname": hi.Hostname, "fqdn": hi.FQDN})
			if err != nil {
				return fmt.Errorf("update_etc_hosts: render %s: %w", src, err)
			}
			return c.Root.WriteFile("/etc/hosts", []byte(out), 0o644)
		case mode == "localhost":
			hi := GetHostnameFQDN(c, cfg.Names)
			if hi.Hostname == "" {
				c.Warnf("Option 'manage_etc_hosts' was set, but no hostname was found")
				return nil
			}
			return updateLocalhostEntry(c, hi)
		default:
			c.Log.Debug("configuration option 'manage_etc_hosts' is not set, not managing /etc/hosts", "module", "update_etc_hosts")
		}
		return nil
	}),
}

func hostsTemplate(c *Context, dir string) (string, string, error) {
	name := "hosts." + c.Distro.HostsTemplateName() + ".tmpl"
	if b, err := c.Root.ReadFile(dir + "/" + name); err == nil {
		return string(b), dir + "/" + name, nil
	}
	b, err := templates.FS.ReadFile("hosts/" + name)
	if err != nil {
		b, err = templates.FS.ReadFile("hosts/hosts.debian.tmpl")
		if err != nil {
			return "", "", fmt.Errorf("no template found for %s", name)
		}
	}
	return string(b), "builtin " + name, nil
}

// updateLocalhostEntry is distro.update_etc_hosts: make sure the local IP
// line names fqdn and hostname, leaving the rest of /etc/hosts alone.
func updateLocalhostEntry(c *Context, hi HostnameInfo) error {
	ip := c.Distro.Facts().LocalhostIP
	old, _ := c.Root.ReadFile("/etc/hosts")
	lines := strings.Split(strings.TrimRight(string(old), "\n"), "\n")
	if len(old) == 0 {
		lines = nil
	}
	found, ok := false, false
	for _, l := range lines {
		f := strings.Fields(strings.SplitN(l, "#", 2)[0])
		if len(f) >= 2 && f[0] == ip {
			found = true
			if f[1] == hi.FQDN {
				for _, a := range f[2:] {
					if a == hi.Hostname {
						ok = true
					}
				}
			}
		}
	}
	if found && ok {
		return nil
	}
	var out []string
	for _, l := range lines {
		f := strings.Fields(strings.SplitN(l, "#", 2)[0])
		if len(f) >= 1 && f[0] == ip {
			continue
		}
		out = append(out, l)
	}
	names := hi.FQDN
	if hi.Hostname != hi.FQDN {
		names += " " + hi.Hostname
	}
	out = append(out, ip+" "+names)
	return c.Root.WriteFile("/etc/hosts", []byte(strings.Join(out, "\n")+"\n"), 0o644)
}

var (
	jinjaComment = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?s)\{#(.*?)(-?)#\}(\n?)`) })
	jinjaVar     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\{\{-?\s*([A-Za-z_][A-Za-z0-9_.]*)\s*-?\}\}`) })
)

// RenderBasicJinja renders the subset of Jinja the shipped hosts templates
// use: the "## template:jinja" header, comments (with "-" whitespace control
// and trim_blocks, as cloud-init's templater configures Jinja) and {{ var }}.
// Other block tags are an error. (Full Jinja arrives with the user-data
// pipeline.)
func RenderBasicJinja(tmpl string, vars map[string]string) (string, error) {
	if first, rest, ok := strings.Cut(tmpl, "\n"); ok && strings.HasPrefix(strings.ReplaceAll(strings.ToLower(first), " ", ""), "##template:jinja") {
		tmpl = rest
	}
	var b strings.Builder
	for {
		loc := jinjaComment().FindStringSubmatchIndex(tmpl)
		if loc == nil {
			b.WriteString(tmpl)
			break
		}
		b.WriteString(tmpl[:loc[0]])
		rest := tmpl[loc[1]:]
		if loc[5] > loc[4] { // "-#}": strip all following whitespace
			rest = strings.TrimLeft(rest, " \t\r\n")
		}
		tmpl = rest
	}
	out := b.String()
	if strings.Contains(out, "{%") {
		return "", fmt.Errorf("template uses Jinja block tags, which this renderer does not support")
	}
	var missing []string
	out = jinjaVar().ReplaceAllStringFunc(out, func(m string) string {
		name := jinjaVar().FindStringSubmatch(m)[1]
		if v, ok := vars[name]; ok {
			return v
		}
		missing = append(missing, name)
		return "CI_MISSING_JINJA_VAR/" + name
	})
	_ = missing
	return out, nil
}
