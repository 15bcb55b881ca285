package distro

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/cloudroot/cloudroot/pkg/internal/golden"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gopkg.in/yaml.v3"
)

// factsView is a case's golden: the facts and the commands they build for
// a fixed set of requests.
type factsView struct {
	Facts    Facts            `json:"facts"`
	Packages *packagesView    `json:"packages"`
	Services map[string][]Cmd `json:"services"`
	Hostname []Cmd            `json:"set_hostname"`
	Locale   localeView       `json:"set_locale"`
	Keyboard []Cmd            `json:"set_keyboard"`
}

type localeView struct {
	Write    []string `json:"write"`
	Commands []Cmd    `json:"commands"`
}

type packagesView struct {
	Name    string `json:"name"`
	Update  []Cmd  `json:"update"`
	Upgrade []Cmd  `json:"upgrade"`
	Install []Cmd  `json:"install"`
}

// goldenPackages is cloud-config `packages: [curl, [vim, "2:9.0"], [jq]]`.
var goldenPackages = []any{"curl", []any{"vim", "2:9.0"}, []any{"jq"}}

func viewFacts(t *testing.T, f Facts) factsView {
	t.Helper()
	v := factsView{Facts: f, Services: map[string][]Cmd{}}
	if a, b := f.Packages(), (Info{ID: f.ID, VersionID: f.VersionID}).Packages(); !reflect.DeepEqual(a, b) {
		t.Errorf("Info.Packages %v and Facts.Packages %v differ", b, a)
	}
	if pm := f.Packages(); pm != nil {
		pkgs, err := ParsePackages(goldenPackages)
		if err != nil {
			t.Fatal(err)
		}
		v.Packages = &packagesView{Name: pm.Name(), Update: pm.Update(), Upgrade: pm.Upgrade(), Install: pm.Install(pkgs)}
	}
	svc := f.SSHService
	sm := f.Services()
	for _, a := range Actions {
		c, err := sm.Command(a, svc)
		if err != nil {
			t.Fatalf("%s %s: %v", sm.Name(), a, err)
		}
		v.Services[a] = []Cmd{c}
	}
	v.Hostname = f.SetHostname("node1")
	v.Locale.Write, v.Locale.Commands = f.SetLocale("de_DE.UTF-8")
	v.Keyboard = f.SetKeyboard("de", "pc105", "nodeadkeys", "")
	return v
}

// TestFactsGolden: each testdata/facts/<case>/os-release (and optional
// init) gives the facts and argv in want.json.
func TestFactsGolden(t *testing.T) {
	dirs, _ := filepath.Glob("testdata/facts/*")
	if len(dirs) == 0 {
		t.Fatal("no cases in testdata/facts")
	}
	families := map[string]bool{}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			in := ParseOSRelease(mustRead(t, filepath.Join(dir, "os-release")))
			f := in.Facts()
			if b, err := os.ReadFile(filepath.Join(dir, "init")); err == nil {
				f = in.FactsFor(strings.TrimSpace(string(b)))
			}
			families[f.Family] = true
			got, err := json.MarshalIndent(viewFacts(t, f), "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			wantPath := filepath.Join(dir, "want.json")
			if golden.Update() {
				if err := os.WriteFile(wantPath, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(wantPath)
			if err != nil {
				t.Fatalf("%v (run go test -update)", err)
			}
			if !bytes.Equal(want, got) {
				t.Errorf("facts differ (-want +got):\n%s", cmp.Diff(string(want), string(got)))
			}
		})
	}
	for _, fam := range []string{"debian", "redhat", "suse", "alpine", "arch", "gentoo", "freebsd"} {
		if !families[fam] {
			t.Errorf("no golden case for family %s", fam)
		}
	}
}

// TestFactsAgreeWithCloudConfig: the facts' system_info is what the
// default cloud.cfg says, for every variant.
func TestFactsAgreeWithCloudConfig(t *testing.T) {
	for _, v := range Variants {
		f := Info{ID: v}.Facts()
		if v == VariantUnknown {
			continue
		}
		if f.Variant != v {
			t.Errorf("Info{ID: %q}.Variant() = %q", v, f.Variant)
		}
		out, err := CloudConfigForVariant(v)
		if err != nil {
			t.Fatal(err)
		}
		si, _ := loadYAML(t, out)["system_info"].(map[string]any)
		du, _ := si["default_user"].(map[string]any)
		if du["name"] != f.SystemInfo.User.Name || si["distro"] != f.SystemInfo.Distro {
			t.Errorf("%s: facts say user %s distro %s, cloud.cfg says %v %v", v, f.SystemInfo.User.Name, f.SystemInfo.Distro, du["name"], si["distro"])
		}
	}
}

func TestParsePackages(t *testing.T) {
	got, err := ParsePackages([]any{"a", []any{"b", "1.0"}, []any{"c"}, []any{"d", nil}, []any{"e", 2}})
	if err != nil {
		t.Fatal(err)
	}
	want := []Package{{Name: "a"}, {Name: "b", Version: "1.0"}, {Name: "c"}, {Name: "d"}, {Name: "e", Version: "2"}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("-want +got:\n%s", d)
	}
	if got, err := ParsePackages("single"); err != nil || len(got) != 1 || got[0].Name != "single" {
		t.Errorf("a single name: %v %v", got, err)
	}
	if _, err := ParsePackages([]any{[]any{"a", "1", "x"}, map[string]any{"apt": []any{"x"}}}); err == nil {
		t.Error("bad entries accepted")
	}
}

