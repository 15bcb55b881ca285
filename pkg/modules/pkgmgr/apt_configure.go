package pkgmgr

// apt_configure, as cloud-init 26.x's cc_apt_configure does it on Debian,
// Ubuntu and Raspberry Pi OS, in upstream's order:
//
//  1. debconf_selections: fed to debconf-set-selections; installed
//     packages among them that cloud-init knows how to unconfigure
//     (cloud-init itself) are dpkg-reconfigured;
//  2. with no apt config at all and no apt-get in the target: nothing;
//  3. mirrors: primary/security `uri` per arch (or the `default` arch
//     entry), else the first resolvable `search` URL, else (search_dns)
//     the first resolvable http://<distro>-mirror.<domain>/<distro>;
//     else system_info.package_mirrors' failsafe for the arch (its search
//     templates need the datasource's availability zone: not done);
//  4. gpg / add-apt-repository installed first when a key or a PPA-style
//     source needs them and the target lacks them;
//  5. unless preserve_sources_list: mirror keys, then the primary sources
//     rendered from sources_list or the distro template (deb822
//     /etc/apt/sources.list.d/<distro>.sources or one-line
//     /etc/apt/sources.list, as the release's cloud-init package does),
//     disable_suites applied, the old file replaced or removed, and apt's
//     list cache renamed to the new mirror;
//  6. proxies and `conf` into apt.conf.d (removed when unset);
//  7. `sources`: keys (key, or keyid fetched from keyserver with gpg),
//     templated entries ($RELEASE, $MIRROR, $PRIMARY, $SECURITY,
//     $KEY_FILE) appended to sources.list.d/<name>.list, or passed to
//     add-apt-repository; then `apt-get update`.
//
// The pre-22.1 top-level keys (apt_sources, apt_mirror*, apt_*proxy,
// apt_preserve_sources_list, apt_custom_sources_list, add_apt_repo_match)
// are translated to the `apt` form by the decoder, with cloud-init's
// deprecation message. Commands run through the target's runner.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path"
	"regexp"
	"runtime"
	"slices"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/distro"
	"github.com/cloudroot/cloudroot/pkg/internal/pyval"
	"github.com/cloudroot/cloudroot/pkg/modules"
	"github.com/cloudroot/cloudroot/pkg/state"
	"github.com/cloudroot/cloudroot/pkg/target"
)

// AptConfigure is cc_apt_configure.
var AptConfigure = NewAptConfigure(AptOptions{})

// AptOptions tune apt_configure; the zero value is the system's.
type AptOptions struct {
	// LookupHost resolves mirror names for `search` and `search_dns`
	// (net.DefaultResolver.LookupHost when nil).
	LookupHost func(ctx context.Context, host string) ([]string, error)
}

// NewAptConfigure builds the apt_configure module with opts.
func NewAptConfigure(opts AptOptions) modules.Module {
	if opts.LookupHost == nil {
		opts.LookupHost = net.DefaultResolver.LookupHost
	}
	return modules.Module{
		Name:      "apt_configure",
		Frequency: state.PerInstance,
		Keys: []string{"apt", "apt_sources", "apt_mirror", "apt_mirror_search", "apt_mirror_search_dns",
			"apt_proxy", "apt_http_proxy", "apt_ftp_proxy", "apt_https_proxy", "apt_preserve_sources_list",
			"apt_custom_sources_list", "add_apt_repo_match"},
		Distros: AptDistros,
		Run: modules.Typed(func(ctx context.Context, c *modules.Context, keys aptKeys) error {
			return runAptConfigure(ctx, c, opts, keys)
		}),
	}
}

// Paths and defaults of cc_apt_configure.
const (
	AptProxyFile       = "/etc/apt/apt.conf.d/90cloud-init-aptproxy"
	AptConfigFile      = "/etc/apt/apt.conf.d/94cloud-init-config"
	AptTrustedGPGDir   = "/etc/apt/trusted.gpg.d/"
	AptCloudInitGPGDir = "/etc/apt/cloud-init.gpg.d/"
	AptLists           = "/var/lib/apt/lists"
	AptSourcesList     = "/etc/apt/sources.list"
	AptSourceParts     = "/etc/apt/sources.list.d/"
	DefaultKeyserver   = "keyserver.ubuntu.com"
	// DefaultAddAptRepoMatch matches "ppa:owner/name", "cloud-archive:x".
	DefaultAddAptRepoMatch = `^[\w-]+:\w`
	// aptGPGHome is the throwaway GNUPGHOME (HOME) of gpg's key work.
	aptGPGHome = "/tmp/cloudroot-apt-gpg"
)

