package cm

// ansible (cloud-init cc_ansible, final stage, per-instance, all distros,
// activated by the `ansible` key), as cloud-init 26.x runs it:
//
//  1. validate: install_method and package_name are required (truthy);
//     each pull entry needs url and exactly one of playbook_name /
//     playbook_names; setup_controller needs repositories or run_ansible;
//     install_method is distro or pip.
//  2. install: distro — the distro's package manager installs package_name
//     unless `ansible` is on PATH; pip — python3 -m pip (bootstrapping the
//     distro's pip package when the target's python has no pip module)
//     upgrades pip and installs package_name unless `pip list` already
//     shows ansible, with --break-system-packages when the target's
//     stdlib has EXTERNALLY-MANAGED and --user when run_user is set.
//  3. ansible must now be installed (on PATH, or in pip list for pip).
//  4. galaxy.actions run in order; each pull entry runs ansible-pull with
//     --KEY=VALUE (KEY's underscores as dashes, true as a bare --KEY,
//     false left out; flags in key order) and the playbooks, all at once
//     on ansible-pull 2.12 or newer, one run per playbook before;
//     setup_controller clones repositories and runs ansible-playbook for
//     each run_ansible entry in its playbook_dir.
//
// Commands run as root with HOME and, when ansible_config is set, the
// variable "ansible_config" (cloud-init's spelling) in their environment;
// with run_user they run through `su - USER -c "env PATH=$PATH ..."`
// (Distro.do_as), which passes neither.

import (
	"context"
	"fmt"
	"os"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/cloudroot/cloudroot/pkg/internal/pyval"
	"github.com/cloudroot/cloudroot/pkg/modules"
	"github.com/cloudroot/cloudroot/pkg/state"
)

// Ansible is cc_ansible.
var Ansible = modules.Module{
	Name:       "ansible",
	Frequency:  state.PerInstance,
	Keys:       []string{"ansible"},
	ActivateBy: []string{"ansible"},
	Run:        modules.Typed(runAnsible),
}

// PythonExecutable is the interpreter cloud-init runs as (sys.executable),
// which its pip install method uses.
const PythonExecutable = "/usr/bin/python3"

// ansibleConfig is the `ansible` key, checked.
type ansibleConfig struct {
	raw                    map[string]any
	InstallMethod, Package string
	RunUser, Config        string
	GalaxyActions          [][]string
	galaxy                 map[string]any
	Pulls                  []ansibleItem
	Repositories           []ansibleRepo
	RunAnsible             []ansibleItem
}

type ansibleRepo struct{ Source, Path string }

// ansibleSection is the ansible mapping, each key as given.
type ansibleSection struct {
	// All is the whole mapping, for its size and cloud-init's messages.
	All           map[string]any `cfg:",all"`
	InstallMethod pyval.Opt      `cfg:"install_method"`
	PackageName   pyval.Opt      `cfg:"package_name"`
	RunUser       string         `cfg:"run_user,scalar"`
	Config        string         `cfg:"ansible_config,scalar"`
	Pull          any            `cfg:"pull"`
	// PullItems is pull when it is a list; PullOne when a mapping.
	PullItems       []ansibleItem `cfg:"pull,loose"`
	PullOne         ansibleItem   `cfg:"pull"`
	SetupController struct {
		All          map[string]any `cfg:",all"`
		Repositories any            `cfg:"repositories"`
		RunAnsible   any            `cfg:"run_ansible"`
		RepoItems    []ansibleItem  `cfg:"repositories,loose"`
		RunItems     []ansibleItem  `cfg:"run_ansible,loose"`
	} `cfg:"setup_controller,loose"`
	Galaxy struct {
		All     map[string]any `cfg:",all"`
		Actions []any          `cfg:"actions,loose"`
	} `cfg:"galaxy,loose"`
}

// ansibleItem is one item of pull, repositories or run_ansible: a
// mapping (All, passed through: its other keys become command-line
// flags) with the keys the module reads, or another value (Raw).
type ansibleItem struct {
	IsMap         bool
	Raw           any
	All           map[string]any
	URL           pyval.Opt `cfg:"url"`
	PlaybookName  pyval.Opt `cfg:"playbook_name"`
	PlaybookNames pyval.Opt `cfg:"playbook_names"`
	PlaybookDir   pyval.Opt `cfg:"playbook_dir"`
	Diff          pyval.Opt `cfg:"diff"`
	Source        pyval.Opt `cfg:"source"`
	Path          pyval.Opt `cfg:"path"`
}

