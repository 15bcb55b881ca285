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
	if err := os.WriteFile(cfg, []byte("#cloud-config\ndisk_setup:\n  ephemeral0: {table_type: gpt, layout: [50, [50, 82]]}\nfs_setup:\n  - {label: raw, filesystem: vfat, device: /dev/sdq, partition: none}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env, out, errb := diskEnv()
	code := diskCommand().Run(context.Background(), env, []string{"plan", "--config", cfg, "--alias", "ephemeral0=" + img, img})
	want := "partition " + img + " (disk_setup.ephemeral0)\n" +
		"    old: " + img + ": 67108864 bytes, empty\n" +
		"    new: gpt table; 1: start=2048 size=65536 type=linux; 2: start=67584 size=63455 type=82\n" +
		"skip /dev/sdq (fs_setup[0]): device not found\n"
	if code != 0 || out.String() != want {
		t.Errorf("plan: exit %d\n%s\nwant:\n%s\nstderr: %s", code, out, want, errb)
	}
	before, _ := os.ReadFile(img)
	if len(strings.TrimRight(string(before), "\x00")) != 0 {
		t.Fatal("plan wrote to the image")
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
	// Applying again: the layout matches, nothing to do.
	env, out, _ = diskEnv()
	diskCommand().Run(context.Background(), env, []string{"apply", "--config", cfg, "--alias", "ephemeral0=" + img, img})
	if !strings.HasPrefix(out.String(), "skip "+img+" (disk_setup.ephemeral0): partition layout already matches") {
		t.Errorf("second apply:\n%s", out)
	}
	for _, args := range [][]string{{}, {"frob"}, {"plan", img}, {"plan", "--alias", "x", "--config", cfg, img}} {
		env, _, _ := diskEnv()
		if code := diskCommand().Run(context.Background(), env, args); code != 2 {
			t.Errorf("disk %q: exit %d, want 2", args, code)
		}
	}
}