// UbuntuDefaultSourcesList is what Ubuntu's /etc/apt/sources.list holds
// once its sources moved to ubuntu.sources (cloud-init writes it so).
const UbuntuDefaultSourcesList = `# Ubuntu sources have moved to the /etc/apt/sources.list.d/ubuntu.sources
# file, which uses the deb822 format. Use deb822-formatted .sources files
# to manage package sources in the /etc/apt/sources.list.d/ directory.
# See the sources.list(5) manual page for details.
`

// aptMirror is one primary/security entry, decoded by pyval: strings are
// Python's str() of a scalar (uri: 1.0 is "1.0", as upstream writes it
// into sources.list), lists a string or a list of them.
type aptMirror struct {
	Arches []string `cfg:"arches"`
	URI    string   `cfg:"uri"`
	// URIRaw is uri as given: upstream's rename_apt_lists fails on a
	// true value that is not a string, and skips a false one.
	URIRaw any      `cfg:"uri"`
	Search []string `cfg:"search"`
	// SearchDNS is search_dns, true as Python's truth (`if configured`).
	SearchDNS any    `cfg:"search_dns"`
	Keyid     string `cfg:"keyid"`
	Key       string `cfg:"key"`
	Keyserver string `cfg:"keyserver"`
}

// aptSource is one `sources` entry, decoded by pyval (str() of scalars).
type aptSource struct {
	Name   string
	Source string `cfg:"source"`
	// SourceRaw is source as given (Given: HasSource): upstream's
	// add_apt_repo_match fails on one that is not a string.
	SourceRaw pyval.Opt `cfg:"source"`
	Keyid     string    `cfg:"keyid"`
	Key       string    `cfg:"key"`
	Keyserver string    `cfg:"keyserver"`
	Filename  string    `cfg:"filename"`
	// Append is append: the file is rewritten only when it is given and
	// false in Python's sense (null included), as upstream reads it.
	Append pyval.Opt `cfg:"append"`
}

// HasSource is whether the entry has a source key (null included).
func (s aptSource) HasSource() bool { return s.SourceRaw.Given }

// aptConfig is the `apt` key in its current (v3) form.
type aptConfig struct {
	Empty               bool
	PreserveSourcesList bool
	DisableSuites       []string
	Primary, Security   []aptMirror
	AddAptRepoMatch     string
	DebconfSelections   map[string]string
	SourcesList         string
	Conf                string
	Proxies             [4]string // proxy, http_proxy, ftp_proxy, https_proxy
	Sources             []aptSource
	HasSources          bool
	// Deprecated are the deprecation notes of the old keys used.
	Deprecated []string
}

// aptOldKeys are the v2 top-level keys and their `apt` names, in
// cloud-init's order (its mapping swaps the ftp and https proxies, and so
// does this one).
var aptOldKeys = []struct{ old, new string }{
	{"apt_sources", "sources"},
	{"apt_mirror", ""},
	{"apt_mirror_search", ""},
	{"apt_mirror_search_dns", ""},
	{"apt_proxy", "proxy"},
	{"apt_http_proxy", "http_proxy"},
	{"apt_ftp_proxy", "https_proxy"},
	{"apt_https_proxy", "ftp_proxy"},
	{"apt_preserve_sources_list", "preserve_sources_list"},
	{"apt_custom_sources_list", "sources_list"},
	{"add_apt_repo_match", "add_apt_repo_match"},
}