// UnmarshalPy reads one item.
func (it *ansibleItem) UnmarshalPy(d *pyval.Decoder, v any) error {
	*it = ansibleItem{Raw: v}
	switch m := v.(type) {
	case map[string]any:
		it.IsMap, it.All = true, m
		return d.Decode(m, it)
	}
	return nil
}

// decodeAnsible applies validate_config's checks to the key as decoded.
func decodeAnsible(m ansibleSection) (ansibleConfig, error) {
	var a ansibleConfig
	a.raw = m.All
	if len(m.All) == 0 {
		return a, nil
	}
	for _, k := range []struct {
		name string
		o    pyval.Opt
	}{{"install_method", m.InstallMethod}, {"package_name", m.PackageName}} {
		if !k.o.Truthy() {
			return a, fmt.Errorf("Missing required key '%s' from %s", k.name, pyval.Repr(m.All))
		}
	}
	a.InstallMethod, a.Package = pyval.Str(m.InstallMethod.Value), pyval.Str(m.PackageName.Value)
	a.RunUser, a.Config = m.RunUser, m.Config
	switch p := m.Pull.(type) {
	case nil:
	case map[string]any:
		a.Pulls = []ansibleItem{m.PullOne}
	case []any:
		for _, e := range m.PullItems {
			if !e.IsMap {
				return a, fmt.Errorf("Invalid value of ansible.pull. Expected dict but found %s", pyval.Repr(e.Raw))
			}
			a.Pulls = append(a.Pulls, e)
		}
	default:
		if pyval.Truthy(p) {
			return a, fmt.Errorf("Invalid value ansible.pull. Expected either dict of list of dicts but found %s", pyval.Repr(p))
		}
	}
	for _, p := range a.Pulls {
		if !p.URL.Truthy() {
			return a, fmt.Errorf("Missing required key 'url' from %s", pyval.Repr(p.All))
		}
		one, many := p.PlaybookName.Truthy(), p.PlaybookNames.Truthy()
		switch {
		case !one && !many:
			return a, fmt.Errorf("Missing required key 'playbook_names' from %s", pyval.Repr(p.All))
		case one && many:
			return a, fmt.Errorf("Key 'ansible.pull.playbook_name' and 'ansible.pull.playbook_names' are mutually exclusive. Please use 'playbook_names' in %s", pyval.Repr(p.All))
		}
	}
	if sc := m.SetupController; len(sc.All) > 0 {
		if !pyval.Truthy(sc.Repositories) && !pyval.Truthy(sc.RunAnsible) {
			return a, fmt.Errorf("Missing required key from %s", pyval.Repr(sc.All))
		}
		for _, r := range sc.RepoItems {
			a.Repositories = append(a.Repositories, ansibleRepo{Source: pyval.Str(r.Source.Value), Path: pyval.Str(r.Path.Value)})
		}
		a.RunAnsible = sc.RunItems
	}
	if a.InstallMethod != "pip" && a.InstallMethod != "distro" {
		return a, fmt.Errorf("Invalid install method {install}")
	}
	if g := m.Galaxy; len(g.All) > 0 {
		a.galaxy = g.All
		for _, act := range g.Actions {
			a.GalaxyActions = append(a.GalaxyActions, pyStrList(act))
		}
	}
	return a, nil
}

func anyList(v any) []any { l, _ := v.([]any); return l }

// pyStrList is [str(x) for x in v].
func pyStrList(v any) []string {
	var out []string
	for _, e := range anyList(v) {
		out = append(out, pyval.Str(e))
	}
	return out
}

// ansibleRun runs the module's commands as cloud-init's AnsiblePull does.
type ansibleRun struct {
	c   *modules.Context
	a   ansibleConfig
	env []string
}

// cmd runs argv as run_user (do_as) or as root with the module's env.
func (r *ansibleRun) cmd(ctx context.Context, argv []string, dir string, capture bool) (string, error) {
	if r.a.RunUser != "" {
		return cmCmd{Argv: doAs(argv, r.a.RunUser, dir), Capture: capture}.run(ctx, r.c)
	}
	return cmCmd{Argv: argv, Env: r.env, Dir: dir, Capture: capture}.run(ctx, r.c)
}

// ansibleKeys is the module's key, decoded when it is a mapping
// (decodeAnsible checks it as cloud-init does; another shape is none).
type ansibleKeys struct {
	Ansible ansibleSection `cfg:"ansible,loose"`
}