func TestServiceUnknownAction(t *testing.T) {
	for _, sm := range []ServiceManager{Systemd, SysVinit, OpenRC, BSDrc} {
		if _, err := sm.Command("explode", "ssh"); err == nil {
			t.Errorf("%s accepted an unknown action", sm.Name())
		}
	}
	c, err := Systemd.Command(ActionRestart, "ssh", "--no-block")
	if err != nil || strings.Join(c.Argv, " ") != "systemctl restart ssh --no-block" {
		t.Errorf("extra args: %v %v", c, err)
	}
}

func TestDetectInit(t *testing.T) {
	deb := ParseOSRelease([]byte("ID=debian\n"))
	files := map[string]bool{}
	links := map[string]string{}
	has := func(p string) bool { return files[p] }
	readlink := func(p string) (string, error) {
		if l, ok := links[p]; ok {
			return l, nil
		}
		return "", os.ErrNotExist
	}
	if got := deb.DetectInit(has, readlink); got != InitSystemd {
		t.Errorf("empty root: %s, want the default systemd", got)
	}
	links["/sbin/init"] = "/lib/systemd/systemd"
	if got := deb.DetectInit(has, readlink); got != InitSystemd {
		t.Errorf("init → systemd: %s", got)
	}
	links["/sbin/init"] = "/sbin/openrc-init"
	if got := deb.DetectInit(has, readlink); got != InitOpenRC {
		t.Errorf("init → openrc-init: %s", got)
	}
	delete(links, "/sbin/init")
	files["/sbin/openrc"] = true
	if got := deb.DetectInit(has, readlink); got != InitOpenRC {
		t.Errorf("/sbin/openrc: %s", got)
	}
	alpine := ParseOSRelease([]byte("ID=alpine\n"))
	if got := alpine.DetectInit(func(string) bool { return false }, nil); got != InitOpenRC {
		t.Errorf("alpine default: %s", got)
	}
}

const (
	docPath  = "../../docs/distro-facts.md"
	docBegin = "<!-- BEGIN generated by pkg/distro TestDistroFactsDoc -->\n"
	docEnd   = "<!-- END generated by pkg/distro TestDistroFactsDoc -->"
)

// TestDistroFactsDoc keeps the table in docs/distro-facts.md in step with
// the facts golden cases.
func TestDistroFactsDoc(t *testing.T) {
	dirs, _ := filepath.Glob("testdata/facts/*")
	var b strings.Builder
	b.WriteString("| os-release | variant | family | init | default user | packages | restart ssh | renderers | hostname | localhost | ntp auto |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, dir := range dirs {
		in := ParseOSRelease(mustRead(t, filepath.Join(dir, "os-release")))
		f := in.Facts()
		if b, err := os.ReadFile(filepath.Join(dir, "init")); err == nil {
			f = in.FactsFor(strings.TrimSpace(string(b)))
		}
		pm := "—"
		if p := f.Packages(); p != nil {
			pm = p.Name()
		}
		restart, _ := f.Services().Command(ActionRestart, f.SSHService)
		host := "`" + f.Hostname.File + "`"
		if c := f.SetHostname("NAME"); len(c) > 0 {
			host = "`" + strings.Join(c[0].Argv, " ") + "`"
		}
		u := f.SystemInfo.User
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s (%s) | %s | `%s` | %s | %s | %s | %s |\n",
			filepath.Base(dir), f.Variant, f.Family, f.Init, u.Name, strings.Join(u.Groups, ", "), pm,
			strings.Join(restart.Argv, " "), strings.Join(f.SystemInfo.Network.RendererOrder(), ", "),
			host, f.LocalhostIP, strings.Join(f.NTP.Preferred, ", "))
	}
	doc, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatal(err)
	}
	s := string(doc)
	i, j := strings.Index(s, docBegin), strings.Index(s, docEnd)
	if i < 0 || j < i {
		t.Fatalf("%s has no generated section", docPath)
	}
	got := s[:i+len(docBegin)] + b.String() + s[j:]
	if got == s {
		return
	}
	if golden.Update() {
		if err := os.WriteFile(docPath, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s is stale (go test ./pkg/distro -update):\n%s", docPath, cmp.Diff(s, got))
}

// FuzzParsePackages feeds cloud-config package lists (YAML) through
// ParsePackages and every package manager's Install.
func FuzzParsePackages(f *testing.F) {
	f.Add([]byte(`[curl, [vim, "2:9.0"], [jq]]`))
	f.Add([]byte(`[[a, 1, 2], {apt: [x]}, 3, ~]`))
	f.Add([]byte(`single`))
	managers := []PackageManager{Apt{}, Dnf{}, Dnf{Tool: "yum"}, Zypper{}, Apk{}, Pacman{}, Emerge{}, Pkg{}}
	f.Fuzz(func(t *testing.T, b []byte) {
		var v any
		if yaml.Unmarshal(b, &v) != nil {
			return
		}
		pkgs, err := ParsePackages(v)
		if err != nil && !errors.Is(err, ErrBadPackage) {
			t.Fatalf("error not ErrBadPackage: %v", err)
		}
		for _, pm := range managers {
			cmds := pm.Install(pkgs)
			last := cmds[len(cmds)-1].Argv
			if len(last) < len(pkgs) {
				t.Fatalf("%s install lost packages: %v for %v", pm.Name(), last, pkgs)
			}
		}
	})
}
