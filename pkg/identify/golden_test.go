package identify

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
	"gopkg.in/yaml.v3"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
	"github.com/cloudroot/cloudroot/pkg/internal/golden"
)

// goldenCase is testdata/golden/<case>/inputs.yaml.
type goldenCase struct {
	DMI struct {
		SysVendor       string `yaml:"sys_vendor"`
		ProductName     string `yaml:"product_name"`
		ProductSerial   string `yaml:"product_serial"`
		ProductUUID     string `yaml:"product_uuid"`
		ChassisAssetTag string `yaml:"chassis_asset_tag"`
		BoardName       string `yaml:"board_name"`
	} `yaml:"dmi"`
	Cmdline string `yaml:"cmdline"`
	Virt    string `yaml:"virt"`
	Uname   struct {
		Sysname string `yaml:"sysname"`
		Release string `yaml:"release"`
		Version string `yaml:"version"`
		Machine string `yaml:"machine"`
	} `yaml:"uname"`
	FS []struct {
		Device string `yaml:"device"`
		Type   string `yaml:"type"`
		Label  string `yaml:"label"`
		UUID   string `yaml:"uuid"`
		Size   int64  `yaml:"size"`
	} `yaml:"fs"`
	Env        map[string]string `yaml:"env"`
	Guestinfo  map[string]string `yaml:"guestinfo"`
	Files      map[string]string `yaml:"files"`
	Sockets    []string          `yaml:"sockets"`
	DebugLevel int               `yaml:"debug_level"`
	Args       string            `yaml:"args"`
}

func (g goldenCase) inputs() Inputs {
	fsys := fstest.MapFS{}
	for k, v := range g.Files {
		fsys[k] = file(v)
	}
	for _, k := range g.Sockets {
		fsys[k] = socket()
	}
	in := Inputs{
		DMI: bootenv.DMI{SysVendor: g.DMI.SysVendor, ProductName: g.DMI.ProductName, ProductSerial: g.DMI.ProductSerial,
			ProductUUID: g.DMI.ProductUUID, ChassisAssetTag: g.DMI.ChassisAssetTag, BoardName: g.DMI.BoardName},
		Cmdline:    bootenv.ParseCmdline(g.Cmdline),
		Virt:       g.Virt,
		Uname:      Uname{Sysname: g.Uname.Sysname, Release: g.Uname.Release, Version: g.Uname.Version, Machine: g.Uname.Machine},
		Files:      fsys,
		Env:        g.Env,
		Guestinfo:  g.Guestinfo,
		DebugLevel: g.DebugLevel,
	}
	for _, d := range g.FS {
		in.FS = append(in.FS, FSInfo{Device: d.Device, Type: d.Type, Label: d.Label, UUID: d.UUID, Size: d.Size})
	}
	return in
}

// uptimeRE matches the uptime stamps of ds-identify.log.
var uptimeRE = regexp.MustCompile(`\[up [0-9.]+s\]`)

// MaskUptime replaces the uptime stamps so logs compare across runs.
func maskUptime(s string) string { return uptimeRE.ReplaceAllString(s, "[up N.NNs]") }

func TestGolden(t *testing.T) {
	dirs, err := filepath.Glob("testdata/golden/*")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no golden cases: %v", err)
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join(dir, "inputs.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			var g goldenCase
			if err := yaml.Unmarshal(b, &g); err != nil {
				t.Fatalf("inputs.yaml: %v", err)
			}
			r := Identify(g.inputs())
			got := map[string]string{
				"want.cloud.cfg":       r.CloudCfg,
				"want.ds-identify.log": maskUptime(r.FormatLog(LogFrame{Args: g.Args, Start: 3.14, End: 3.15})),
				"want.exit":            string(rune('0'+r.ExitCode)) + "\n",
			}
			for name, content := range got {
				path := filepath.Join(dir, name)
				if golden.Update() {
					if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
						t.Fatal(err)
					}
					continue
				}
				want, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("%v (run with -update)", err)
				}
				if diff := cmp.Diff(string(want), content); diff != "" {
					t.Errorf("%s (-want +got):\n%s", name, diff)
				}
			}
		})
	}
}
