package distro

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// upstreamDoc is testdata/upstream/<case>.json: what cloud-init's distro
// class did and held, recorded by scripts/goldens/distro.sh.
type upstreamDoc struct {
	Distro      string           `json:"distro"`
	OSID        string           `json:"os_id"`
	VersionID   string           `json:"version_id"`
	Init        string           `json:"init"`
	Update      []Cmd            `json:"update"`
	Upgrade     []Cmd            `json:"upgrade"`
	Install     []Cmd            `json:"install"`
	Services    map[string][]Cmd `json:"services"`
	SetTimezone []struct {
		Op []string `json:"file_op"`
	} `json:"set_timezone"`
	ApplyLocale    json.RawMessage      `json:"apply_locale"`
	SetKeymap      json.RawMessage      `json:"set_keymap"`
	WriteHostname  json.RawMessage      `json:"write_hostname"`
	ApplyHostname  json.RawMessage      `json:"apply_hostname"`
	LocalhostIP    string               `json:"localhost_ip"`
	HostnameConfFn string               `json:"hostname_conf_fn"`
	DefaultLocale  string               `json:"default_locale"`
	Sudoers        string               `json:"ci_sudoers_fn"`
	UsrLibExec     string               `json:"usr_lib_exec"`
	SSHService     string               `json:"ssh_svcname"`
	PreferredNTP   []string             `json:"preferred_ntp_clients"`
	NTPClients     map[string]NTPClient `json:"ntp_clients"`
}

// norm makes a command comparable: env sorted, nil and empty alike.
func norm(cs []Cmd) []Cmd {
	out := make([]Cmd, 0, len(cs))
	for _, c := range cs {
		env := slices.Clone(c.Env)
		slices.Sort(env)
		if len(env) == 0 {
			env = nil
		}
		out = append(out, Cmd{Env: env, Argv: c.Argv})
	}
	return out
}

// TestUpstreamDistroGoldens holds the facts and command builders to what
// upstream's distro classes do for the same distro and init system.
func TestUpstreamDistroGoldens(t *testing.T) {
	files, _ := filepath.Glob("testdata/upstream/*.json")
	if len(files) == 0 {
		t.Fatal("no upstream goldens (run scripts/goldens/distro.sh)")
	}
	pkgs, err := ParsePackages(goldenPackages)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range files {
		t.Run(strings.TrimSuffix(filepath.Base(p), ".json"), func(t *testing.T) {
			var up upstreamDoc
			if err := json.Unmarshal(mustRead(t, p), &up); err != nil {
				t.Fatal(err)
			}
			f := Info{ID: up.OSID, VersionID: up.VersionID}.FactsFor(up.Init)
			if f.SystemInfo.Distro != up.Distro {
				t.Fatalf("%s %s: distro class %s, upstream's case is %s", up.OSID, up.VersionID, f.SystemInfo.Distro, up.Distro)
			}

			pm := f.Packages()
			if pm == nil {
				t.Fatal("no package manager")
			}
			check := func(what string, want, got []Cmd) {
				t.Helper()
				if d := cmp.Diff(norm(want), norm(got)); d != "" {
					t.Errorf("%s (-upstream +cloudroot):\n%s", what, d)
				}
			}
			check("update", up.Update, pm.Update())
			check("upgrade", up.Upgrade, pm.Upgrade())
			// cloud-init asks apt-cache which names exist (cloudroot cannot
			// before the target runs) and installs from a set, in no order.
			var want []Cmd
			for _, c := range up.Install {
				if c.Argv[0] != "apt-cache" {
					want = append(want, c)
				}
			}
			got := pm.Install(pkgs)
			if pm.Name() == "apt" && len(want) == len(got) && len(got) > 0 {
				last := len(got) - 1
				w, g := slices.Clone(want[last].Argv), slices.Clone(got[last].Argv)
				slices.Sort(w)
				slices.Sort(g)
				want[last].Argv, got[last].Argv = w, g
			}
			check("install", want, got)

			sm := f.Services()
			for action, cmds := range up.Services {
				c, err := sm.Command(action, "sshd")
				if err != nil {
					t.Errorf("%s: %v", action, err)
					continue
				}
				check("service "+action, cmds, []Cmd{c})
			}

			var tz [][]string
			for _, op := range up.SetTimezone {
				if op.Op[0] != "delete" { // removing an old link depends on the host
					tz = append(tz, op.Op)
				}
			}
			if d := cmp.Diff(tz, timezoneOps(f, "Europe/Berlin")); d != "" {
				t.Errorf("set_timezone (-upstream +cloudroot):\n%s", d)
			}

			// Locale: the files written (contents depend on the target's
			// locale.gen and SUPPORTED) and the commands.
			if steps, ok := upstreamSteps(t, up.ApplyLocale); ok {
				w, c := f.SetLocale("de_DE.UTF-8")
				if d := cmp.Diff(steps.writes(), w); d != "" {
					t.Errorf("apply_locale writes (-upstream +cloudroot):\n%s", d)
				}
				check("apply_locale", steps.cmds(), c)
			}
			// Keyboard: nothing where upstream's set_keymap is not implemented.
			steps, ok := upstreamSteps(t, up.SetKeymap)
			kb := f.SetKeyboard("de", "pc105", "nodeadkeys", "")
			switch {
			case !ok && (len(kb) > 0 || f.Keyboard.File != ""):
				t.Errorf("set_keymap: upstream has none, cloudroot %+v %v", f.Keyboard, kb)
			case ok:
				var files []string
				if f.Keyboard.File != "" {
					files = []string{f.Keyboard.File}
				}
				if d := cmp.Diff(steps.writes(), files); d != "" {
					t.Errorf("set_keymap writes (-upstream +cloudroot):\n%s", d)
				}
				check("set_keymap", steps.cmds(), kb)
			}
			// Hostname: hostnamectl, or the file in its format.
			if steps, ok := upstreamSteps(t, up.WriteHostname); ok {
				check("write_hostname", steps.cmds(), f.SetHostname("node1"))
				var files [][]string
				if len(f.Hostname.Command) == 0 {
					files = [][]string{{"write", f.Hostname.File, f.Hostname.Content("node1")}}
				}
				if d := cmp.Diff(steps.fileOps(), files); d != "" {
					t.Errorf("write_hostname (-upstream +cloudroot):\n%s", d)
				}
			}
			if steps, ok := upstreamSteps(t, up.ApplyHostname); ok {
				check("apply_hostname", steps.cmds(), []Cmd{{Argv: fill(f.Hostname.Transient, map[string]string{"%s": "node1"})}})
			}

			if f.LocalhostIP != up.LocalhostIP {
				t.Errorf("localhost IP %s, upstream %s", f.LocalhostIP, up.LocalhostIP)
			}
			if len(f.Hostname.Command) == 0 && f.Hostname.File != up.HostnameConfFn {
				t.Errorf("hostname file %s, upstream %s", f.Hostname.File, up.HostnameConfFn)
			}
			if f.Paths.Sudoers != up.Sudoers || f.Paths.UsrLibExec != up.UsrLibExec {
				t.Errorf("paths %+v, upstream sudoers %s usr_lib_exec %s", f.Paths, up.Sudoers, up.UsrLibExec)
			}
			if up.SSHService != "" && f.SSHService != up.SSHService {
				t.Errorf("ssh service %s, upstream %s", f.SSHService, up.SSHService)
			}
			if up.DefaultLocale != "" && f.Locale.Default != up.DefaultLocale {
				t.Errorf("default locale %s, upstream %s", f.Locale.Default, up.DefaultLocale)
			}
			if d := cmp.Diff(up.PreferredNTP, f.NTP.Preferred); d != "" {
				t.Errorf("ntp preference (-upstream +cloudroot):\n%s", d)
			}
			mine := map[string]NTPClient{}
			for k, c := range f.NTP.Clients {
				c.Template = ""
				mine[k] = c
			}
			if d := cmp.Diff(up.NTPClients, mine); d != "" {
				t.Errorf("ntp clients (-upstream +cloudroot):\n%s", d)
			}
		})
	}
}

