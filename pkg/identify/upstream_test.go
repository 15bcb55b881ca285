package identify

import (
	"encoding/base64"
	"encoding/json"
	"github.com/cloudroot/cloudroot/pkg/internal/golden"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"gopkg.in/yaml.v3"
)

// Parity with upstream's tools/ds-identify. Every fixture of this package
// (the golden cases under testdata/golden and the scenarios) is exported
// as data to testdata/upstream/fixtures.json (TestUpstreamFixtures, -update
// rewrites it); scripts/goldens/ds-identify.py lays each one out as a fake
// root for upstream's ds-identify, runs it and records its decision in
// testdata/upstream/ds-identify-26.json; TestUpstreamParity compares
// Identify's decision with it.

const (
	upstreamFixtures = "testdata/upstream/fixtures.json"
	upstreamGoldens  = "testdata/upstream/ds-identify-26.json"
)

// fixtureFile is one file of a fixture's root.
type fixtureFile struct {
	Data   string `json:"data,omitempty"`
	Base64 bool   `json:"base64,omitempty"`
	Mode   string `json:"mode"`
	Socket bool   `json:"socket,omitempty"`
	// MTime is the modification time in Unix seconds (0: now).
	MTime int64 `json:"mtime,omitempty"`
}

// fixture is Inputs as fixtures.json holds it.
type fixture struct {
	DMI        map[string]string      `json:"dmi"`
	Cmdline    string                 `json:"cmdline"`
	Virt       string                 `json:"virt"`
	Uname      Uname                  `json:"uname"`
	FS         []FSInfo               `json:"fs"`
	Files      map[string]fixtureFile `json:"files"`
	Env        map[string]string      `json:"env"`
	Guestinfo  map[string]string      `json:"guestinfo"`
	DebugLevel int                    `json:"debug_level"`
	Args       string                 `json:"args,omitempty"`
}

