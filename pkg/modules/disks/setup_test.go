package disks

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
	"github.com/cloudroot/cloudroot/pkg/disk"
	"github.com/cloudroot/cloudroot/pkg/modules"
)

func TestDiskSetupModule(t *testing.T) {
	img := filepath.Join(t.TempDir(), "data.img")
	if err := os.WriteFile(img, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(img, 64<<20); err != nil {
		t.Fatal(err)
	}
	f := newDiskFixture(t, modules.Config{
		"device_aliases": map[string]any{"data": img},
		"disk_setup": map[string]any{
			"data":     map[string]any{"table_type": "gpt", "layout": true},
			"/dev/vda": map[string]any{"table_type": "gpt", "layout": true, "overwrite": true},
		},
		"fs_setup": []any{
			map[string]any{"label": "d", "filesystem": "ext4", "device": "data", "partition": "auto"},
			map[string]any{"label": "r", "filesystem": "ext4", "device": "/dev/vda", "partition": 1, "overwrite": true},
		},
	}, "ext4")
	devs, _ := f.env.Devices()
	f.env.Devices = func() ([]bootenv.Device, error) {
		return append(devs, bootenv.Device{Name: "data.img", Path: img}), nil
	}
	// /dev/vda is the mounted root: a memory stand-in that must not be written.
	vda := make([]byte, 8<<20)
	if err := disk.WriteTable(&memDisk{b: vda, writable: true}, disk.NewTable{Type: "gpt", Partitions: []disk.NewPartition{{Start: 2048, Size: 4096}}}, nil); err != nil {
		t.Fatal(err)
	}
	f.env.OpenDisk = func(p string, w bool) (disk.Device, error) {
		if p == "/dev/vda" {
			return &memDisk{b: vda}, nil
		}
		return disk.Open(p, w)
	}
	if err := NewDiskSetup(f.env).Run(context.Background(), f.c); err != nil {
		t.Fatalf("%v\n%s", err, f.log)
	}
	if diff := cmp.Diff([][]string{{"mkfs.ext4", "-L", "d", img + "1"}}, f.run.calls); diff != "" {
		t.Errorf("commands (-want +got):\n%s\n%s", diff, f.log)
	}
	info, err := disk.ProbeDevice(img)
	if err != nil || info.PTType != "gpt" || len(info.Partitions) != 1 || info.Partitions[0].Start != 2048 {
		t.Errorf("image after disk_setup: %+v %v", info, err)
	}
}

type memDisk struct {
	b        []byte
	writable bool
}

func (m *memDisk) Size() int64 { return int64(len(m.b)) }
func (m *memDisk) ReadAt(p []byte, off int64) (int, error) {
	return copy(p, m.b[off:]), nil
}
func (m *memDisk) WriteAt(p []byte, off int64) (int, error) {
	if !m.writable {
		panic("the in-use disk was written")
	}
	return copy(m.b[off:], p), nil
}
