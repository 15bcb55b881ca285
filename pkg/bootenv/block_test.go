package bootenv

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
)

// fakeBlock is one entry of a fake /sys/class/block.
type fakeBlock struct {
	name    string
	files   map[string]string // sysfs attributes
	fixture string            // testdata dir whose image becomes <dev>/<name>; "" = no node
}

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// writeImage materializes a fixture as a sparse file of its full size.
func writeImage(t *testing.T, path, fixtureDir string) {
	t.Helper()
	fx, img := readFixture(t, fixtureDir)
	sparseFile(t, path, fx.Size)
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(img.data, 0); err != nil {
		t.Fatal(err)
	}
}

func addBlock(t *testing.T, env Env, b fakeBlock) {
	t.Helper()
	for name, body := range b.files {
		writeFile(t, filepath.Join(env.SysRoot, "class", "block", b.name, name), body+"\n")
	}
	if b.fixture != "" {
		writeImage(t, filepath.Join(env.DevRoot, b.name), b.fixture)
	}
}

func fakeEnv(t *testing.T) Env {
	t.Helper()
	root := t.TempDir()
	env := Env{SysRoot: filepath.Join(root, "sys"), DevRoot: filepath.Join(root, "dev")}
	if err := os.MkdirAll(filepath.Join(env.SysRoot, "class", "block"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(env.DevRoot, 0o755); err != nil {
		t.Fatal(err)
	}
	return env
}

func td(parts ...string) string { return filepath.Join(append([]string{"testdata"}, parts...)...) }

// machine builds a fake machine: a GPT virtio disk with an ext4 root, a
// FAT12 seed disk, a seed CD, an empty CD drive, an NVMe disk with an MBR
// and a FAT16 partition, devices that must be skipped, and a disk whose
// partition is found through sysfs symlinks only.
func machine(t *testing.T) Env {
	t.Helper()
	env := fakeEnv(t)
	for _, b := range []fakeBlock{
		{"vda", map[string]string{"dev": "253:0", "size": "32768", "removable": "0", "ro": "0", "queue/logical_block_size": "512"}, td("table", "gpt")},
		{"vda1", map[string]string{"dev": "253:1", "size": "8192", "partition": "1", "ro": "0"}, td("probe", "ext4-label")},
		{"vda2", map[string]string{"dev": "253:2", "size": "4096", "partition": "2"}, ""},
		{"vdb", map[string]string{"dev": "253:16", "size": "4096", "removable": "0", "ro": "1"}, td("probe", "fat12")},
		{"sr0", map[string]string{"dev": "11:0", "size": "732", "removable": "1", "ro": "0"}, td("probe", "iso-joliet")},
		{"sr1", map[string]string{"dev": "11:1", "size": "0", "removable": "1"}, ""},
		{"nvme0n1", map[string]string{"dev": "259:0", "size": "32768", "removable": "1"}, td("table", "dos")},
		{"nvme0n1p1", map[string]string{"dev": "259:1", "size": "4096", "partition": "1"}, td("probe", "fat16")},
		{"ram0", map[string]string{"dev": "1:0", "size": "8192"}, ""},
		{"zram0", map[string]string{"dev": "252:0", "size": "8192"}, ""},
		{"loop0", map[string]string{"dev": "7:0", "size": "0"}, ""},
	} {
		addBlock(t, env, b)
	}
	// Real sysfs layout: class/block entries are symlinks into devices/,
	// and a partition's directory sits inside its disk's.
	disk := filepath.Join(env.SysRoot, "devices", "virtual", "block", "vdc")
	writeFile(t, filepath.Join(disk, "dev"), "254:0\n")
	writeFile(t, filepath.Join(disk, "size"), "2048\n")
	writeFile(t, filepath.Join(disk, "odd7", "dev"), "254:7\n")
	writeFile(t, filepath.Join(disk, "odd7", "size"), "1024\n")
	writeFile(t, filepath.Join(disk, "odd7", "partition"), "7\n")
	for name, target := range map[string]string{
		"vdc":  "../../devices/virtual/block/vdc",
		"odd7": "../../devices/virtual/block/vdc/odd7",
	} {
		if err := os.Symlink(target, filepath.Join(env.SysRoot, "class", "block", name)); err != nil {
			t.Fatal(err)
		}
	}
	return env
}

func TestList(t *testing.T) {
	env := machine(t)
	devs, err := env.List()
	if err != nil {
		t.Fatal(err)
	}
	gpt, _ := readFixture(t, td("table", "gpt"))
	dos, _ := readFixture(t, td("table", "dos"))
	fsOf := func(name string) FS {
		fx, _ := readFixture(t, td("probe", name))
		return *fx.FS
	}
	p1, _ := gpt.Table.Partition(1)
	p2, _ := gpt.Table.Partition(2)
	dp1, _ := dos.Table.Partition(1)
	dev := func(name string) string { return filepath.Join(env.DevRoot, name) }
	const hasErr = "<error>"
	want := []Device{
		{Name: "nvme0n1", Path: dev("nvme0n1"), Major: 259, Minor: 0, Size: 32768 * 512, Removable: true,
			PTType: "dos", PTUUID: dos.Table.UUID},
		{Name: "nvme0n1p1", Path: dev("nvme0n1p1"), Major: 259, Minor: 1, Size: 4096 * 512, Partition: true, Parent: "nvme0n1", PartNumber: 1, Removable: true,
			FS: fsOf("fat16"), PartUUID: dp1.UUID},
		{Name: "odd7", Path: dev("odd7"), Major: 254, Minor: 7, Size: 1024 * 512, Partition: true, Parent: "vdc", PartNumber: 7, Err: hasErr},
		{Name: "sr0", Path: dev("sr0"), Major: 11, Minor: 0, Size: 732 * 512, Removable: true, FS: fsOf("iso-joliet")},
		{Name: "sr1", Path: dev("sr1"), Major: 11, Minor: 1, Removable: true, Err: hasErr},
		{Name: "vda", Path: dev("vda"), Major: 253, Minor: 0, Size: 32768 * 512, PTType: "gpt", PTUUID: gpt.Table.UUID},
		{Name: "vda1", Path: dev("vda1"), Major: 253, Minor: 1, Size: 8192 * 512, Partition: true, Parent: "vda", PartNumber: 1,
			FS: fsOf("ext4-label"), PartUUID: p1.UUID, PartLabel: "root"},
		{Name: "vda2", Path: dev("vda2"), Major: 253, Minor: 2, Size: 4096 * 512, Partition: true, Parent: "vda", PartNumber: 2,
			PartUUID: p2.UUID, PartLabel: p2.Name, Err: hasErr},
		{Name: "vdb", Path: dev("vdb"), Major: 253, Minor: 16, Size: 4096 * 512, ReadOnly: true, FS: fsOf("fat12")},
		{Name: "vdc", Path: dev("vdc"), Major: 254, Minor: 0, Size: 2048 * 512, Err: hasErr},
	}
	for i := range devs {
		if devs[i].Err != "" {
			if !strings.Contains(devs[i].Err, "no such file") {
				t.Errorf("%s: Err = %q, want the open error", devs[i].Name, devs[i].Err)
			}
			devs[i].Err = hasErr
		}
	}
	if diff := cmp.Diff(want, devs); diff != "" {
		t.Errorf("List (-want +got):\n%s", diff)
	}

	if _, err := (Env{SysRoot: filepath.Join(env.SysRoot, "nope"), DevRoot: env.DevRoot}).List(); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("List without sysfs: err = %v, want ErrNotExist", err)
	}
}

func TestFind(t *testing.T) {
	env := machine(t)
	devs, err := env.List()
	if err != nil {
		t.Fatal(err)
	}
	gpt, _ := readFixture(t, td("table", "gpt"))
	p1, _ := gpt.Table.Partition(1)
	rootFS, _ := readFixture(t, td("probe", "ext4-label"))
	for _, tc := range []struct {
		root string // root= value; or a spec built below
		spec *RootSpec
		want string // device name; "" = not found
	}{
		{root: "LABEL=cloudroot-root", want: "vda1"},
		{root: "LABEL=CLOUDROOT-ROOT", want: ""},
		{root: "UUID=" + strings.ToUpper(rootFS.FS.UUID), want: "vda1"},
		{root: "UUID=" + fsOfDev(devs, "vdb").UUID, want: "vdb"},
		{root: "PARTUUID=" + strings.ToUpper(p1.UUID), want: "vda1"},
		{root: "PARTUUID=5eed1234-01", want: "nvme0n1p1"},
		{root: "PARTLABEL=root", want: "vda1"},
		{root: "/dev/vda1", want: "vda1"},
		{root: "vdb", want: "vdb"},
		{root: "/dev/disk/by-label/cloudroot-root", want: "vda1"},
		{root: "/dev/disk/by-partuuid/" + p1.UUID, want: "vda1"},
		{root: "fd01", want: "vda1"},
		{root: "253:16", want: "vdb"},
		{root: "/dev/disk/by-id/virtio-root", want: ""},
		{root: "LABEL=missing", want: ""},
		{root: "0:0", want: ""},
		{spec: &RootSpec{Kind: ByPath, Value: "/dev/disk/by-uuid/" + rootFS.FS.UUID}, want: "vda1"},
		{spec: &RootSpec{Kind: ByPath, Value: filepath.Join(env.DevRoot, "vdb")}, want: "vdb"},
		{spec: &RootSpec{Kind: ByPath, Value: "/elsewhere/vdb"}, want: ""},
		{spec: &RootSpec{Kind: RootKind(99)}, want: ""},
	} {
		name := tc.root
		if tc.spec != nil {
			name = tc.spec.String()
		}
		t.Run(name, func(t *testing.T) {
			spec := tc.spec
			if spec == nil {
				s, err := ParseRoot(tc.root)
				if err != nil {
					t.Fatal(err)
				}
				spec = &s
			}
			d, ok := Find(devs, *spec)
			if ok != (tc.want != "") || d.Name != tc.want {
				t.Errorf("Find = %q, %v; want %q", d.Name, ok, tc.want)
			}
		})
	}
}

func fsOfDev(devs []Device, name string) FS {
	for _, d := range devs {
		if d.Name == name {
			return d.FS
		}
	}
	return FS{}
}

func TestFindLabel(t *testing.T) {
	env := machine(t)
	devs, err := env.List()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		labels []string
		want   string
	}{
		{[]string{"cidata", "CIDATA"}, "sr0"},
		{[]string{"CIDATA"}, "vdb"},
		{[]string{"SEED16"}, "nvme0n1p1"},
		{[]string{"cloudroot-root"}, ""}, // ext4: never a seed
		{[]string{"config-2"}, ""},
		{nil, ""},
	} {
		d, ok := FindLabel(devs, tc.labels...)
		if ok != (tc.want != "") || d.Name != tc.want {
			t.Errorf("FindLabel(%q) = %q, %v; want %q", tc.labels, d.Name, ok, tc.want)
		}
	}
}

