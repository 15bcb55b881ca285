package cm

// puppet (cloud-init cc_puppet, final stage, per-instance, all distros,
// activated by the `puppet` key), as cloud-init 26.x does it:
//
//  1. install (default true): install_type "packages" installs
//     package_name (with version as NAME=VERSION), or without
//     package_name the first of puppet-agent and puppet that installs;
//     "aio" downloads aio_install_url (puppetlabs' install.sh) and runs it
//     with -v VERSION, -c COLLECTION and --cleanup (default true). An
//     unknown install_type is a warning and disables exec. install false
//     with a version is a warning.
//  2. conf_file, ssl_dir and csr_attributes_path default to what `puppet
//     config print config|ssldir|csr_attributes` answers (asked every time,
//     as cloud-init does); puppet is /opt/puppetlabs/bin/puppet for aio.
//  3. conf: puppet.conf is read as Python's RawConfigParser reads it (lines
//     left-stripped, comments dropped, option names lower-cased); each
//     section's options are set (certname's %f → the FQDN, %i → the
//     instance id, lower-cased), and after each section the file is moved
//     to puppet.conf.old and rewritten. ca_cert goes to SSL_DIR/certs/ca.pem
//     (ssl_dir 0771; owned by puppet, root for aio).
//  4. csr_attributes is written to csr_attributes_path as yaml.dump does.
//  5. start_service (default true): enable puppet-agent.service, else
//     puppet.service; exec: `puppet agent` with exec_args (a list, or a
//     string split on whitespace; default --test); then start the service
//     the same way.
//
// The sections of conf, and new options in a section, are applied in
// sorted order (the decoded config does not keep YAML's order).

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/distro"
	"github.com/cloudroot/cloudroot/pkg/internal/pyval"
	"github.com/cloudroot/cloudroot/pkg/modules"
	"github.com/cloudroot/cloudroot/pkg/state"
	"github.com/cloudroot/cloudroot/pkg/yaml11"
)

// Puppet is cc_puppet.
var Puppet = NewPuppet(FetchOptions{})

// NewPuppet builds the puppet module with opts for the aio download.
func NewPuppet(opts FetchOptions) modules.Module {
	return modules.Module{
		Name:       "puppet",
		Frequency:  state.PerInstance,
		Keys:       []string{"puppet"},
		ActivateBy: []string{"puppet"},
		Run: modules.Typed(func(ctx context.Context, c *modules.Context, cfg puppetKeys) error {
			return runPuppet(ctx, c, opts, cfg)
		}),
	}
}

// Puppet defaults (cloud-init's).
const (
	PuppetAIOInstallURL = "https://raw.githubusercontent.com/puppetlabs/install-puppet/main/install.sh"
	PuppetAIOBin        = "/opt/puppetlabs/bin/puppet"
)

// puppetPackageNames are tried in order when package_name is not set.
var puppetPackageNames = []string{"puppet-agent", "puppet"}

// puppetConfig is the `puppet` key.
type puppetConfig struct {
	Install, Cleanup, Exec, StartService bool
	Version, Collection, InstallType     string
	HasVersion, HasCollection            bool
	AIOURL, Package                      string
	HasPackage                           bool
	ConfFile, SSLDir, CSRPath            *string
	Conf                                 map[string]any
	HasConf                              bool
	CSR                                  any
	HasCSR                               bool
	ExecArgs                             any
	HasExecArgs                          bool
}

// puppetSection is the puppet mapping, each key as given: flags and
// strings are read as util.get_cfg_option_bool/_str read them (absent:
// the default; given, null included: translate_bool / str()).
type puppetSection struct {
	Install      pyval.Opt `cfg:"install"`
	Cleanup      pyval.Opt `cfg:"cleanup"`
	Exec         pyval.Opt `cfg:"exec"`
	StartService pyval.Opt `cfg:"start_service"`
	InstallType  pyval.Opt `cfg:"install_type"`
	AIOURL       pyval.Opt `cfg:"aio_install_url"`
	Version      pyval.Opt `cfg:"version"`
	Collection   pyval.Opt `cfg:"collection"`
	Package      pyval.Opt `cfg:"package_name"`
	ConfFile     pyval.Opt `cfg:"conf_file"`
	SSLDir       pyval.Opt `cfg:"ssl_dir"`
	CSRPath      pyval.Opt `cfg:"csr_attributes_path"`
	HasConf      bool      `cfg:"conf,present"`
	// Conf is puppet.conf's sections (nil when not a mapping), passed
	// through: each section's options are written to puppet.conf.
	Conf     map[string]any `cfg:"conf,loose"`
	CSR      pyval.Opt      `cfg:"csr_attributes"`
	ExecArgs pyval.Opt      `cfg:"exec_args"`
}

