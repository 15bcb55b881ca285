package disk

import "testing"

// TestPlanSetupWarn: skips cloud-init reports as warnings (it would try and
// fail) carry Warn; deliberate skips (data kept, already formatted) do not.
func TestPlanSetupWarn(t *testing.T) {
	cfg, warns := ParseSetup(map[string]any{
		"disk_setup": map[string]any{
			"/dev/vdb": map[string]any{"table_type": "gpt", "layout": []any{[]any{70, 83}, []any{30, 82}}, "overwrite": false},
			"/dev/vdz": map[string]any{"table_type": "gpt", "layout": true},
		},
		"fs_setup": []any{
			map[string]any{"label": "data", "filesystem": "ext4", "device": "/dev/vdb", "partition": 1},
			map[string]any{"label": "keep", "filesystem": "ext4", "device": "/dev/vdc", "partition": "auto"},
			map[string]any{"label": "x", "filesystem": "xfs", "device": "/dev/vdc", "partition": "none"},
			map[string]any{"label": "y", "filesystem": "ext4", "device": "/dev/vdz", "partition": 1},
		},
	}, DeviceEnv{})
	if len(warns) > 0 {
		t.Fatalf("ParseSetup warnings: %q", warns)
	}
	devs := []DeviceInfo{
		// An ext4 filesystem on the whole disk, no table.
		{Path: "/dev/vdb", Size: 128 << 20, SectorSize: 512, FSType: "ext4", Label: "old"},
		{Path: "/dev/vdc", Size: 128 << 20, SectorSize: 512, FSType: "ext4", Label: "keep"},
	}
	plan, err := PlanSetup(cfg, devs)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{
		"disk_setup./dev/vdb": false, // data kept: overwrite is false (debug in cloud-init)
		"disk_setup./dev/vdz": true,  // device not found
		"fs_setup[0]":         true,  // no partition 1: mkfs would fail
		"fs_setup[1]":         false, // already formatted
		"fs_setup[2]":         true,  // another filesystem, no overwrite
		"fs_setup[3]":         true,  // device not found
	}
	if len(plan.Steps) != len(want) {
		t.Fatalf("plan has %d steps, want %d:\n%s", len(plan.Steps), len(want), plan)
	}
	for _, s := range plan.Steps {
		w, ok := want[s.Config]
		if !ok || s.Action != "skip" || s.Warn != w {
			t.Errorf("%s: %s %s (%s) warn=%v, want a skip with warn=%v", s.Config, s.Action, s.Device, s.Reason, s.Warn, w)
		}
	}
}