// fixtures are every fixture of the package's tests, by name
// ("golden/<dir>", "scenario/<name>").
func fixtures(t *testing.T) (map[string]Inputs, map[string]string) {
	t.Helper()
	ins, args := map[string]Inputs{}, map[string]string{}
	dirs, err := filepath.Glob("testdata/golden/*")
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range dirs {
		b, err := os.ReadFile(filepath.Join(dir, "inputs.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		var g goldenCase
		if err := yaml.Unmarshal(b, &g); err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		name := "golden/" + filepath.Base(dir)
		ins[name] = g.inputs()
		args[name] = g.Args
	}
	for _, s := range scenarios() {
		ins["scenario/"+s.name] = s.inputs()
	}
	return ins, args
}

func exportFixture(t *testing.T, in Inputs, args string) fixture {
	t.Helper()
	f := fixture{
		DMI: map[string]string{}, Cmdline: in.Cmdline.String(), Virt: in.Virt, Uname: in.Uname, FS: in.FS,
		Files: map[string]fixtureFile{}, Env: in.Env, Guestinfo: in.Guestinfo, DebugLevel: in.DebugLevel, Args: args,
	}
	for k, v := range map[string]string{
		"sys_vendor": in.DMI.SysVendor, "product_name": in.DMI.ProductName, "product_serial": in.DMI.ProductSerial,
		"product_uuid": in.DMI.ProductUUID, "product_version": in.DMI.ProductVersion,
		"chassis_asset_tag": in.DMI.ChassisAssetTag, "board_vendor": in.DMI.BoardVendor, "board_name": in.DMI.BoardName,
	} {
		if v != "" {
			f.DMI[k] = v
		}
	}
	for _, fsys := range []fs.FS{in.Files, in.Host} {
		if fsys == nil {
			continue
		}
		err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			ff := fixtureFile{Mode: permOctal(info.Mode())}
			if !info.ModTime().IsZero() {
				ff.MTime = info.ModTime().Unix()
			}
			if info.Mode()&fs.ModeSocket != 0 {
				ff.Socket = true
			} else {
				b, err := fs.ReadFile(fsys, p)
				if err != nil {
					return err
				}
				if utf8.Valid(b) {
					ff.Data = string(b)
				} else {
					ff.Data, ff.Base64 = base64.StdEncoding.EncodeToString(b), true
				}
			}
			f.Files[p] = ff
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func permOctal(m fs.FileMode) string {
	const digits = "01234567"
	p := m.Perm()
	return string([]byte{'0', digits[p>>6&7], digits[p>>3&7], digits[p&7]})
}

// TestUpstreamFixtures keeps testdata/upstream/fixtures.json, the input of
// scripts/goldens/ds-identify.py, in step with the fixtures.
func TestUpstreamFixtures(t *testing.T) {
	ins, args := fixtures(t)
	out := map[string]fixture{}
	for name, in := range ins {
		out[name] = exportFixture(t, in, args[name])
	}
	b, err := json.MarshalIndent(out, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	got := string(b) + "\n"
	if golden.Update() {
		if err := os.MkdirAll(filepath.Dir(upstreamFixtures), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(upstreamFixtures, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(upstreamFixtures)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if string(want) != got {
		t.Errorf("%s is stale: run go test -run TestUpstreamFixtures -update, then scripts/goldens/ds-identify.py", upstreamFixtures)
	}
}

// upstreamDecision is one fixture's entry in ds-identify-26.json.
type upstreamDecision struct {
	RC             int      `json:"rc"`
	DatasourceList []string `json:"datasource_list"`
	CloudCfg       string   `json:"cloud_cfg"`
	// Checks is each datasource checked → found, maybe or notfound.
	Checks map[string]string `json:"checks,omitempty"`
}

// upstreamDiffers are the fixtures where Identify deliberately decides
// otherwise than upstream's ds-identify, with the reason
// (docs/identify.md says the same).
var upstreamDiffers = map[string]string{
	"golden/ds-cmdline":                          lowerName,
	"scenario/ci.datasource-nocloud-net":         lowerName,
	"scenario/ci.ds-ec2":                         lowerName,
	"scenario/ds-nocloud-normalised":             lowerName,
	"scenario/altcloud-rhev-floppy":              altCloudQuoted,
	"scenario/altcloud-vsphere-cdrom":            altCloudQuoted,
	"scenario/configdrive-dir":                   "upstream looks for /config-drive outside PATH_ROOT, so a fake root cannot show its answer",
	"scenario/altcloud-maybe-ignored-by-default": altCloudQuoted,
	"scenario/opennebula-seed-context":           "upstream's check_seed_dir opennebula requires a meta-data file the OpenNebula datasource never reads; cloudroot takes context.sh",
}

const (
	lowerName      = "a datasource named on the kernel command line is written with cloud-init's spelling (NoCloud, Ec2); upstream writes it as typed, which cloud-init reads case-insensitively"
	altCloudQuoted = "upstream's dscheck_AltCloud quotes its case patterns (\"[Rr][Hh][Ee][Vv]\"), so they match only themselves and AltCloud is never found; cloudroot matches RHEV/vSphere as intended"
)

// topLevelList is the datasource_list line of a run/cloud-init/cloud.cfg
// at the top level (report mode nests it under di_report), as
// scripts/goldens/ds-identify.py reads upstream's.
func topLevelList(cfg string) []string {
	for _, line := range strings.Split(cfg, "\n") {
		v, ok := strings.CutPrefix(line, "datasource_list:")
		if !ok {
			continue
		}
		var out []string
		for _, e := range strings.Split(strings.Trim(strings.TrimSpace(v), "[]"), ",") {
			if e = strings.TrimSpace(e); e != "" {
				out = append(out, e)
			}
		}
		return out
	}
	return nil
}

// TestUpstreamParity compares Identify's exit code, datasource_list, whole
// run/cloud-init/cloud.cfg and each datasource check's verdict with what
// upstream's ds-identify decided for the same fixture.
func TestUpstreamParity(t *testing.T) {
	b, err := os.ReadFile(upstreamGoldens)
	if err != nil {
		t.Fatalf("%v (run scripts/goldens/ds-identify.py)", err)
	}
	var up map[string]upstreamDecision
	if err := json.Unmarshal(b, &up); err != nil {
		t.Fatal(err)
	}
	ins, _ := fixtures(t)
	names := make([]string, 0, len(ins))
	for n := range ins {
		names = append(names, n)
	}
	sort.Strings(names)
	same := 0
	for _, name := range names {
		u, ok := up[name]
		if !ok {
			t.Errorf("%s: no upstream decision (rerun scripts/goldens/ds-identify.py)", name)
			continue
		}
		r := Identify(ins[name])
		list := topLevelList(r.CloudCfg)
		checks := map[string]string{}
		for _, c := range r.Found {
			// MAAS has no dscheck in 26.x (ds-identify skips it with a
			// warning); Identify's check answers notfound.
			if _, ok := u.Checks[c.Name]; !ok && c.Name == "MAAS" && c.Result == NotFound {
				continue
			}
			checks[c.Name] = string(c.Result)
		}
		if len(checks) == 0 {
			checks = nil
		}
		diff := cmp.Diff(u, upstreamDecision{RC: r.ExitCode, DatasourceList: list, CloudCfg: r.CloudCfg, Checks: checks}, cmpopts.EquateEmpty())
		why, known := upstreamDiffers[name]
		switch {
		case diff == "" && known:
			t.Errorf("%s: listed as differing (%s) but equal", name, why)
		case diff != "" && known:
			t.Logf("%s differs as documented (%s) (-upstream +cloudroot):\n%s", name, why, diff)
		case diff != "":
			t.Errorf("%s (-upstream +cloudroot):\n%s\nlog:\n%s", name, diff, strings.Join(r.Log, "\n"))
		default:
			same++
		}
	}
	t.Logf("%d of %d fixtures decided as upstream's ds-identify", same, len(names))
}