// aptKeys are the module's top-level keys as the decoder reads them: the
// `apt` mapping and the old (v1/v2) keys that aptV3 translates into it,
// and system_info's package mirrors.
type aptKeys struct {
	HasApt bool `cfg:"apt,present"`
	// Apt is the value given (its type is in the error when it is no
	// mapping), Section the same value decoded when it is one.
	Apt                 any        `cfg:"apt"`
	Section             aptSection `cfg:"apt,loose"`
	Sources             any        `cfg:"apt_sources"`
	Mirror              any        `cfg:"apt_mirror"`
	MirrorSearch        any        `cfg:"apt_mirror_search"`
	MirrorSearchDNS     any        `cfg:"apt_mirror_search_dns"`
	Proxy               any        `cfg:"apt_proxy"`
	HTTPProxy           any        `cfg:"apt_http_proxy"`
	FTPProxy            any        `cfg:"apt_ftp_proxy"`
	HTTPSProxy          any        `cfg:"apt_https_proxy"`
	PreserveSourcesList any        `cfg:"apt_preserve_sources_list"`
	CustomSourcesList   any        `cfg:"apt_custom_sources_list"`
	AddAptRepoMatch     any        `cfg:"add_apt_repo_match"`
	SystemInfo          struct {
		PackageMirrors []packageMirror `cfg:"package_mirrors,loose"`
	} `cfg:"system_info,loose"`
	AptGet aptGetSettings `cfg:"system_info,loose"`
}

// aptSection is the `apt` mapping (v3), as given or as aptV3 builds it
// from the old keys.
type aptSection struct {
	// All is the whole mapping (its size: an empty one is no config).
	All               map[string]any `cfg:",all"`
	Given             aptGiven       `cfg:",inline"`
	DisableSuites     pyval.List     `cfg:"disable_suites"`
	Primary           aptMirrors     `cfg:"primary"`
	Security          aptMirrors     `cfg:"security"`
	DebconfSelections pyval.Dict     `cfg:"debconf_selections"`
	Conf              string         `cfg:"conf,scalar"`
	HasSources        bool           `cfg:"sources,present"`
	Sources           pyval.Dict     `cfg:"sources"`
}

// aptGiven are the section's keys that old keys map to, as given:
// convert_v2_to_v3_apt_format compares them with the old keys' values,
// and decodeApt reads them as cloud-init does (presence counts).
type aptGiven struct {
	HasPreserve     bool `cfg:"preserve_sources_list,present"`
	Preserve        any  `cfg:"preserve_sources_list"`
	HasAddAptRepo   bool `cfg:"add_apt_repo_match,present"`
	AddAptRepoMatch any  `cfg:"add_apt_repo_match"`
	SourcesList     any  `cfg:"sources_list"`
	Proxy           any  `cfg:"proxy"`
	HTTPProxy       any  `cfg:"http_proxy"`
	FTPProxy        any  `cfg:"ftp_proxy"`
	HTTPSProxy      any  `cfg:"https_proxy"`
	Sources         any  `cfg:"sources"`
}

// get is the value of the section's key name (aptOldKeys' new names; nil
// when absent).
func (g aptGiven) get(name string) any {
	switch name {
	case "sources":
		return g.Sources
	case "proxy":
		return g.Proxy
	case "http_proxy":
		return g.HTTPProxy
	case "ftp_proxy":
		return g.FTPProxy
	case "https_proxy":
		return g.HTTPSProxy
	case "preserve_sources_list":
		return g.Preserve
	case "sources_list":
		return g.SourcesList
	case "add_apt_repo_match":
		return g.AddAptRepoMatch
	}
	return nil
}

// aptMirrors is a primary/security list decoded into []aptMirror; a value
// of the wrong shape keeps its error for decodeApt (the module fails with
// it after the rest is read, as it always has).
type aptMirrors struct {
	List []aptMirror
	Err  error
}

// UnmarshalPy implements pyval.Unmarshaler.
func (m *aptMirrors) UnmarshalPy(d *pyval.Decoder, v any) error {
	if v != nil {
		m.Err = d.DecodeValue("", v, &m.List)
	}
	return nil
}

// packageMirror is one system_info.package_mirrors entry: the arches it
// serves and its failsafe mirrors (OK unset for an entry that is no
// mapping, which is skipped).
type packageMirror struct {
	OK       bool
	Arches   []string
	Failsafe pyval.Dict
}

// UnmarshalPy implements pyval.Unmarshaler: an entry of the wrong shape
// is skipped, never an error for the list.
func (p *packageMirror) UnmarshalPy(d *pyval.Decoder, v any) error {
	if !pyval.DictOf(v).Mapping {
		return nil
	}
	var e struct {
		Arches   pyval.List `cfg:"arches"`
		Failsafe pyval.Dict `cfg:"failsafe"`
	}
	_ = d.DecodeValue("package_mirrors", v, &e) // its fields decode without error
	p.OK, p.Arches, p.Failsafe = true, e.Arches, e.Failsafe
	return nil
}

