package disks

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
	"github.com/cloudroot/cloudroot/pkg/modules"
)

func TestMountsModule(t *testing.T) {
	f := newDiskFixture(t, modules.Config{
		"mounts":         []any{[]any{"ephemeral0", "/mnt", "auto", "defaults,noexec"}, []any{"vdc", "/srv/data"}},
		"swap":           map[string]any{"filename": "/var/swap", "size": "auto", "maxsize": "256M"},
		"device_aliases": map[string]any{"scratch": "/dev/vdc"},
	}, "ext4")
	f.c.Meta = map[string]any{"block-device-mapping": map[string]any{"ephemeral0": "vdb"}}
	f.env.MemTotal = func() (int64, error) { return 1 << 30, nil }
	f.env.FSAvail = func(string) (int64, error) { return 8 << 30, nil }
	if err := f.c.Root.WriteFile("/etc/fstab", []byte("LABEL=root / ext4 defaults 0 1\n/dev/old /old auto defaults,comment=cloudconfig 0 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := NewMounts(f.env).Run(context.Background(), f.c); err != nil {
		t.Fatal(err)
	}
	got, _ := f.c.Root.ReadFile("/etc/fstab")
	want := "LABEL=root / ext4 defaults 0 1\n" +
		"/dev/vdb1\t/mnt\tauto\tdefaults,noexec,comment=cloudconfig\t0\t2\n" +
		"/dev/vdc\t/srv/data\tauto\tdefaults,nofail,comment=cloudconfig\t0\t2\n" +
		"/var/swap\tnone\tswap\tsw,comment=cloudconfig\t0\t0\n"
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("fstab (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([][]string{{"fallocate", "-l", "256M", "/var/swap"}, {"mkswap", "/var/swap"}}, f.run.calls); diff != "" {
		t.Errorf("commands (-want +got):\n%s", diff)
	}
	for _, d := range []string{"/mnt", "/srv/data"} {
		if fi, err := f.c.Root.Stat(d); err != nil || !fi.IsDir() {
			t.Errorf("mount point %s: %v", d, err)
		}
	}
}

func TestMountsModuleNothingToDo(t *testing.T) {
	f := newDiskFixture(t, modules.Config{}, "ext4")
	f.env.Devices = func() ([]bootenv.Device, error) { return nil, nil }
	if err := NewMounts(f.env).Run(context.Background(), f.c); err != nil {
		t.Fatal(err)
	}
	if f.c.Root.Exists("/etc/fstab") {
		t.Error("fstab written with nothing to add")
	}
}
