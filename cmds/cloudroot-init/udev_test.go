package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
	"github.com/cloudroot/cloudroot/pkg/udevdb"
)

// tree lists what lies under root: files with their mode and content,
// symlinks with their target.
func tree(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			out[rel] = "-> " + target
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[rel] = fi.Mode().Perm().String() + " " + strings.ReplaceAll(string(b), "\n", "|")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestWriteUdev(t *testing.T) {
	devs := []bootenv.Device{
		{Name: "vda", Major: 254, Minor: 0, PTType: "gpt"},
		{Name: "vda1", Major: 254, Minor: 1, Partition: true, Parent: "vda", PartNumber: 1,
			FS: bootenv.FS{Type: "ext4", UUID: "6f1c9e2a-1b2c-4d3e-8f4a-5b6c7d8e9f0a"}},
		{Name: "vda15", Major: 254, Minor: 15, Partition: true, Parent: "vda", PartNumber: 15,
			FS: bootenv.FS{Type: "vfat", UUID: "62C7-B3DD", Label: "UEFI"}, PartUUID: "4e3d2c1b-0a9f-4e8d-7c6b-5a4f3e2d1c0b"},
		// No node under /dev: skipped whole.
		{Name: "vdb", Major: 254, Minor: 16, FS: bootenv.FS{Type: "ext4", UUID: "0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0"}},
	}
	entries := udevdb.Entries(devs, 7)

	dir := t.TempDir()
	dev, run := filepath.Join(dir, "dev"), filepath.Join(dir, "run")
	for _, n := range []string{"vda", "vda1", "vda15"} {
		if err := os.MkdirAll(dev, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dev, n), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// Something already made the label link: it stays as it is.
	if err := os.MkdirAll(filepath.Join(dev, "disk", "by-label"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../elsewhere", filepath.Join(dev, "disk", "by-label", "UEFI")); err != nil {
		t.Fatal(err)
	}

	n, err := writeUdev(dev, run, entries)
	if n != 2 {
		t.Errorf("wrote %d entries, want 2", n)
	}
	if err == nil || !strings.Contains(err.Error(), "vdb") {
		t.Errorf("error = %v, want one naming the missing vdb node", err)
	}
	want := map[string]string{
		"dev/vda":   "-rw------- ",
		"dev/vda1":  "-rw------- ",
		"dev/vda15": "-rw------- ",
		"dev/disk/by-uuid/6f1c9e2a-1b2c-4d3e-8f4a-5b6c7d8e9f0a":     "-> ../../vda1",
		"dev/disk/by-uuid/62C7-B3DD":                                "-> ../../vda15",
		"dev/disk/by-label/UEFI":                                    "-> ../../elsewhere",
		"dev/disk/by-partuuid/4e3d2c1b-0a9f-4e8d-7c6b-5a4f3e2d1c0b": "-> ../../vda15",
		"run/udev/data/b254:1": "-rw-r--r-- S:disk/by-uuid/6f1c9e2a-1b2c-4d3e-8f4a-5b6c7d8e9f0a|I:7|" +
			"E:ID_FS_UUID=6f1c9e2a-1b2c-4d3e-8f4a-5b6c7d8e9f0a|E:ID_FS_UUID_ENC=6f1c9e2a-1b2c-4d3e-8f4a-5b6c7d8e9f0a|" +
			"E:ID_FS_TYPE=ext4|E:ID_FS_USAGE=filesystem|E:ID_PART_TABLE_TYPE=gpt|E:ID_PART_ENTRY_SCHEME=gpt|" +
			"E:ID_PART_ENTRY_NUMBER=1|E:ID_PART_ENTRY_DISK=254:0|E:CLOUDROOT_INITRD_DB=1|G:systemd|Q:systemd|V:1|",
		"run/udev/data/b254:15":         "-rw-r--r-- " + strings.ReplaceAll(string(entries[1].DB), "\n", "|"),
		"run/udev/tags/systemd/b254:1":  "-r--r--r-- ",
		"run/udev/tags/systemd/b254:15": "-r--r--r-- ",
	}
	if diff := cmp.Diff(want, tree(t, dir)); diff != "" {
		t.Errorf("tree (-want +got):\n%s", diff)
	}

	// A second run (or a database someone else wrote) changes nothing.
	before := tree(t, dir)
	if n, _ := writeUdev(dev, run, entries); n != 0 {
		t.Errorf("second run wrote %d entries, want 0", n)
	}
	if diff := cmp.Diff(before, tree(t, dir)); diff != "" {
		t.Errorf("second run changed the tree (-before +after):\n%s", diff)
	}
}

func TestWriteUdevRefusesEscapes(t *testing.T) {
	dir := t.TempDir()
	dev, run := filepath.Join(dir, "dev"), filepath.Join(dir, "run")
	entries := []udevdb.Entry{
		{ID: "../b1:1", Node: "vda", DB: []byte("V:1\n")},
		{ID: "b1:2", Node: "../vda", DB: []byte("V:1\n")},
	}
	if _, err := writeUdev(dev, run, entries); err == nil {
		t.Error("want errors for entries leaving /dev and /run")
	}
	if got := tree(t, dir); len(got) != 0 {
		t.Errorf("wrote %v", got)
	}
}