func decodePuppet(m puppetSection) puppetConfig {
	p := puppetConfig{
		Install: optBool(m.Install, true), Cleanup: optBool(m.Cleanup, true),
		Exec: optBool(m.Exec, false), StartService: optBool(m.StartService, true),
		InstallType: m.InstallType.Or("packages"), AIOURL: m.AIOURL.Or(PuppetAIOInstallURL),
	}
	p.HasVersion, p.Version = m.Version.Given, m.Version.Or("")
	p.HasCollection, p.Collection = m.Collection.Given, m.Collection.Or("")
	p.HasPackage, p.Package = m.Package.Given, m.Package.Or("")
	for _, f := range []struct {
		o   pyval.Opt
		dst **string
	}{{m.ConfFile, &p.ConfFile}, {m.SSLDir, &p.SSLDir}, {m.CSRPath, &p.CSRPath}} {
		if f.o.Given {
			s := pyval.Str(f.o.Value)
			*f.dst = &s
		}
	}
	p.HasConf, p.Conf = m.HasConf, m.Conf
	p.CSR, p.HasCSR = m.CSR.Value, m.CSR.Given
	p.ExecArgs, p.HasExecArgs = m.ExecArgs.Value, m.ExecArgs.Given
	return p
}

// puppetKeys is the module's key: whether puppet is given and, when it
// is a mapping, its keys.
type puppetKeys struct {
	Present bool          `cfg:"puppet,present"`
	Puppet  puppetSection `cfg:"puppet,loose"`
}

func runPuppet(ctx context.Context, c *modules.Context, opts FetchOptions, cfg puppetKeys) error {
	if !cfg.Present {
		return nil
	}
	p := decodePuppet(cfg.Puppet)
	user, bin := "puppet", "puppet"
	if p.InstallType == "aio" {
		user, bin = "root", PuppetAIOBin
		if !p.HasPackage {
			p.Package, p.HasPackage = "puppet-agent", true
		}
	}
	run := p.Exec
	f := c.Facts()
	switch {
	case !p.Install && p.HasVersion:
		c.Warnf("Puppet install set to false but version supplied, doing nothing.")
	case !p.Install:
	case p.InstallType == "packages":
		withVersion := func(n string) string {
			if p.Version != "" {
				return n + "=" + p.Version
			}
			return n
		}
		if !p.HasPackage {
			installed := false
			for _, n := range puppetPackageNames {
				if err := installPackageSpecs(ctx, c, f, []string{withVersion(n)}); err == nil {
					installed = true
					break
				}
			}
			if !installed {
				c.Warnf("No installable puppet package in any of: %s", strings.Join(puppetPackageNames, ", "))
			}
		} else if err := installPackageSpecs(ctx, c, f, []string{withVersion(p.Package)}); err != nil {
			return err
		}
	case p.InstallType == "aio":
		var args []string
		if p.HasVersion {
			args = []string{"-v", p.Version}
		}
		if p.HasCollection {
			args = append(args, "-c", p.Collection)
		}
		if p.Cleanup {
			args = append(args, "--cleanup")
		}
		blob, err := opts.fetch(ctx, c, p.AIOURL, 5)
		if err != nil {
			return err
		}
		if err := runBlob(ctx, c, blob, "puppet-install", args); err != nil {
			return err
		}
	default:
		c.Warnf("Unknown puppet install type '%s'", p.InstallType)
		run = false
	}

	// cloud-init asks puppet for each default even when the key is set.
	setting := func(name string, given *string) (string, error) {
		out, err := cmCmd{Argv: []string{bin, "config", "print", name}, Capture: true}.run(ctx, c)
		if err != nil {
			return "", err
		}
		if given != nil {
			return *given, nil
		}
		return strings.TrimRight(out, " \t\r\n\v\f"), nil
	}
	confPath, err := setting("config", p.ConfFile)
	if err != nil {
		return err
	}
	sslDir, err := setting("ssldir", p.SSLDir)
	if err != nil {
		return err
	}
	csrPath, err := setting("csr_attributes", p.CSRPath)
	if err != nil {
		return err
	}
	if p.HasConf {
		if err := puppetConf(c, p.Conf, confPath, sslDir, user); err != nil {
			return err
		}
	}
	if p.HasCSR {
		if err := c.Root.WriteFile(csrPath, []byte(yaml11.Dump(p.CSR, yaml11.DumpOptions{})), 0o644); err != nil {
			return fmt.Errorf("puppet: %w", err)
		}
	}
	if p.StartService {
		puppetServices(ctx, c, f, distro.ActionEnable)
	}
	if run {
		argv := []string{bin, "agent"}
		switch a := p.ExecArgs.(type) {
		case []any:
			argv = append(argv, pyStrList(a)...)
		case string:
			argv = append(argv, strings.Fields(a)...)
		default:
			if p.HasExecArgs {
				c.Warnf("Unknown type %s provided for puppet 'exec_args' expected list, tuple, or string", pyTypeRepr(a))
			}
			argv = append(argv, "--test")
		}
		if _, err := (cmCmd{Argv: argv}).run(ctx, c); err != nil {
			return err
		}
	}
	if p.StartService {
		puppetServices(ctx, c, f, distro.ActionStart)
	}
	return nil
}