func TestDeviceString(t *testing.T) {
	d := Device{Name: "vda1", Major: 253, Minor: 1, Size: 4096, FS: FS{Type: "ext4", Label: "root", UUID: "u"}, PartUUID: "p", PartLabel: "l", Err: "boom"}
	want := `vda1 (253:1, 4096 bytes, ext4 LABEL="root" UUID=u PARTUUID=p PARTLABEL="l", error: boom)`
	if got := d.String(); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func names(devs []Device) []string {
	var out []string
	for _, d := range devs {
		out = append(out, d.Name)
	}
	return out
}

func TestSettle(t *testing.T) {
	t.Run("settles after a late device", func(t *testing.T) {
		env := fakeEnv(t)
		addBlock(t, env, fakeBlock{"vda", map[string]string{"dev": "253:0", "size": "2048"}, ""})
		synctest.Test(t, func(t *testing.T) {
			go func() {
				time.Sleep(110 * time.Millisecond) // not on a scan instant
				addBlock(t, env, fakeBlock{"sr0", map[string]string{"dev": "11:0", "size": "732"}, td("probe", "iso-joliet")})
			}()
			start := time.Now()
			devs, err := env.Settle(t.Context(), 200*time.Millisecond, 5*time.Second)
			if err != nil {
				t.Fatalf("Settle: %v", err)
			}
			if diff := cmp.Diff([]string{"sr0", "vda"}, names(devs)); diff != "" {
				t.Errorf("devices (-want +got):\n%s", diff)
			}
			if _, ok := FindLabel(devs, "cidata"); !ok {
				t.Error("the late seed was not probed")
			}
			// Fake time: the late device restarted the quiet period.
			if el := time.Since(start); el < 310*time.Millisecond {
				t.Errorf("settled after %v of fake time, before the quiet period following the change", el)
			}
		})
	})
	t.Run("never settles", func(t *testing.T) {
		env := fakeEnv(t)
		addBlock(t, env, fakeBlock{"sr0", map[string]string{"dev": "11:0", "size": "0"}, ""})
		sizeFile := filepath.Join(env.SysRoot, "class", "block", "sr0", "size")
		synctest.Test(t, func(t *testing.T) {
			stop := make(chan struct{})
			done := make(chan struct{})
			go func() {
				// Between Settle's scans (every 20ms from 0), never at the
				// same instant: each scan sees a new size.
				defer close(done)
				time.Sleep(5 * time.Millisecond)
				for i := 1; ; i++ {
					tmp := sizeFile + ".tmp"
					writeFile(t, tmp, strconv.Itoa(i))
					if err := os.Rename(tmp, sizeFile); err != nil {
						t.Error(err)
						return
					}
					select {
					case <-stop:
						return
					case <-time.After(SettlePoll):
					}
				}
			}()
			devs, err := env.Settle(t.Context(), 100*time.Millisecond, time.Second)
			close(stop)
			<-done
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Settle err = %v, want DeadlineExceeded", err)
			}
			if diff := cmp.Diff([]string{"sr0"}, names(devs)); diff != "" {
				t.Errorf("last list (-want +got):\n%s", diff)
			}
		})
	})
	t.Run("no sysfs yet", func(t *testing.T) {
		env := Env{SysRoot: filepath.Join(t.TempDir(), "sys"), DevRoot: t.TempDir()}
		synctest.Test(t, func(t *testing.T) {
			_, err := env.Settle(t.Context(), 50*time.Millisecond, 200*time.Millisecond)
			// Absent stays absent: settled, and the final List reports why.
			if err == nil || !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("err = %v, want ErrNotExist", err)
			}
		})
	})
}