func runAnsible(ctx context.Context, c *modules.Context, cfg ansibleKeys) error {
	a, err := decodeAnsible(cfg.Ansible)
	if err != nil {
		return err
	}
	if len(a.raw) == 0 {
		return nil
	}
	home := "/root"
	if c.Root.Dir() == "/" && os.Getenv("HOME") != "" {
		home = os.Getenv("HOME")
	}
	r := &ansibleRun{c: c, a: a, env: []string{"HOME=" + home}}
	if a.InstallMethod == "pip" {
		err = r.installPip(ctx)
	} else {
		err = r.installDistro(ctx)
	}
	if err != nil {
		return err
	}
	if ok, err := r.installed(ctx); err != nil {
		return err
	} else if !ok {
		return fmt.Errorf("command: ansible is not installed")
	}
	if a.Config != "" {
		r.env = append(r.env, "ansible_config="+a.Config)
	}
	if a.galaxy != nil {
		if len(a.GalaxyActions) == 0 {
			c.Warnf("Invalid config: %s", pyval.Repr(a.galaxy))
		}
		for _, act := range a.GalaxyActions {
			if _, err := r.cmd(ctx, act, "", false); err != nil {
				return err
			}
		}
	}
	for _, p := range a.Pulls {
		if err := r.pull(ctx, p); err != nil {
			return err
		}
	}
	for _, repo := range a.Repositories {
		if _, err := r.cmd(ctx, []string{"git", "clone", repo.Source, repo.Path}, "", false); err != nil {
			return err
		}
	}
	for _, ra := range a.RunAnsible {
		rest := map[string]any{}
		for k, v := range ra.All {
			if k != "playbook_dir" && k != "playbook_name" {
				rest[k] = v
			}
		}
		for _, k := range []struct {
			name string
			o    pyval.Opt
		}{{"playbook_dir", ra.PlaybookDir}, {"playbook_name", ra.PlaybookName}} {
			if !k.o.Given {
				return fmt.Errorf("run_ansible: %s", pyval.StrRepr(k.name))
			}
		}
		argv := append([]string{"ansible-playbook", pyval.Str(ra.PlaybookName.Value)}, ansibleFlags(rest, false)...)
		if _, err := r.cmd(ctx, argv, pyval.Str(ra.PlaybookDir.Value), false); err != nil {
			return err
		}
	}
	return nil
}

// ansibleFlags is filter_args as cloud-init turns it into flags: false
// values dropped, KEY's underscores as dashes, --KEY=str(VALUE) or (when
// bareTrue and the value is true) --KEY, in key order.
func ansibleFlags(m map[string]any, bareTrue bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var out []string
	for _, k := range keys {
		v := m[k]
		if b, ok := v.(bool); ok && !b {
			continue
		}
		flag := "--" + strings.ReplaceAll(k, "_", "-")
		if b, ok := v.(bool); ok && b && bareTrue {
			out = append(out, flag)
			continue
		}
		out = append(out, flag+"="+pyval.Str(v))
	}
	return out
}

func (r *ansibleRun) installDistro(ctx context.Context) error {
	if r.c.Which("ansible") {
		return nil
	}
	return r.c.InstallPackages(ctx, r.c.Facts(), []string{r.a.Package})
}

// pipBase is `python3 -m pip`.
func (r *ansibleRun) pipBase() []string {
	return []string{PythonExecutable, "-m", "pip"}
}

func (r *ansibleRun) installed(ctx context.Context) (bool, error) {
	if r.a.InstallMethod != "pip" {
		return r.c.Which("ansible"), nil
	}
	argv := append(r.pipBase(), "list")
	if r.a.RunUser != "" {
		argv = append(argv, "--user")
	}
	out, err := r.cmd(ctx, argv, "", true)
	if err != nil {
		return false, err
	}
	return strings.Contains(out, "ansible"), nil
}

