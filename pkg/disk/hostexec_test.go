package disk

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestOffsetArgv(t *testing.T) {
	const img = "/i/disk.img"
	for _, tc := range []struct {
		name string
		argv []string
		off  int64
		want []string
	}{
		{"ext4", []string{"mkfs.ext4", "-L", "d", img + "1"}, 1 << 20,
			[]string{"mkfs.ext4", "-L", "d", "-E", "offset=1048576", img, "65536k"}},
		{"ext4 with -E", []string{"mkfs.ext4", "-E", "lazy_itable_init=0", img + "1"}, 1 << 20,
			[]string{"mkfs.ext4", "-E", "lazy_itable_init=0,offset=1048576", img, "65536k"}},
		{"ext3 with -Efoo", []string{"mkfs.ext3", "-Enodiscard", "-F", img + "1"}, 2 << 20,
			[]string{"mkfs.ext3", "-Enodiscard,offset=2097152", "-F", img, "65536k"}},
		{"vfat", []string{"mkfs.vfat", "-n", "EFI", img + "1"}, 1 << 20, nil},
		{"xfs", []string{"mkfs.xfs", "-L", "x", img + "1"}, 1 << 20, nil},
		{"swap", []string{"mkswap", img + "1"}, 1 << 20, nil},
		{"cmd", []string{"sh", "-c", "mkfs.ext4 " + img + "1"}, 1 << 20, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := OffsetArgv(Step{Argv: tc.argv, Device: img + "1", Disk: img, Offset: tc.off, Length: 64 << 20})
			if ok != (tc.want != nil) {
				t.Fatalf("ok = %v", ok)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("argv (-want +got):\n%s", diff)
			}
		})
	}
}

// TestHostExecutorImage partitions an image file and makes a filesystem
// on each partition with the host's tools, without root or a loop
// device; the image is then probed: every partition has its filesystem
// and label, the table is intact, and a second plan does nothing.
func TestHostExecutorImage(t *testing.T) {
	needTools(t, "mkfs.ext4", "mkfs.vfat", "mkswap")
	type fsCase struct {
		fs, label, typ string
		percent        int
	}
	cases := []fsCase{
		{"ext4", "data", "8300", 10},
		{"vfat", "EFI", "ef00", 10},
		{"swap", "swp", "8200", 10},
	}
	// Tools that can't write at an offset go through a scratch file.
	if _, err := exec.LookPath("mkfs.xfs"); err == nil {
		cases = append(cases, fsCase{"xfs", "logs", "8300", 35}) // xfs wants >= 300 MB
	}
	if _, err := exec.LookPath("mkfs.btrfs"); err == nil {
		cases = append(cases, fsCase{"btrfs", "vol", "8300", 20})
	}
	img := image(t, 1<<30)
	var layout, fsSetup []any
	for i, c := range cases {
		layout = append(layout, []any{c.percent, c.typ})
		fsSetup = append(fsSetup, map[string]any{"label": c.label, "filesystem": c.fs, "device": "data", "partition": i + 1})
	}
	cfg, warns := ParseSetup(map[string]any{
		"device_aliases": map[string]any{"data": img},
		"disk_setup":     map[string]any{"data": map[string]any{"table_type": "gpt", "layout": layout}},
		"fs_setup":       fsSetup,
	}, DeviceEnv{})
	if len(warns) > 0 {
		t.Fatal(warns)
	}
	info, err := ProbeDevice(img)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := PlanSetup(cfg, []DeviceInfo{info})
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := Apply(context.Background(), plan, HostExecutor{Out: &out}, nil); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	checkGPT(t, img)
	info, err = ProbeDevice(img)
	if err != nil {
		t.Fatal(err)
	}
	if len(info.Partitions) != len(cases) {
		t.Fatalf("partitions after apply: %+v", info.Partitions)
	}
	for i, c := range cases {
		p := info.Partitions[i]
		if p.FSType != c.fs || p.Label != c.label {
			t.Errorf("partition %d: %s %q, want %s %q", i+1, p.FSType, p.Label, c.fs, c.label)
		}
	}
	if _, err := exec.LookPath("e2fsck"); err == nil {
		part := extract(t, img, info.Partitions[0])
		run(t, "", "e2fsck", "-fn", part)
	}
	if _, err := exec.LookPath("fsck.vfat"); err == nil {
		run(t, "", "fsck.vfat", "-n", extract(t, img, info.Partitions[1]))
	}
	// No scratch file is left behind.
	if m, _ := filepath.Glob(filepath.Join(filepath.Dir(img), ".*mkfs*")); len(m) > 0 {
		t.Errorf("left behind: %v", m)
	}
	plan, err = PlanSetup(cfg, []DeviceInfo{info})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range plan.Steps {
		if s.Action != "skip" {
			t.Errorf("second plan wants to %s %s", s.Action, s.Device)
		}
	}
}