// old is the value of an old key (aptOldKeys' names; nil when absent).
func (k aptKeys) old(name string) any {
	switch name {
	case "apt_sources":
		return k.Sources
	case "apt_mirror":
		return k.Mirror
	case "apt_mirror_search":
		return k.MirrorSearch
	case "apt_mirror_search_dns":
		return k.MirrorSearchDNS
	case "apt_proxy":
		return k.Proxy
	case "apt_http_proxy":
		return k.HTTPProxy
	case "apt_ftp_proxy":
		return k.FTPProxy
	case "apt_https_proxy":
		return k.HTTPSProxy
	case "apt_preserve_sources_list":
		return k.PreserveSourcesList
	case "apt_custom_sources_list":
		return k.CustomSourcesList
	case "add_apt_repo_match":
		return k.AddAptRepoMatch
	}
	return nil
}

// aptV3 is convert_to_v3_apt_format: the `apt` section, built from the
// old keys when there is no `apt` key.
func aptV3(cfg aptKeys) (aptSection, []string, error) {
	var notes []string
	var present []string
	for _, k := range aptOldKeys {
		if v := cfg.old(k.old); v != nil && v != "" {
			present = append(present, "'"+k.old+"'")
		}
	}
	aptRaw, hasApt := cfg.Apt, cfg.HasApt
	if len(present) == 0 {
		if !hasApt || aptRaw == nil {
			return aptSection{}, nil, nil
		}
		if !pyval.DictOf(aptRaw).Mapping {
			return aptSection{}, nil, fmt.Errorf("Expected dictionary for 'apt' config, found %T", aptRaw)
		}
		return cfg.Section, nil, nil
	}
	if cfg.Sources != nil {
		notes = append(notes, pyval.Deprecation("Config key 'apt_sources'", "22.1", "Use 'apt' instead"))
	}
	notes = append(notes, pyval.Deprecation(fmt.Sprintf("The following config key(s): [%s]", strings.Join(present, ", ")), "22.1", ""))
	if hasApt && aptRaw != nil {
		notes = append(notes, pyval.Deprecation("Support for combined old and new apt module keys", "22.1", ""))
		if !pyval.DictOf(aptRaw).Mapping {
			return aptSection{}, notes, fmt.Errorf("Expected dictionary for 'apt' config, found %T", aptRaw)
		}
		for _, k := range aptOldKeys {
			old := cfg.old(k.old)
			if old == nil || old == "" || k.new == "" {
				continue
			}
			if nv := cfg.Section.Given.get(k.new); nv != nil && !equalYAML(nv, v1Sources(k.old, old)) {
				return aptSection{}, notes, fmt.Errorf("Old and New apt format defined with unequal values %v vs %v @ %s", old, nv, k.old)
			}
		}
		return cfg.Section, notes, nil
	}
	m := map[string]any{}
	for _, k := range aptOldKeys {
		v := cfg.old(k.old)
		if v == nil || v == "" || k.new == "" {
			continue
		}
		m[k.new] = v1Sources(k.old, v)
	}
	mirror := map[string]any{"arches": []any{"default"}}
	converted := false
	for _, o := range []struct {
		v   any
		key string
	}{{cfg.Mirror, "uri"}, {cfg.MirrorSearch, "search"}, {cfg.MirrorSearchDNS, "search_dns"}} {
		if o.v != nil && o.v != "" {
			mirror[o.key] = o.v
			converted = true
		}
	}
	if converted {
		m["primary"] = []any{mirror}
	}
	var sec aptSection
	err := (&pyval.Decoder{}).DecodeValue("apt", m, &sec)
	return sec, notes, err
}

