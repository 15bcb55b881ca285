package cli

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloudroot/cloudroot/pkg/disk"
)

func diskEnv() (*Env, *bytes.Buffer, *bytes.Buffer) {
	var out, errb bytes.Buffer
	return &Env{Root: "/", Stdout: &out, Stderr: &errb, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}, &out, &errb
}

func sfdiskImage(t *testing.T, size int64, script string) string {
	t.Helper()
	if _, err := exec.LookPath("sfdisk"); err != nil {
		t.Skip("sfdisk not installed")
	}
	p := filepath.Join(t.TempDir(), "disk.img")
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(p, size); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sfdisk", "-q", p)
	cmd.Stdin = strings.NewReader(script)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("sfdisk: %v\n%s", err, out)
	}
	return p
}

func TestGrowpartCommand(t *testing.T) {
	p := sfdiskImage(t, 32<<20, "label: gpt\nstart=2048, size=8192\n")
	if err := os.Truncate(p, 64<<20); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		code int
		out  string
	}{
		{[]string{"--dry-run", p, "1"}, 0, "CHANGE: partition=1 start=2048 old: size=8192 end=10239 new: size=128991 end=131038\n"},
		{[]string{p, "1"}, 0, "CHANGED: partition=1 start=2048 old: size=8192 end=10239 new: size=128991 end=131038\n"},
		{[]string{"-N", p, "1"}, 1, "NOCHANGE: partition 1 is size 128991. it cannot be grown\n"},
		{[]string{p, "1"}, 1, "NOCHANGE: partition 1 is size 128991. it cannot be grown\n"},
		{[]string{p, "x"}, 2, "FAILED: partition-number must be a number\n"},
		{[]string{"--bogus", p, "1"}, 2, "FAILED: unknown option --bogus\n"},
		{[]string{p}, 2, ""},
	} {
		env, out, _ := diskEnv()
		code := growpartCommand().Run(context.Background(), env, tc.args)
		if code != tc.code || out.String() != tc.out {
			t.Errorf("growpart %q: exit %d, stdout %q; want %d, %q", tc.args, code, out.String(), tc.code, tc.out)
		}
	}
	env, out, _ := diskEnv()
	if code := growpartCommand().Run(context.Background(), env, []string{p, "2"}); code != 2 ||
		!strings.HasPrefix(out.String(), "FAILED: growing "+p+" partition 2: ") {
		t.Errorf("missing partition: exit %d, %q", code, out.String())
	}
}