// pyTypeRepr is repr(type(v)).
func pyTypeRepr(v any) string {
	n := map[string]string{"int": "int", "float": "float", "bool": "bool", "map": "dict", "nil": "NoneType"}[pyval.TypeName(v)]
	if n == "" {
		n = pyval.TypeName(v)
	}
	return "<class '" + n + "'>"
}

// installPackageSpecs installs NAME or NAME=VERSION entries.
func installPackageSpecs(ctx context.Context, c *modules.Context, f distro.Facts, specs []string) error {
	pm := f.Packages()
	if pm == nil {
		return fmt.Errorf("installing %s: %w", strings.Join(specs, " "), modules.ErrNoPackageManager)
	}
	var list []distro.Package
	for _, s := range specs {
		n, v, _ := strings.Cut(s, "=")
		list = append(list, distro.Package{Name: n, Version: v})
	}
	for _, cmd := range pm.Install(list) {
		if err := c.RunCmd(ctx, cmd); err != nil {
			return err
		}
	}
	return nil
}

// puppetServices runs action on puppet-agent.service, else puppet.service.
func puppetServices(ctx context.Context, c *modules.Context, f distro.Facts, action string) {
	for _, n := range puppetPackageNames {
		if err := c.ManageService(ctx, f, action, n+".service"); err == nil {
			return
		}
	}
	c.Warnf("Could not '%s' any of the following services: %s", action, strings.Join(puppetPackageNames, ", "))
}