// v1Sources turns the v1 apt_sources list into the dict form: entries
// with a filename are keyed by it, the others share
// cloud_config_sources.list (under distinct keys).
func v1Sources(key string, v any) any {
	l, ok := v.([]any)
	if key != "apt_sources" || !ok {
		return v
	}
	out := map[string]any{}
	for i, e := range l {
		orig := pyval.DictOf(e)
		if !orig.Mapping {
			continue
		}
		ent := make(map[string]any, orig.Len()+1)
		for _, oe := range orig.Entries {
			ent[oe.Key] = oe.Value
		}
		fn, _ := orig.Get("filename")
		name := pyval.ScalarStr(fn)
		if name == "" {
			ent["filename"] = "cloud_config_sources.list"
			name = fmt.Sprintf("cloud_config_sources.list.%d", i)
		}
		out[name] = ent
	}
	return out
}

func equalYAML(a, b any) bool { return fmt.Sprint(a) == fmt.Sprint(b) }

// decodeApt reads the module's keys once.
func decodeApt(cfg aptKeys) (aptConfig, error) {
	sec, notes, err := aptV3(cfg)
	a := aptConfig{Deprecated: notes, AddAptRepoMatch: DefaultAddAptRepoMatch}
	if err != nil {
		return a, err
	}
	g := sec.Given
	a.Empty = len(sec.All) == 0
	// Sources are generated only when the value is false (util.is_false).
	if g.HasPreserve {
		a.PreserveSourcesList = !pyval.IsFalse(g.Preserve)
	}
	a.DisableSuites = sec.DisableSuites
	var errs []error
	for _, mt := range []struct {
		key string
		in  aptMirrors
		out *[]aptMirror
	}{{"primary", sec.Primary, &a.Primary}, {"security", sec.Security, &a.Security}} {
		*mt.out = mt.in.List
		if mt.in.Err != nil {
			errs = append(errs, fmt.Errorf("apt.%s: %w", mt.key, mt.in.Err))
		}
	}
	if g.HasAddAptRepo {
		a.AddAptRepoMatch = pyval.ScalarStr(g.AddAptRepoMatch)
	}
	if sec.DebconfSelections.Mapping {
		a.DebconfSelections = map[string]string{}
		for _, e := range sec.DebconfSelections.Entries {
			a.DebconfSelections[e.Key] = pyval.ScalarStr(e.Value)
		}
	}
	a.SourcesList = pyval.ScalarStr(g.SourcesList)
	a.Conf = sec.Conf
	for i, p := range []any{g.Proxy, g.HTTPProxy, g.FTPProxy, g.HTTPSProxy} {
		a.Proxies[i] = pyval.ScalarStr(p)
	}
	if sec.HasSources {
		a.HasSources = true
		if !sec.Sources.Mapping {
			errs = append(errs, fmt.Errorf("unknown apt format: %v", g.Sources))
		}
		for _, e := range sec.Sources.Entries {
			var s aptSource
			if err := (&pyval.Decoder{}).DecodeValue("", e.Value, &s); err != nil {
				errs = append(errs, fmt.Errorf("apt.sources.%s: %w", e.Key, err))
				continue
			}
			s.Name = e.Key
			if s.Filename == "" {
				s.Filename = e.Key
			}
			a.Sources = append(a.Sources, s)
		}
	}
	return a, errors.Join(errs...)
}

// aptRun is one run of the module.
type aptRun struct {
	c   *modules.Context
	cfg aptConfig
	// pkgMirrors are the merged config's system_info.package_mirrors.
	pkgMirrors []packageMirror
	// aptGet are system_info's apt-get settings.
	aptGet  aptGetSettings
	gpgUsed bool
	// nativeDearmor is set when gnupg was needed for inline keys only and
	// could not be installed: addKey then dearmors them itself.
	nativeDearmor bool
	lookup        func(ctx context.Context, host string) ([]string, error)
	// mirrorURIs are the uri values (as given) PRIMARY and SECURITY came
	// from, when they came from a uri.
	mirrorURIs map[string]any
	// badIPs are what the resolver answers for names that cannot exist
	// (a DNS-redirecting resolver); nil until needed.
	badIPs map[string]bool
}