func TestDiskCommand(t *testing.T) {
	dir := t.TempDir()
	img := filepath.Join(dir, "eph.img")
	if err := os.WriteFile(img, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(img, 64<<20); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "user-data")
	if err := os.WriteFile(cfg, []byte("#cloud-config\ndisk_setup:\n  ephemeral0: {table_type: gpt, layout: [50, [50, 82]]}\nfs_setup:\n  - {label: data, filesystem: ext4, device: ephemeral0.1}\n  - {label: swp, filesystem: swap, device: ephemeral0, partition: 2}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env, out, errb := diskEnv()
	code := diskCommand().Run(context.Background(), env, []string{"plan", "--config", cfg, "--alias", "ephemeral0=" + img, img})
	want := "partition " + img + " (disk_setup.ephemeral0)\n" +
		"    old: " + img + ": 67108864 bytes, empty\n" +
		"    new: gpt table; 1: start=2048 size=65536 type=linux; 2: start=67584 size=63455 type=82\n" +
		"mkfs " + img + "1 (fs_setup[0]): mkfs.ext4 -L data " + img + "1\n    old: empty\n" +
		"mkfs " + img + "2 (fs_setup[1]): mkswap -L swp " + img + "2\n    old: empty\n"
	if code != 0 || out.String() != want {
		t.Errorf("plan: exit %d\n%s\nwant:\n%s\nstderr: %s", code, out, want, errb)
	}
	before, _ := os.ReadFile(img)
	if len(strings.TrimRight(string(before), "\x00")) != 0 {
		t.Fatal("plan wrote to the image")
	}
	for _, tool := range []string{"mkfs.ext4", "mkswap"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	env, out, errb = diskEnv()
	if code := diskCommand().Run(context.Background(), env, []string{"apply", "--config=" + cfg, "--alias=ephemeral0=" + img, img}); code != 0 {
		t.Fatalf("apply: exit %d\n%s%s", code, out, errb)
	}
	if _, err := exec.LookPath("sfdisk"); err == nil {
		dump, _ := exec.Command("sfdisk", "-d", img).Output()
		if !strings.Contains(string(dump), "start=       67584, size=       63455, type=0657FD6D-A4AB-43C4-84E5-0933C84B4F4F") {
			t.Errorf("sfdisk -d after apply:\n%s", dump)
		}
	}
	info, err := disk.ProbeDevice(img)
	if err != nil {
		t.Fatal(err)
	}
	if len(info.Partitions) != 2 || info.Partitions[0].FSType != "ext4" || info.Partitions[0].Label != "data" ||
		info.Partitions[1].FSType != "swap" || info.Partitions[1].Label != "swp" {
		t.Errorf("after apply: %+v", info.Partitions)
	}
	// Applying again: the layout matches and the filesystems exist.
	env, out, _ = diskEnv()
	if code := diskCommand().Run(context.Background(), env, []string{"apply", "--config", cfg, "--alias", "ephemeral0=" + img, img}); code != 0 {
		t.Errorf("second apply: exit %d", code)
	}
	want = "skip " + img + " (disk_setup.ephemeral0): partition layout already matches\n" +
		"skip " + img + "1 (fs_setup[0]): found ext4 filesystem \"data\": already formatted\n" +
		"skip " + img + "2 (fs_setup[1]): found swap filesystem \"swp\": already formatted\n"
	if out.String() != want {
		t.Errorf("second apply:\n%s\nwant:\n%s", out, want)
	}
}

// TestDiskCommandErrors: bad arguments and names that resolve to nothing
// get one line on stderr.
func TestDiskCommandErrors(t *testing.T) {
	dir := t.TempDir()
	img := filepath.Join(dir, "eph.img")
	if err := os.WriteFile(img, make([]byte, 1<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "user-data")
	if err := os.WriteFile(cfg, []byte("#cloud-config\nfs_setup:\n  - {label: raw, filesystem: ext4, device: /dev/sdq, partition: none}\n  - {filesystem: ext4, device: ephemeral0}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"apply", "--config", cfg}, 2, "error: disk apply: no DISK given (the block devices or image files to work on)\n"},
		{[]string{"plan", img}, 2, "error: disk plan: no --config USERDATA given (the cloud-config with disk_setup/fs_setup)\n"},
		{[]string{"apply", "--config", cfg, filepath.Join(dir, "nope.img")}, 1, "error: DISK " + filepath.Join(dir, "nope.img") + ": no such block device or image file\n"},
		{[]string{"apply", "--config", cfg, img}, 1,
			"error: fs_setup[0]: device /dev/sdq resolves to none of the DISKs given (" + img + "); give --alias /dev/sdq=DISK, or name it among the DISKs\n" +
				"error: fs_setup[1]: device ephemeral0 resolves to none of the DISKs given (" + img + "); it is a metadata name: give --alias ephemeral0=DISK\n" +
				"error: nothing applied\n"},
		{[]string{"frob"}, 2, ""},
		{[]string{"plan", "--alias", "x", "--config", cfg, img}, 2, "error: --alias wants NAME=DISK, got \"x\"\n"},
	} {
		env, _, errb := diskEnv()
		code := diskCommand().Run(context.Background(), env, tc.args)
		if code != tc.code || (tc.stderr != "" && errb.String() != tc.stderr) {
			t.Errorf("disk %q: exit %d, stderr:\n%s\nwant %d:\n%s", tc.args, code, errb, tc.code, tc.stderr)
		}
	}
	if b, _ := os.ReadFile(img); len(strings.TrimRight(string(b), "\x00")) != 0 {
		t.Error("a failed apply wrote to the image")
	}
	env, _, errb := diskEnv()
	if code := diskCommand().Run(context.Background(), env, nil); code != 2 || !strings.HasPrefix(errb.String(), "usage:") {
		t.Errorf("no args: exit %d, %s", code, errb)
	}
}
