package disks

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
	"github.com/cloudroot/cloudroot/pkg/modules"
)

// TestDiskSetupWarnings: a disk holding a filesystem is kept (overwrite is
// false) without a warning, as cloud-init does; fs_setup entries naming its
// missing partitions are warnings (cloud-init's mkfs fails and it logs a
// WARNING), not errors; nothing runs.
func TestDiskSetupWarnings(t *testing.T) {
	img := filepath.Join(t.TempDir(), "data.img")
	f := newDiskFixture(t, modules.Config{
		"device_aliases": map[string]any{"data": img},
		"disk_setup": map[string]any{
			"data": map[string]any{"table_type": "gpt", "layout": []any{[]any{70, 83}, []any{30, 82}}},
		},
		"fs_setup": []any{
			map[string]any{"label": "d", "filesystem": "ext4", "device": "data", "partition": 1},
			map[string]any{"label": "s", "filesystem": "swap", "device": "data", "partition": 2},
		},
	}, "ext4")
	// A swap signature on the whole disk stands for the data.
	sb := make([]byte, 4096)
	copy(sb[4096-10:], "SWAPSPACE2")
	sb[1024] = 1 // version 1
	if err := os.WriteFile(img, sb, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(img, 16<<20); err != nil {
		t.Fatal(err)
	}
	if fs, err := bootenv.Probe(mustOpen(t, img), 16<<20); err != nil || fs.Type != "swap" {
		t.Fatalf("fixture: %+v %v", fs, err)
	}
	devs, _ := f.env.Devices()
	f.env.Devices = func() ([]bootenv.Device, error) {
		return append(devs, bootenv.Device{Name: "data.img", Path: img}), nil
	}
	var warned []string
	f.c.Warn = func(msg string) { warned = append(warned, msg) }
	if err := NewDiskSetup(f.env).Run(context.Background(), f.c); err != nil {
		t.Fatalf("%v\n%s", err, f.log)
	}
	if len(f.run.calls) != 0 {
		t.Errorf("commands ran: %q", f.run.calls)
	}
	if len(warned) != 2 || !strings.Contains(warned[0], "fs_setup[0]") || !strings.Contains(warned[0], "no partition 1") ||
		!strings.Contains(warned[1], "fs_setup[1]") || !strings.Contains(warned[1], "no partition 2") {
		t.Errorf("warnings = %q, want one for each fs_setup entry (no partition 1, 2)\n%s", warned, f.log)
	}
}

func mustOpen(t *testing.T, p string) *os.File {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}