func TestWaitFor(t *testing.T) {
	seed := func(devs []Device) bool { _, ok := FindLabel(devs, "cidata", "CIDATA"); return ok }
	t.Run("found", func(t *testing.T) {
		env := fakeEnv(t)
		synctest.Test(t, func(t *testing.T) {
			go func() {
				time.Sleep(250 * time.Millisecond)
				addBlock(t, env, fakeBlock{"vdb", map[string]string{"dev": "253:16", "size": "4096"}, td("probe", "fat12")})
			}()
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
			defer cancel()
			devs, err := env.WaitFor(ctx, seed, 100*time.Millisecond)
			if err != nil {
				t.Fatalf("WaitFor: %v", err)
			}
			if d, _ := FindLabel(devs, "CIDATA"); d.Name != "vdb" {
				t.Errorf("seed = %q", d.Name)
			}
		})
	})
	t.Run("timeout", func(t *testing.T) {
		env := machine(t)
		synctest.Test(t, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), time.Second)
			defer cancel()
			never := func([]Device) bool { return false }
			devs, err := env.WaitFor(ctx, never, 0)
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("err = %v, want DeadlineExceeded", err)
			}
			if len(devs) == 0 {
				t.Error("no last list returned")
			}
		})
	})
	t.Run("sysfs missing", func(t *testing.T) {
		env := Env{SysRoot: filepath.Join(t.TempDir(), "sys")}
		synctest.Test(t, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
			defer cancel()
			devs, err := env.WaitFor(ctx, seed, 20*time.Millisecond)
			if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, os.ErrNotExist) || devs != nil {
				t.Fatalf("WaitFor = %v, %v; want nil and both errors", devs, err)
			}
		})
	})
}

func TestMatchesMapper(t *testing.T) {
	d := Device{Name: "dm-0", Path: "/dev/dm-0", DMName: "vg0-root"}
	for v, want := range map[string]bool{"/dev/mapper/vg0-root": true, "/dev/mapper/vg0-swap": false, "/dev/dm-0": true} {
		if got := (RootSpec{Kind: ByPath, Value: v}).Matches(d); got != want {
			t.Errorf("%s matches %+v = %v, want %v", v, d, got, want)
		}
	}
}
