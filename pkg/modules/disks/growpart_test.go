package disks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
	"github.com/cloudroot/cloudroot/pkg/disk"
	"github.com/cloudroot/cloudroot/pkg/modules"
	"github.com/cloudroot/cloudroot/pkg/target"
)

// diskRunner records argv.
type diskRunner struct {
	mu    sync.Mutex
	calls [][]string
	fail  error
}

func (r *diskRunner) Run(ctx context.Context, root string, cmd target.Cmd) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, cmd.Argv)
	return r.fail
}

type diskFixture struct {
	c        *modules.Context
	run      *diskRunner
	env      DiskEnv
	grown    []string
	warnings []string
	log      *bytes.Buffer
}

// newDiskFixture makes a target on a temp dir, mounted (per a fake
// mountinfo) from /dev/vda1 with fstype, and a fake device list.
func newDiskFixture(t *testing.T, cfg modules.Config, fstype string) *diskFixture {
	t.Helper()
	dir := t.TempDir()
	rootDir := filepath.Join(dir, "sysroot")
	if err := os.MkdirAll(rootDir, 0o755); err != nil {
		t.Fatal(err)
	}
	mi := filepath.Join(dir, "mountinfo")
	lines := fmt.Sprintf("22 1 0:20 / /proc rw - proc proc rw\n36 1 253:1 / %s rw,relatime - %s /dev/vda1 rw\n37 36 253:17 / %s/data rw - ext4 /dev/vdb1 rw\n",
		strings.ReplaceAll(rootDir, " ", `\040`), fstype, rootDir)
	if err := os.WriteFile(mi, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	f := &diskFixture{run: &diskRunner{}, log: &bytes.Buffer{}}
	root, err := target.New(rootDir, target.WithRunner(f.run))
	if err != nil {
		t.Fatal(err)
	}
	f.env = DiskEnv{
		MountInfo: mi,
		Devices: func() ([]bootenv.Device, error) {
			return []bootenv.Device{
				{Name: "vda", Path: "/dev/vda", Major: 253, Minor: 0},
				{Name: "vda1", Path: "/dev/vda1", Major: 253, Minor: 1, Partition: true, Parent: "vda", PartNumber: 1, FS: bootenv.FS{Type: "ext4"}},
				{Name: "vdb", Path: "/dev/vdb", Major: 253, Minor: 16},
				{Name: "vdb1", Path: "/dev/vdb1", Major: 253, Minor: 17, Partition: true, Parent: "vdb", PartNumber: 1},
				{Name: "vdc", Path: "/dev/vdc", Major: 253, Minor: 32, FS: bootenv.FS{Type: "ext4"}},
			}, nil
		},
		Grow: func(d string, part int, o disk.GrowOptions) (disk.Result, error) {
			f.grown = append(f.grown, fmt.Sprintf("%s %d", d, part))
			if d == "/dev/vdb" {
				return disk.Result{}, errors.New("boom")
			}
			return disk.Result{Table: "gpt", SectorSize: 512, Partition: part, OldStart: 2048, OldEnd: 10239, NewEnd: 20479, Changed: true}, nil
		},
		Background: func(fn func()) { fn() },
	}
	f.c = &modules.Context{
		Root:   root,
		Config: cfg,
		Log:    slog.New(slog.NewTextHandler(f.log, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Out:    io.Discard,
		Warn:   func(m string) { f.warnings = append(f.warnings, m) },
	}
	return f
}

func TestGrowpartModule(t *testing.T) {
	for _, tc := range []struct {
		name    string
		cfg     modules.Config
		files   []string
		want    []string
		nWarn   int
		wantErr bool
	}{
		{name: "default grows the root", cfg: modules.Config{}, want: []string{"/dev/vda 1"}},
		{name: "mode off", cfg: modules.Config{"growpart": map[string]any{"mode": "off"}}},
		{name: "mode false", cfg: modules.Config{"growpart": map[string]any{"mode": false}}},
		{name: "growroot-disabled", cfg: modules.Config{}, files: []string{GrowrootDisabled}},
		{name: "growroot-disabled ignored", cfg: modules.Config{"growpart": map[string]any{"ignore_growroot_disabled": true}},
			files: []string{GrowrootDisabled}, want: []string{"/dev/vda 1"}},
		{name: "devices", cfg: modules.Config{"growpart": map[string]any{"mode": "growpart", "devices": []any{"/", "/data", "/dev/vdc", "/dev/nope", "/nomount"}}},
			want: []string{"/dev/vda 1", "/dev/vdb 1"}, nWarn: 1},
		{name: "empty devices", cfg: modules.Config{"growpart": map[string]any{"devices": []any{}}}},
		{name: "gpart", cfg: modules.Config{"growpart": map[string]any{"mode": "gpart"}}, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newDiskFixture(t, tc.cfg, "ext4")
			for _, p := range tc.files {
				if err := f.c.Root.WriteFile(p, nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			err := NewGrowpart(f.env).Run(context.Background(), f.c)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v", err)
			}
			if diff := cmp.Diff(tc.want, f.grown); diff != "" {
				t.Errorf("grown (-want +got):\n%s\nlog:\n%s", diff, f.log)
			}
			if len(f.warnings) != tc.nWarn {
				t.Errorf("warnings %q, want %d", f.warnings, tc.nWarn)
			}
		})
	}
}

func TestGrowpartRootDevice(t *testing.T) {
	f := newDiskFixture(t, modules.Config{}, "ext4")
	// The root's mount is not in the table (an agent in a container, say):
	// an injected RootDevice answers for "/".
	f.env.MountInfo = filepath.Join(t.TempDir(), "mountinfo")
	if err := os.WriteFile(f.env.MountInfo, []byte("22 1 0:20 / /proc rw - proc proc rw\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := NewGrowpart(f.env).Run(context.Background(), f.c); err != nil || len(f.grown) != 0 {
		t.Fatalf("without RootDevice: err %v, grown %v", err, f.grown)
	}
	f.env.RootDevice = "/dev/vda1"
	if err := NewGrowpart(f.env).Run(context.Background(), f.c); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"/dev/vda 1"}, f.grown); diff != "" {
		t.Errorf("grown (-want +got):\n%s", diff)
	}
}

func TestResizefsModule(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cfg    modules.Config
		fstype string
		want   [][]string
	}{
		{name: "ext4", cfg: modules.Config{}, fstype: "ext4", want: [][]string{{"resize2fs", "/dev/vda1"}}},
		{name: "xfs", cfg: modules.Config{"resize_rootfs": true}, fstype: "xfs", want: [][]string{{"xfs_growfs", "/"}}},
		{name: "btrfs noblock", cfg: modules.Config{"resize_rootfs": "noblock"}, fstype: "btrfs", want: [][]string{{"btrfs", "filesystem", "resize", "max", "/"}}},
		{name: "disabled", cfg: modules.Config{"resize_rootfs": false}, fstype: "ext4"},
		{name: "unknown fs", cfg: modules.Config{}, fstype: "vfat"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newDiskFixture(t, tc.cfg, tc.fstype)
			if err := NewResizefs(f.env).Run(context.Background(), f.c); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, f.run.calls); diff != "" {
				t.Errorf("commands (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("failure", func(t *testing.T) {
		f := newDiskFixture(t, modules.Config{}, "ext4")
		f.run.fail = errors.New("resize2fs: no space")
		err := NewResizefs(f.env).Run(context.Background(), f.c)
		if err == nil || !strings.Contains(err.Error(), "/dev/vda1") {
			t.Errorf("err = %v, want one naming the device", err)
		}
	})
	t.Run("no root mount", func(t *testing.T) {
		f := newDiskFixture(t, modules.Config{}, "ext4")
		f.env.Devices = func() ([]bootenv.Device, error) { return nil, nil }
		if err := NewResizefs(f.env).Run(context.Background(), f.c); err != nil || len(f.run.calls) != 0 {
			t.Errorf("err %v, calls %v", err, f.run.calls)
		}
	})
}