func runAptConfigure(ctx context.Context, c *modules.Context, opts AptOptions, keys aptKeys) error {
	a, err := decodeApt(keys)
	for _, n := range a.Deprecated {
		c.Log.Info(n, "module", "apt_configure")
	}
	if err != nil {
		return err
	}
	r := &aptRun{c: c, cfg: a, pkgMirrors: keys.SystemInfo.PackageMirrors, aptGet: keys.AptGet, lookup: opts.LookupHost}
	defer r.cleanupGPG(ctx)
	if err := r.debconfSelections(ctx); err != nil {
		return err
	}
	if a.Empty && targetWhich(c.Root, "apt-get") == "" && targetWhich(c.Root, "apt") == "" {
		c.Log.Debug("Nothing to do: No apt config and no apt commands.")
		return nil
	}
	release := r.release()
	arch := r.arch(ctx)
	mirrors := r.mirrors(ctx, arch)
	var matcher *regexp.Regexp
	if a.AddAptRepoMatch != "" {
		if matcher, err = regexp.Compile(a.AddAptRepoMatch); err != nil {
			return fmt.Errorf("apt.add_apt_repo_match: %w", err)
		}
	}
	if err := r.ensureDependencies(ctx, matcher); err != nil {
		return err
	}
	if !a.PreserveSourcesList {
		keys, err := r.mirrorKeys(ctx)
		if err != nil {
			return err
		}
		if err := r.generateSourcesList(release, mirrors, keys); err != nil {
			return err
		}
		if err := r.renameAptLists(mirrors, arch); err != nil {
			return err
		}
	}
	if err := r.applyAptConfig(); err != nil {
		c.Warnf("Failed to apply proxy or apt config info: %v", err)
	}
	if a.HasSources {
		params := map[string]string{"RELEASE": release}
		for k, v := range mirrors {
			params[k] = v
		}
		if err := r.addSources(ctx, params, matcher); err != nil {
			return err
		}
	}
	return nil
}

// release is the codename (lsb_release -cs).
func (r *aptRun) release() string {
	b, _ := r.c.Root.ReadFile("/etc/os-release")
	if len(b) == 0 {
		b, _ = r.c.Root.ReadFile("/usr/lib/os-release")
	}
	return distro.OSReleaseCodename(b)
}

// goDpkgArch maps GOARCH to dpkg's names, for a target that cannot tell.
var goDpkgArch = map[string]string{"amd64": "amd64", "386": "i386", "arm64": "arm64", "arm": "armhf",
	"ppc64le": "ppc64el", "s390x": "s390x", "riscv64": "riscv64", "loong64": "loong64"}

// arch is `dpkg --print-architecture` in the target, else the machine's.
func (r *aptRun) arch(ctx context.Context) string {
	out, err := r.output(ctx, []string{"dpkg", "--print-architecture"}, nil, nil)
	if s := strings.TrimSpace(string(out)); err == nil && s != "" {
		return s
	}
	return goDpkgArch[runtime.GOARCH]
}

// output runs argv in the target with stdin and extra environment and
// returns its stdout (stderr goes to the console log).
func (r *aptRun) output(ctx context.Context, argv []string, stdin []byte, env map[string]string) ([]byte, error) {
	return cmdOutput(ctx, r.c, argv, stdin, env)
}

// cmdOutput runs argv in c's target with stdin and extra environment and
// returns its stdout (stderr goes to c.Out).
func cmdOutput(ctx context.Context, c *modules.Context, argv []string, stdin []byte, env map[string]string) ([]byte, error) {
	e := []string{"PATH=" + target.DefaultPath, "HOME=/root", "LANG=C.UTF-8"}
	if c.Root.Dir() == "/" {
		e = os.Environ()
	}
	for k, v := range env {
		e = append(e, k+"="+v)
	}
	var out bytes.Buffer
	errOut := c.Out
	if errOut == nil {
		errOut = io.Discard
	}
	cmd := target.Cmd{Argv: argv, Env: e, Stdout: &out, Stderr: errOut}
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	if err := c.Root.Run(ctx, cmd); err != nil {
		return out.Bytes(), fmt.Errorf("%s: %w", strings.Join(argv, " "), err)
	}
	return out.Bytes(), nil
}

