package disk

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/cloudroot/cloudroot/pkg/internal/golden"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gopkg.in/yaml.v3"
)

type setupCase struct {
	Meta    map[string]string `json:"meta"`
	Devices []DeviceInfo      `json:"devices"`
}

func loadSetupCase(t *testing.T, dir string) (SetupConfig, []DeviceInfo) {
	t.Helper()
	var cfg map[string]any
	b, err := os.ReadFile(filepath.Join(dir, "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	var sc setupCase
	b, err = os.ReadFile(filepath.Join(dir, "devices.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &sc); err != nil {
		t.Fatal(err)
	}
	cfgs, warns := ParseSetup(cfg, DeviceEnv{Meta: func(n string) string { return sc.Meta[n] }})
	if len(warns) > 0 {
		t.Fatalf("warnings: %q", warns)
	}
	return cfgs, sc.Devices
}

// TestPlanSetupGolden: testdata/setup/<case>/{config.yaml,devices.json}
// → want (Plan.String()); -update rewrites want.
func TestPlanSetupGolden(t *testing.T) {
	dirs, _ := filepath.Glob("testdata/setup/*")
	if len(dirs) == 0 {
		t.Fatal("no cases")
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			cfg, devs := loadSetupCase(t, dir)
			plan, err := PlanSetup(cfg, devs)
			if err != nil {
				t.Fatal(err)
			}
			got := plan.String()
			wantPath := filepath.Join(dir, "want")
			if golden.Update() {
				if err := os.WriteFile(wantPath, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(wantPath)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLayoutTableErrors(t *testing.T) {
	for name, tc := range map[string]struct {
		typ    string
		layout []LayoutPart
	}{
		"over 100%":     {"mbr", []LayoutPart{{Percent: 60}, {Percent: 50}}},
		"five on mbr":   {"mbr", []LayoutPart{{Percent: 10}, {Percent: 10}, {Percent: 10}, {Percent: 10}, {Percent: 10}}},
		"zero":          {"gpt", []LayoutPart{{Percent: 0}}},
		"bad table":     {"bsd", []LayoutPart{{Percent: 100}}},
		"too small 1MB": {"gpt", []LayoutPart{{Percent: 1}, {Percent: 99}}},
	} {
		if _, err := LayoutTable(tc.typ, 64*mib, 512, tc.layout); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	cfg := SetupConfig{Disks: map[string]DiskSpec{"/dev/sdb": {TableType: "mbr", Layout: []LayoutPart{{Percent: 70}, {Percent: 70}}}}}
	if _, err := PlanSetup(cfg, []DeviceInfo{{Path: "/dev/sdb", Size: 1 << 30}}); err == nil || !strings.Contains(err.Error(), "/dev/sdb") {
		t.Errorf("plan error %v", err)
	}
}

func TestParseSetupWarnings(t *testing.T) {
	_, warns := ParseSetup(map[string]any{
		"disk_setup": map[string]any{"/dev/sdb": map[string]any{"table_type": "bsd"}, "/dev/sdc": "x"},
		"fs_setup":   []any{"nope", map[string]any{"device": "/dev/sdb", "extra_opts": 3}},
	}, DeviceEnv{})
	if len(warns) != 4 {
		t.Errorf("warnings %q", warns)
	}
}

// imageExecutor partitions image files and records mkfs commands.
type imageExecutor struct {
	ran  [][]string
	fail error
}

func (e *imageExecutor) WriteTable(ctx context.Context, path string, t NewTable) error {
	if e.fail != nil {
		return e.fail
	}
	d, err := Open(path, true)
	if err != nil {
		return err
	}
	defer d.Close()
	return WriteTable(d, t, nil)
}

func (e *imageExecutor) Run(ctx context.Context, argv []string) error {
	e.ran = append(e.ran, argv)
	return nil
}

// TestApplySetupImage plans and applies a layout on an image file, checks
// the table with sfdisk and re-plans: the second plan does nothing.
func TestApplySetupImage(t *testing.T) {
	needTools(t, "sfdisk")
	img := image(t, 256*mib)
	cfg, _ := ParseSetup(map[string]any{
		"disk_setup": map[string]any{"data": map[string]any{"table_type": "gpt", "layout": []any{25, []any{25, 8200}, 50}}},
		"fs_setup":   []any{map[string]any{"label": "d", "filesystem": "ext4", "device": "data", "partition": 1}},
	}, DeviceEnv{Aliases: map[string]string{"data": img}})
	cfg.Names.Aliases = map[string]string{"data": img}
	info, err := ProbeDevice(img)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := PlanSetup(cfg, []DeviceInfo{info})
	if err != nil {
		t.Fatal(err)
	}
	ex := &imageExecutor{}
	if err := Apply(context.Background(), plan, ex, nil); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([][]string{{"mkfs.ext4", "-L", "d", img + "1"}}, ex.ran); diff != "" {
		t.Errorf("mkfs (-want +got):\n%s", diff)
	}
	dump := sfdiskDump(t, img)
	for _, w := range []string{
		"start=        2048, size=      131072, type=0FC63DAF-8483-4772-8E79-3D69D8477DE4",
		"start=      133120, size=      131072, type=0657FD6D-A4AB-43C4-84E5-0933C84B4F4F",
		"start=      264192, size=      260063, type=0FC63DAF",
	} {
		if !strings.Contains(dump, w) {
			t.Errorf("sfdisk -d lacks %q:\n%s", w, dump)
		}
	}
	checkGPT(t, img)
	info, _ = ProbeDevice(img)
	cfg.Filesystems = nil
	plan, _ = PlanSetup(cfg, []DeviceInfo{info})
	if len(plan.Steps) != 1 || plan.Steps[0].Reason != "partition layout already matches" {
		t.Errorf("second plan:\n%s", plan)
	}
	// A failed partitioning skips the filesystems on that disk.
	ex = &imageExecutor{fail: errors.New("disk on fire")}
	plan = Plan{Steps: []Step{
		{Action: "partition", Device: "/dev/sdx", Table: &NewTable{Type: "gpt", Partitions: []NewPartition{{Start: 2048, Size: 2048}}}},
		{Action: "mkfs", Device: "/dev/sdx1", Argv: []string{"mkfs.ext4", "/dev/sdx1"}},
	}}
	if err := Apply(context.Background(), plan, ex, nil); err == nil || len(ex.ran) != 0 {
		t.Errorf("err %v, ran %v", err, ex.ran)
	}
}