// installPip is AnsiblePullPip: the user's site base (for run_user),
// pip bootstrapped from the distro, pip upgraded, the package installed.
func (r *ansibleRun) installPip(ctx context.Context) error {
	if r.a.RunUser != "" {
		if _, err := r.cmd(ctx, []string{PythonExecutable, "-c", "import site; print(site.getuserbase())"}, "", true); err != nil {
			return err
		}
	}
	if !r.hasPip() {
		name := "python3-pip"
		if r.c.Distro.Variant() == "alpine" {
			name = "py3-pip"
		}
		if err := r.c.InstallPackages(ctx, r.c.Facts(), []string{name}); err != nil {
			return err
		}
	}
	ok, err := r.installed(ctx)
	if err != nil || ok {
		return err
	}
	argv := append(r.pipBase(), "install")
	if r.externallyManaged() {
		argv = append(argv, "--break-system-packages")
	}
	if r.a.RunUser != "" {
		argv = append(argv, "--user")
	}
	if _, err := r.cmd(ctx, append(slices.Clone(argv), "--upgrade", "pip"), "", false); err != nil {
		r.c.Warnf("Failed at upgrading pip. This is usually not criticalso the script will skip this step.\n%v", err)
	}
	_, err = r.cmd(ctx, append(argv, r.a.Package), "", false)
	return err
}

// pythonStdlibs are the target's /usr/lib/python3.N directories.
func (r *ansibleRun) pythonStdlibs() []string {
	var out []string
	dirs, _ := r.c.Root.Glob("/usr/lib/python3*")
	for _, d := range dirs {
		if b := path.Base(d); b == "python3" || regexp.MustCompile(`^python3\.\d+$`).MatchString(b) {
			out = append(out, d)
		}
	}
	return out
}

// hasPip is `import pip` in the target's python: a pip package in one of
// its module directories.
func (r *ansibleRun) hasPip() bool {
	for _, d := range r.pythonStdlibs() {
		for _, sub := range []string{"/site-packages/pip", "/dist-packages/pip"} {
			if r.c.Root.Exists(d + sub) {
				return true
			}
		}
	}
	return r.c.Root.Exists("/usr/lib/python3/dist-packages/pip")
}

// externallyManaged is the stdlib's EXTERNALLY-MANAGED marker (PEP 668).
func (r *ansibleRun) externallyManaged() bool {
	for _, d := range r.pythonStdlibs() {
		if r.c.Root.Exists(d + "/EXTERNALLY-MANAGED") {
			return true
		}
	}
	return false
}

var ansibleVersionRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[\d.]+`) })

// ansibleVersion is get_version: the first number of `ansible-pull
// --version`'s first line, as up to four integer parts (missing ones -1).
func (r *ansibleRun) version(ctx context.Context) ([4]int, bool, error) {
	v := [4]int{-1, -1, -1, -1}
	out, err := r.cmd(ctx, []string{"ansible-pull", "--version"}, "", true)
	if err != nil {
		return v, false, err
	}
	first, _, _ := strings.Cut(out, "\n")
	if out == "" {
		return v, false, fmt.Errorf("pop from empty list")
	}
	s := ansibleVersionRe().FindString(first)
	if s == "" {
		return v, false, nil
	}
	parts := strings.Split(s, ".")
	if len(parts) > 4 {
		return v, false, fmt.Errorf("Version.__init__() takes from 1 to 5 positional arguments but %d were given", len(parts)+1)
	}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil {
			return v, false, fmt.Errorf("invalid literal for int() with base 10: %s", pyval.StrRepr(p))
		}
		v[i] = n
	}
	return v, true, nil
}

func versionLess(a, b [4]int) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}

// pull is run_ansible_pull.
func (r *ansibleRun) pull(ctx context.Context, p ansibleItem) error {
	// Every key but the playbooks is passed through as a flag.
	cfg := map[string]any{}
	for k, v := range p.All {
		if k != "playbook_name" && k != "playbook_names" {
			cfg[k] = v
		}
	}
	playbooks := pyStrList(p.PlaybookNames.Value)
	if p.PlaybookName.Truthy() {
		playbooks = []string{pyval.Str(p.PlaybookName.Value)}
	}
	v, ok, err := r.version(ctx)
	if err != nil {
		return err
	}
	if !ok {
		r.c.Warnf("Cannot parse ansible version")
	} else if versionLess(v, [4]int{2, 7, 0, -1}) && p.Diff.Truthy() {
		return fmt.Errorf("Ansible version %d.%d.%ddoesn't support --diff flag, exiting.", v[0], v[1], v[2])
	}
	args := ansibleFlags(cfg, true)
	if ok && !versionLess(v, [4]int{2, 12, 0, -1}) {
		_, err := r.cmd(ctx, append(append([]string{"ansible-pull"}, args...), playbooks...), "", false)
		return err
	}
	for _, pb := range playbooks {
		if _, err := r.cmd(ctx, append(append([]string{"ansible-pull"}, args...), pb), "", false); err != nil {
			return err
		}
	}
	return nil
}
