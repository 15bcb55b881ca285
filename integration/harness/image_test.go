package harness

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func needTools(t *testing.T, names ...string) {
	t.Helper()
	if miss := HaveTools(names...); len(miss) > 0 {
		t.Skipf("host tools missing: %s", strings.Join(miss, ", "))
	}
}

func sh(t *testing.T, stdin, name string, args ...string) {
	t.Helper()
	p, err := lookPath(name)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(p, args...)
	cmd.Stdin = strings.NewReader(stdin)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

const (
	tinyOffset = 2048 * 512
	tinyFSKiB  = 8192
)

// tinyImage makes a GPT disk whose partition 1 is a small ext4 filesystem
// populated from a tree (mkfs.ext4 -d keeps owners, modes and symlinks).
func tinyImage(t *testing.T) (img string, uid, gid int) {
	t.Helper()
	needTools(t, "sfdisk", "mkfs.ext4", "debugfs")
	dir := t.TempDir()
	root := filepath.Join(dir, "root")
	for _, d := range []string{"etc/ssh", "var/lib/cloud/instances/iid-1/sem", "usr/bin"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p, data string, mode os.FileMode) {
		t.Helper()
		full := filepath.Join(root, p)
		if err := os.WriteFile(full, []byte(data), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(full, mode); err != nil {
			t.Fatal(err)
		}
	}
	write("etc/hostname", "tiny\n", 0o644)
	write("etc/ssh/ssh_host_ed25519_key", "secret", 0o600)
	write("usr/bin/su", "#!/bin/sh\n", 0o755|os.ModeSetuid)
	write("var/lib/cloud/instances/iid-1/sem/config_runcmd", "1: 2.0\n", 0o644)
	write("var/lib/cloud/instances/iid-1/data.json", `{"a": 1}`, 0o600)
	if err := os.Symlink("/var/lib/cloud/instances/iid-1", filepath.Join(root, "var/lib/cloud/instance")); err != nil {
		t.Fatal(err)
	}
	long := "/" + strings.Repeat("x", 90) + "/target"
	if err := os.Symlink(long, filepath.Join(root, "etc/long-link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("hostname", filepath.Join(root, "etc/hostname-link")); err != nil {
		t.Fatal(err)
	}
	img = filepath.Join(dir, "disk.img")
	f, err := os.Create(img)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(tinyOffset + tinyFSKiB*1024 + 1<<20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	sh(t, "label: gpt\nstart=2048, size="+strconv.Itoa(tinyFSKiB*2)+", type=0FC63DAF-8483-4772-8E7D-3D0F0E9A6BAF\n", "sfdisk", "-q", img)
	sh(t, "", "mkfs.ext4", "-q", "-F", "-L", "cloudimg-rootfs", "-E", "offset="+strconv.Itoa(tinyOffset), "-d", root, img, strconv.Itoa(tinyFSKiB))
	return img, os.Getuid(), os.Getgid()
}

func TestImageRead(t *testing.T) {
	img, uid, gid := tinyImage(t)
	im, err := OpenImage(img)
	if err != nil {
		t.Fatal(err)
	}
	if im.Offset != tinyOffset {
		t.Errorf("Offset = %d, want %d", im.Offset, tinyOffset)
	}
	got, err := im.ReadFile("/etc/hostname")
	if err != nil || string(got) != "tiny\n" {
		t.Errorf("ReadFile(/etc/hostname) = %q, %v; want %q", got, err, "tiny\n")
	}
	// Through a directory symlink, and through a final relative symlink.
	if got, err := im.ReadFile("/var/lib/cloud/instance/data.json"); err != nil || string(got) != `{"a": 1}` {
		t.Errorf("ReadFile through the instance link = %q, %v", got, err)
	}
	if got, err := im.ReadFile("/etc/hostname-link"); err != nil || string(got) != "tiny\n" {
		t.Errorf("ReadFile(/etc/hostname-link) = %q, %v", got, err)
	}
	if _, err := im.ReadFile("/etc/nope"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadFile(/etc/nope) error = %v, want fs.ErrNotExist", err)
	}
	if _, err := im.ReadFile("/etc"); err == nil {
		t.Errorf("ReadFile(/etc) succeeded on a directory")
	}

	tests := []struct {
		path string
		want FileInfo
	}{
		{"/etc/hostname", FileInfo{Mode: 0o644, UID: uid, GID: gid, Size: 5}},
		{"/etc/ssh/ssh_host_ed25519_key", FileInfo{Mode: 0o600, UID: uid, GID: gid, Size: 6}},
		{"/usr/bin/su", FileInfo{Mode: 0o755 | fs.ModeSetuid, UID: uid, GID: gid, Size: 10}},
		{"/var/lib/cloud/instance", FileInfo{Mode: 0o777 | fs.ModeSymlink, UID: uid, GID: gid, Size: 30, LinkTarget: "/var/lib/cloud/instances/iid-1"}},
		{"/etc/long-link", FileInfo{Mode: 0o777 | fs.ModeSymlink, UID: uid, GID: gid, Size: 98, LinkTarget: "/" + strings.Repeat("x", 90) + "/target"}},
	}
	for _, tc := range tests {
		got, err := im.Stat(tc.path)
		if err != nil {
			t.Errorf("Stat(%s): %v", tc.path, err)
			continue
		}
		if d := cmp.Diff(tc.want, got); d != "" {
			t.Errorf("Stat(%s) (-want +got):\n%s", tc.path, d)
		}
	}
	if fi, err := im.Stat("/etc/ssh"); err != nil || !fi.Mode.IsDir() || fi.Mode.Perm() != 0o755 {
		t.Errorf("Stat(/etc/ssh) = %v, %v; want a 0755 directory", fi.Mode, err)
	}
	if _, err := im.Stat("/nope"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Stat(/nope) error = %v, want fs.ErrNotExist", err)
	}
	if !im.Exists("/etc/hostname") || im.Exists("/etc/nope") {
		t.Errorf("Exists is wrong")
	}

	names, err := im.ReadDir("/etc")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"hostname", "hostname-link", "long-link", "ssh"}
	if d := cmp.Diff(want, sortedCopy(names)); d != "" {
		t.Errorf("ReadDir(/etc) (-want +got):\n%s", d)
	}
	if names, err := im.ReadDir("/var/lib/cloud/instance/sem"); err != nil || len(names) != 1 || names[0] != "config_runcmd" {
		t.Errorf("ReadDir(instance/sem) = %q, %v", names, err)
	}
	if _, err := im.ReadDir("/nope"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadDir(/nope) error = %v, want fs.ErrNotExist", err)
	}
}

func TestImageWrite(t *testing.T) {
	img, _, _ := tinyImage(t)
	im, err := OpenImage(img)
	if err != nil {
		t.Fatal(err)
	}
	if err := im.MkdirAll("/srv/seed"); err != nil {
		t.Fatal(err)
	}
	if err := im.MkdirAll("/srv/seed"); err != nil {
		t.Fatalf("MkdirAll on an existing directory: %v", err)
	}
	if err := im.WriteFile("/srv/seed/meta-data", []byte("instance-id: x\n")); err != nil {
		t.Fatal(err)
	}
	// Replacing keeps only the new content.
	if err := im.WriteFile("/srv/seed/meta-data", []byte("instance-id: y\n")); err != nil {
		t.Fatal(err)
	}
	if err := im.WriteFile("/etc/hostname", []byte("changed\n")); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]string{"/srv/seed/meta-data": "instance-id: y\n", "/etc/hostname": "changed\n"} {
		got, err := im.ReadFile(p)
		if err != nil || string(got) != want {
			t.Errorf("ReadFile(%s) = %q, %v; want %q", p, got, err, want)
		}
	}
	fi, err := im.Stat("/srv/seed/meta-data")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(FileInfo{Mode: 0o644, Size: 15}, fi); d != "" {
		t.Errorf("Stat of a written file (-want +got):\n%s", d)
	}
	if fi, err := im.Stat("/srv"); err != nil || fi.Mode != fs.ModeDir|0o755 || fi.UID != 0 {
		t.Errorf("Stat(/srv) = %+v, %v; want a root-owned 0755 directory", fi, err)
	}
	if err := im.WriteFile("/no/such/dir/file", []byte("x")); err == nil {
		t.Errorf("WriteFile into a missing directory succeeded")
	}
	if err := im.MkdirAll("/etc/hostname/sub"); err == nil {
		t.Errorf("MkdirAll under a file succeeded")
	}
	// The filesystem is still clean for the kernel.
	if HaveTools("e2fsck") == nil {
		sh(t, "", "e2fsck", "-fn", img+"?offset="+strconv.Itoa(tinyOffset))
	}
}

func TestParseStat(t *testing.T) {
	out := `Inode: 14   Type: symlink    Mode:  0777   Flags: 0x0
Generation: 0    Version: 0x00000000:00000000
User:  1000   Group:  1001   Project:     0   Size: 13
Fast link dest: "/etc/hostname"
`
	fi, fast, err := parseStat(out)
	if err != nil {
		t.Fatal(err)
	}
	want := FileInfo{Mode: fs.ModeSymlink | 0o777, UID: 1000, GID: 1001, Size: 13, LinkTarget: "/etc/hostname"}
	if d := cmp.Diff(want, fi); d != "" || !fast {
		t.Errorf("parseStat (-want +got):\n%s (fast=%v)", d, fast)
	}
	if _, _, err := parseStat("garbage"); err == nil {
		t.Errorf("parseStat(garbage) succeeded")
	}
}

func sortedCopy(s []string) []string {
	c := append([]string(nil), s...)
	for i := range c {
		for j := i + 1; j < len(c); j++ {
			if c[j] < c[i] {
				c[i], c[j] = c[j], c[i]
			}
		}
	}
	return c
}