// debconfSelections is apply_debconf_selections.
func (r *aptRun) debconfSelections(ctx context.Context) error {
	sel := r.cfg.DebconfSelections
	if len(sel) == 0 {
		return nil
	}
	keys := make([]string, 0, len(sel))
	for k := range sel {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var parts []string
	var pkgs []string
	for _, k := range keys {
		parts = append(parts, sel[k])
		for _, line := range strings.Split(sel[k], "\n") {
			if strings.HasPrefix(line, "#") {
				continue
			}
			p := line
			if i := strings.IndexAny(line, ": \t\r\n\v\f"); i >= 0 {
				p = line[:i]
			}
			if !slices.Contains(pkgs, p) {
				pkgs = append(pkgs, p)
			}
		}
	}
	data := strings.Join(parts, "\n")
	if !strings.HasSuffix(data, "\n") {
		data += "\n"
	}
	if _, err := r.output(ctx, []string{"debconf-set-selections"}, []byte(data), nil); err != nil {
		return err
	}
	installed := r.installedPackages(ctx)
	var unhandled, toConfig []string
	for _, p := range pkgs {
		if !installed[p] {
			continue
		}
		if p == "cloud-init" {
			files, _ := r.c.Root.Glob("/etc/cloud/cloud.cfg.d/*dpkg*")
			for _, f := range files {
				_ = r.c.Root.Remove(f)
			}
			toConfig = append(toConfig, p)
		} else {
			unhandled = append(unhandled, p)
		}
	}
	if len(unhandled) > 0 {
		r.c.Warnf("The following packages were installed and preseeded, but cannot be unconfigured: %s", strings.Join(unhandled, ", "))
	}
	if len(toConfig) > 0 {
		if _, err := r.output(ctx, append([]string{"dpkg-reconfigure", "--frontend=noninteractive"}, toConfig...), nil, nil); err != nil {
			return err
		}
	}
	return nil
}

// installedPackages is util.get_installed_packages: `dpkg-query --list`
// lines whose status starts "ii" or "hi" (installed, held).
func (r *aptRun) installedPackages(ctx context.Context) map[string]bool {
	out, err := r.output(ctx, []string{"dpkg-query", "--list"}, nil, nil)
	if err != nil {
		return nil
	}
	pkgs := map[string]bool{}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) < 3 || !(strings.HasPrefix(f[0], "ii") || strings.HasPrefix(f[0], "hi")) {
			continue
		}
		name, _, _ := strings.Cut(f[1], ":")
		pkgs[name] = true
	}
	return pkgs
}

// ensureDependencies installs gnupg / software-properties-common when a
// key or an add-apt-repository source needs the command and the target
// lacks it.
//
// Where cloud-init stops the module when that install fails, cloudroot
// goes on when gnupg was the only package and every key is given inline
// (`key:`, no keyid to fetch): those keys are dearmored without gpg
// (dearmorKey, the same bytes), so an image without gnupg whose sources
// point at a mirror it cannot reach yet still gets its keyed sources.
func (r *aptRun) ensureDependencies(ctx context.Context, matcher *regexp.Regexp) error {
	need := map[string]bool{}
	keyidOnly := false
	if !r.cfg.PreserveSourcesList {
		for _, m := range append(slices.Clone(r.cfg.Primary), r.cfg.Security...) {
			if m.Key != "" || m.Keyid != "" {
				need["gpg"] = true
				keyidOnly = keyidOnly || m.Key == ""
			}
		}
	}
	for _, s := range r.cfg.Sources {
		if s.Key != "" || s.Keyid != "" {
			need["gpg"] = true
			keyidOnly = keyidOnly || s.Key == ""
		}
		if matcher == nil {
			continue
		}
		if v := s.SourceRaw.Value; s.SourceRaw.Given {
			if _, ok := v.(string); !ok {
				// re.search on it: upstream's TypeError, before anything
				// is written.
				return fmt.Errorf("expected string or bytes-like object, got '%s'", pyval.TypeName(v))
			}
		}
		if matcher.MatchString(s.Source) {
			need["add-apt-repository"] = true
		}
	}
	byCmd := map[string]string{"add-apt-repository": "software-properties-common", "gpg": "gnupg"}
	var missing []string
	for cmd := range need {
		if targetWhich(r.c.Root, cmd) == "" {
			missing = append(missing, byCmd[cmd])
		}
	}
	if len(missing) == 0 {
		return nil
	}
	slices.Sort(missing)
	var pkgs []distro.Package
	for _, m := range missing {
		pkgs = append(pkgs, distro.Package{Name: m})
	}
	pm := r.c.Distro.Packages()
	if pm == nil {
		return fmt.Errorf("installing %s: the distro has no package manager", strings.Join(missing, ", "))
	}
	if a, ok := pm.(distro.Apt); ok {
		pm = aptFromConfig(r.c, a, r.aptGet)
	}
	pr := &pkgRun{c: r.c, pm: pm}
	err := pr.installCmds(ctx, pkgs)
	if err != nil && !keyidOnly && slices.Equal(missing, []string{"gnupg"}) {
		r.c.Warnf("Installing gnupg failed (%v); dearmoring the inline apt keys without gpg", err)
		r.nativeDearmor = true
		return nil
	}
	return err
}