// timezoneOps is what set_timezone does per the facts, in the recorder's
// terms (without the removal of an old /etc/localtime).
func timezoneOps(f Facts, tz string) [][]string {
	var ops [][]string
	zone := f.Timezone.ZoneinfoDir + "/" + tz
	if f.Timezone.File != "" {
		ops = append(ops, []string{"write", f.Timezone.File, tz + "\n"})
	}
	if f.Timezone.Clock != "" {
		ops = append(ops, []string{"write", f.Timezone.Clock, f.Timezone.ClockKey + "=" + tz + "\n"})
	}
	if f.Timezone.Copy {
		ops = append(ops, []string{"copy", zone, f.Timezone.Localtime})
	} else {
		ops = append(ops, []string{"symlink", zone, f.Timezone.Localtime})
	}
	return ops
}

// upstreamStep is one recorded step: a command or a file operation.
type upstreamStep struct {
	Argv []string `json:"argv"`
	Env  []string `json:"env"`
	Op   []string `json:"file_op"`
}

type stepList []upstreamStep

// upstreamSteps decodes a recorded sequence; false when upstream raised
// (recorded as "error: <type>").
func upstreamSteps(t *testing.T, raw json.RawMessage) (stepList, bool) {
	t.Helper()
	var s stepList
	if err := json.Unmarshal(raw, &s); err != nil {
		var e string
		if json.Unmarshal(raw, &e) == nil && strings.HasPrefix(e, "error: ") {
			return nil, false
		}
		t.Fatalf("bad recording %s: %v", raw, err)
	}
	return s, true
}

func (s stepList) cmds() []Cmd {
	var out []Cmd
	for _, st := range s {
		if st.Argv != nil {
			out = append(out, Cmd{Env: st.Env, Argv: st.Argv})
		}
	}
	return out
}

func (s stepList) fileOps() [][]string {
	var out [][]string
	for _, st := range s {
		if st.Op != nil {
			out = append(out, st.Op)
		}
	}
	return out
}

func (s stepList) writes() []string {
	var out []string
	for _, op := range s.fileOps() {
		if op[0] == "write" {
			out = append(out, op[1])
		}
	}
	return out
}