// TestHostExecutorScratchKeepsNeighbours: a filesystem made through the
// scratch file touches nothing outside its partition, and what was in
// the partition before reads as zeros where the new filesystem has holes.
func TestHostExecutorScratchKeepsNeighbours(t *testing.T) {
	img := image(t, 8<<20)
	f, err := os.OpenFile(img, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	fill := []byte(strings.Repeat("x", 8<<20))
	if _, err := f.WriteAt(fill, 0); err != nil {
		t.Fatal(err)
	}
	f.Close()
	const off, n = 2 << 20, 4 << 20
	s := Step{Action: "mkfs", Device: img + "1", Disk: img, Offset: off, Length: n,
		Argv: []string{"sh", "-c", "printf hello | dd of=" + img + "1 bs=1 seek=4096 conv=notrunc status=none"}}
	if err := (HostExecutor{}).Format(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	b := readAll(t, img)
	for i, c := range b {
		want := byte('x')
		switch {
		case i >= off+4096 && i < off+4096+5:
			want = "hello"[i-off-4096]
		case i >= off && i < off+n:
			want = 0
		}
		if c != want {
			t.Fatalf("byte %d = %q, want %q", i, c, want)
		}
	}
}

// TestDeviceWriterLoopNoPartScan (root): a loop device attached without
// partition scanning gets its new partitions' nodes.
func TestDeviceWriterLoopNoPartScan(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to attach a loop device")
	}
	if _, err := os.Stat("/dev/loop-control"); err != nil {
		t.Skip("no /dev/loop-control")
	}
	needTools(t, "losetup")
	img := image(t, 64<<20)
	out, err := exec.Command("losetup", "-f", "--show", img).Output()
	if err != nil {
		t.Skipf("losetup: %v", err)
	}
	loop := strings.TrimSpace(string(out))
	t.Cleanup(func() { exec.Command("losetup", "-d", loop).Run() })
	info, err := ProbeDevice(loop)
	if err != nil {
		t.Fatal(err)
	}
	tab, err := LayoutTable("gpt", info.Size, info.sectorSize(), []LayoutPart{{Percent: 50}, {Percent: 50}})
	if err != nil {
		t.Fatal(err)
	}
	if err := (DeviceWriter{}).WriteTable(context.Background(), loop, tab); err != nil {
		t.Fatal(err)
	}
	for i := range tab.Partitions {
		if fi, err := os.Stat(PartitionPath(loop, i+1)); err != nil || fi.Mode()&os.ModeDevice == 0 {
			t.Errorf("partition node %d: %v", i+1, err)
		}
	}
}

// extract copies a partition of img into its own file.
func extract(t *testing.T, img string, p PartInfo) string {
	t.Helper()
	in, err := os.Open(img)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out := filepath.Join(t.TempDir(), "part")
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := io.Copy(f, io.NewSectionReader(in, p.Start*512, p.Size*512)); err != nil {
		t.Fatal(err)
	}
	return out
}