// applyAptConfig writes (or removes) the proxy and conf snippets.
func (r *aptRun) applyAptConfig() error {
	formats := []string{`Acquire::http::Proxy "%s";`, `Acquire::http::Proxy "%s";`, `Acquire::ftp::Proxy "%s";`, `Acquire::https::Proxy "%s";`}
	var lines []string
	for i, p := range r.cfg.Proxies {
		if p != "" {
			lines = append(lines, fmt.Sprintf(formats[i], p))
		}
	}
	var errs []error
	if len(lines) > 0 {
		errs = append(errs, r.c.Root.WriteFile(AptProxyFile, []byte(strings.Join(lines, "\n")+"\n"), 0o644))
	} else if fi, err := r.c.Root.Stat(AptProxyFile); err == nil && fi.Mode().IsRegular() {
		errs = append(errs, r.c.Root.Remove(AptProxyFile))
	}
	if r.cfg.Conf != "" {
		errs = append(errs, r.c.Root.WriteFile(AptConfigFile, []byte(r.cfg.Conf), 0o644))
	} else if fi, err := r.c.Root.Stat(AptConfigFile); err == nil && fi.Mode().IsRegular() {
		errs = append(errs, r.c.Root.Remove(AptConfigFile))
	}
	return errors.Join(errs...)
}

// renameAptLists moves apt's cached lists of the default mirrors to the
// names of the new ones, so the cache stays valid.
//
// A mirror given as a uri that is not a string is what upstream's
// mirrorurl_to_apt_fileprefix meets as is: a false one is skipped, any
// other fails the module (its AttributeError) once sources.list is written.
func (r *aptRun) renameAptLists(mirrors map[string]string, arch string) error {
	defaults := defaultUbuntuMirrors(arch)
	for _, name := range []string{"PRIMARY", "SECURITY"} {
		omirror, nmirror := defaults[name], mirrors[name]
		if omirror == "" || nmirror == "" {
			continue
		}
		if raw, ok := r.mirrorURIs[name]; ok {
			if !pyval.Truthy(raw) {
				continue
			}
			if _, str := raw.(string); !str {
				return fmt.Errorf("'%s' object has no attribute 'endswith'", pyval.TypeName(raw))
			}
		}
		opre := path.Join(AptLists, mirrorFilePrefix(omirror))
		npre := path.Join(AptLists, mirrorFilePrefix(nmirror))
		if opre == npre {
			continue
		}
		files, _ := r.c.Root.Glob(opre + "_*")
		for _, f := range files {
			if err := r.c.Root.Rename(f, npre+f[len(opre):]); err != nil {
				r.c.Warnf("Failed to rename apt list: %v", err)
			}
		}
	}
	return nil
}

// mirrorFilePrefix is how apt names a mirror's list files.
func mirrorFilePrefix(m string) string {
	m = strings.TrimSuffix(m, "/")
	if i := strings.Index(m, "://"); i >= 0 {
		m = m[i+3:]
	}
	return strings.ReplaceAll(m, "/", "_")
}

// defaultUbuntuMirrors is get_default_mirrors (Ubuntu's archive, which
// rename_apt_lists compares with on every distro).
func defaultUbuntuMirrors(arch string) map[string]string {
	switch arch {
	case "amd64", "i386":
		return map[string]string{"PRIMARY": "http://archive.ubuntu.com/ubuntu/", "SECURITY": "http://security.ubuntu.com/ubuntu/"}
	case "s390x", "arm64", "armhf", "powerpc", "ppc64el", "riscv64":
		return map[string]string{"PRIMARY": "http://ports.ubuntu.com/ubuntu-ports", "SECURITY": "http://ports.ubuntu.com/ubuntu-ports"}
	}
	return nil
}