// puppetConf applies conf's sections to puppet.conf.
func puppetConf(c *modules.Context, conf map[string]any, confPath, sslDir, user string) error {
	old, err := c.Root.ReadFile(confPath)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("puppet: [Errno 2] No such file or directory: '%s'", confPath)
	} else if err != nil {
		return fmt.Errorf("puppet: reading %s: %w", confPath, err)
	}
	lines := strings.Split(string(old), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimLeft(l, " \t\r\n\v\f")
	}
	ini, err := parseRawConfig(strings.Join(lines, "\n"), confPath)
	if err != nil {
		return fmt.Errorf("puppet: %w", err)
	}
	names := make([]string, 0, len(conf))
	for k := range conf {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, name := range names {
		v := conf[name]
		if name == "ca_cert" {
			if err := puppetCACert(c, sslDir, user, pyval.Str(v)); err != nil {
				return err
			}
		} else {
			var opts map[string]any
			switch t := v.(type) {
			case map[string]any:
				opts = t
			}
			keys := make([]string, 0, len(opts))
			for k := range opts {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, o := range keys {
				val := pyval.Str(opts[o])
				if o == "certname" {
					val = strings.ReplaceAll(val, "%f", fqdn(c))
					val = strings.ReplaceAll(val, "%i", c.InstanceID)
					val = strings.ToLower(val)
				}
				ini.set(name, o, val)
			}
		}
		if c.Root.Exists(confPath) {
			if err := c.Root.Rename(confPath, confPath+".old"); err != nil {
				return fmt.Errorf("puppet: %w", err)
			}
		}
		if err := c.Root.WriteFile(confPath, []byte(ini.String()), 0o644); err != nil {
			return fmt.Errorf("puppet: %w", err)
		}
	}
	return nil
}

// puppetCACert writes the CA certificate as cloud-init does: ssl_dir 0771
// and its certs/ directory and certs/ca.pem owned by user:root.
func puppetCACert(c *modules.Context, sslDir, user, pem string) error {
	certDir := path.Join(sslDir, "certs")
	caPath := path.Join(certDir, "ca.pem")
	if !c.Root.Exists(sslDir) {
		if err := c.Root.MkdirAll(path.Dir(sslDir), 0o755); err != nil {
			return fmt.Errorf("puppet: %w", err)
		}
		if err := c.Root.MkdirAll(sslDir, 0o771); err != nil {
			return fmt.Errorf("puppet: %w", err)
		}
	}
	if err := chownByName(c, sslDir, user, "root"); err != nil {
		return err
	}
	if err := c.Root.MkdirAll(certDir, 0o755); err != nil {
		return fmt.Errorf("puppet: %w", err)
	}
	if err := chownByName(c, certDir, user, "root"); err != nil {
		return err
	}
	if err := c.Root.WriteFile(caPath, []byte(pem), 0o644); err != nil {
		return fmt.Errorf("puppet: %w", err)
	}
	return chownByName(c, caPath, user, "root")
}

// chownByName is util.chownbyname in the target: the names must exist in
// its passwd and group (cloud-init fails with KeyError otherwise); the
// owner changes only when cloudroot runs as root.
func chownByName(c *modules.Context, p, user, group string) error {
	u, err := c.Root.LookupUser(user)
	if err != nil {
		return fmt.Errorf("getpwnam(): name not found: '%s': %w", user, err)
	}
	g, err := c.Root.LookupGroup(group)
	if err != nil {
		return fmt.Errorf("getgrnam(): name not found: '%s': %w", group, err)
	}
	if os.Geteuid() != 0 {
		return nil
	}
	return c.Root.Chown(p, u.UID, g.GID)
}

// rawConfig is an INI file as Python's RawConfigParser holds it: ordered
// sections of ordered, lower-cased options ([DEFAULT] first).
type rawConfig struct {
	sections []*rawSection
}

type rawSection struct {
	name string
	keys []string
	vals map[string]string
}

func (r *rawConfig) section(name string, create bool) *rawSection {
	for _, s := range r.sections {
		if s.name == name {
			return s
		}
	}
	if !create {
		return nil
	}
	s := &rawSection{name: name, vals: map[string]string{}}
	r.sections = append(r.sections, s)
	return s
}

func (r *rawConfig) set(section, key, val string) {
	s := r.section(section, true)
	key = strings.ToLower(key)
	if _, ok := s.vals[key]; !ok {
		s.keys = append(s.keys, key)
	}
	s.vals[key] = val
}

// parseRawConfig reads text as RawConfigParser.read_file does (strict):
// `key = value` or `key: value` under a [section], # and ; comments.
func parseRawConfig(text, source string) (*rawConfig, error) {
	r := &rawConfig{}
	var cur *rawSection
	var last string
	lastIndent := 0
	for i, line := range strings.Split(text, "\n") {
		t := strings.TrimSpace(line)
		if t == "" || strings.HasPrefix(t, "#") || strings.HasPrefix(t, ";") {
			continue
		}
		indent := len(line) - len(strings.TrimLeft(line, " \t"))
		if cur != nil && last != "" && indent > lastIndent {
			cur.vals[last] += "\n" + t
			continue
		}
		lastIndent = indent
		if strings.HasPrefix(t, "[") && strings.Contains(t, "]") {
			name := t[1:strings.Index(t, "]")]
			if r.section(name, false) != nil {
				return nil, fmt.Errorf("While reading from '%s' [line %2d]: section '%s' already exists", source, i+1, name)
			}
			cur, last = r.section(name, true), ""
			continue
		}
		if cur == nil {
			return nil, fmt.Errorf("File contains no section headers.\nfile: '%s', line: %d\n%s", source, i+1, pyval.StrRepr(line+"\n"))
		}
		k, v, ok := cutINI(t)
		if !ok {
			return nil, errors.New("Source contains parsing errors: " + pyval.StrRepr(source) + "\n\t[line " + fmt.Sprintf("%2d", i+1) + "]: " + pyval.StrRepr(line))
		}
		k = strings.ToLower(k)
		if _, dup := cur.vals[k]; dup {
			return nil, fmt.Errorf("While reading from '%s' [line %2d]: option '%s' in section '%s' already exists", source, i+1, k, cur.name)
		}
		cur.keys = append(cur.keys, k)
		cur.vals[k] = v
		last = k
	}
	return r, nil
}

// cutINI splits at the first = or :.
func cutINI(t string) (string, string, bool) {
	i := strings.IndexAny(t, "=:")
	if i <= 0 {
		return "", "", false
	}
	return strings.TrimSpace(t[:i]), strings.TrimSpace(t[i+1:]), true
}

// String is RawConfigParser.write: [DEFAULT] first, "key = value" lines,
// a blank line after each section, newlines in values continued with a tab.
func (r *rawConfig) String() string {
	var b strings.Builder
	order := slices.Clone(r.sections)
	slices.SortStableFunc(order, func(a, b *rawSection) int {
		switch {
		case a.name == "DEFAULT" && b.name != "DEFAULT":
			return -1
		case b.name == "DEFAULT" && a.name != "DEFAULT":
			return 1
		}
		return 0
	})
	for _, s := range order {
		fmt.Fprintf(&b, "[%s]\n", s.name)
		for _, k := range s.keys {
			fmt.Fprintf(&b, "%s = %s\n", k, strings.ReplaceAll(s.vals[k], "\n", "\n\t"))
		}
		b.WriteString("\n")
	}
	return b.String()
}
