package udevdb

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
)

// debianDisk is the Debian cloud image's layout as pkg/bootenv reports it:
// a GPT disk with the root (vda1), BIOS boot (vda14) and the ESP (vda15).
func debianDisk() []bootenv.Device {
	return []bootenv.Device{
		{Name: "sr0", Major: 11, Minor: 0, Removable: true, FS: bootenv.FS{Type: "iso9660", Label: "cidata"}},
		{Name: "vda", Major: 254, Minor: 0, PTType: "gpt", PTUUID: "8a5c1a3e-3c16-4b5e-9a8e-0c4f2f1d6b7a"},
		{Name: "vda1", Major: 254, Minor: 1, Partition: true, Parent: "vda", PartNumber: 1,
			FS:       bootenv.FS{Type: "ext4", UUID: "6f1c9e2a-1b2c-4d3e-8f4a-5b6c7d8e9f0a", Version: "1.0"},
			PartUUID: "2c1c2d4e-5f6a-4b7c-8d9e-0f1a2b3c4d5e"},
		{Name: "vda14", Major: 254, Minor: 14, Partition: true, Parent: "vda", PartNumber: 14,
			PartUUID: "3d2c1b0a-9f8e-4d7c-6b5a-4f3e2d1c0b0a"},
		{Name: "vda15", Major: 254, Minor: 15, Partition: true, Parent: "vda", PartNumber: 15,
			FS:       bootenv.FS{Type: "vfat", UUID: "62C7-B3DD", Label: "UEFI", Version: "FAT16"},
			PartUUID: "4e3d2c1b-0a9f-4e8d-7c6b-5a4f3e2d1c0b"},
	}
}

func TestEntries(t *testing.T) {
	esp := "S:disk/by-uuid/62C7-B3DD\n" +
		"S:disk/by-label/UEFI\n" +
		"S:disk/by-partuuid/4e3d2c1b-0a9f-4e8d-7c6b-5a4f3e2d1c0b\n" +
		"I:1234567\n" +
		"E:ID_FS_UUID=62C7-B3DD\n" +
		"E:ID_FS_UUID_ENC=62C7-B3DD\n" +
		"E:ID_FS_VERSION=FAT16\n" +
		"E:ID_FS_TYPE=vfat\n" +
		"E:ID_FS_USAGE=filesystem\n" +
		"E:ID_FS_LABEL=UEFI\n" +
		"E:ID_FS_LABEL_ENC=UEFI\n" +
		"E:ID_PART_TABLE_UUID=8a5c1a3e-3c16-4b5e-9a8e-0c4f2f1d6b7a\n" +
		"E:ID_PART_TABLE_TYPE=gpt\n" +
		"E:ID_PART_ENTRY_SCHEME=gpt\n" +
		"E:ID_PART_ENTRY_UUID=4e3d2c1b-0a9f-4e8d-7c6b-5a4f3e2d1c0b\n" +
		"E:ID_PART_ENTRY_NUMBER=15\n" +
		"E:ID_PART_ENTRY_DISK=254:0\n" +
		"E:CLOUDROOT_INITRD_DB=1\n" +
		"G:systemd\nQ:systemd\nV:1\n"

	tests := []struct {
		name  string
		devs  []bootenv.Device
		usec  uint64
		ids   []string // entries' IDs, in order
		links map[string][]Link
		db    map[string]string
	}{
		{
			name: "debian cloud image: root, BIOS boot, ESP; not the CD-ROM nor the bare disk",
			devs: debianDisk(),
			usec: 1234567,
			ids:  []string{"b254:1", "b254:14", "b254:15"},
			links: map[string][]Link{
				"b254:1": {
					{"disk/by-uuid/6f1c9e2a-1b2c-4d3e-8f4a-5b6c7d8e9f0a", "../../vda1"},
					{"disk/by-partuuid/2c1c2d4e-5f6a-4b7c-8d9e-0f1a2b3c4d5e", "../../vda1"},
				},
				"b254:14": {{"disk/by-partuuid/3d2c1b0a-9f8e-4d7c-6b5a-4f3e2d1c0b0a", "../../vda14"}},
				"b254:15": {
					{"disk/by-uuid/62C7-B3DD", "../../vda15"},
					{"disk/by-label/UEFI", "../../vda15"},
					{"disk/by-partuuid/4e3d2c1b-0a9f-4e8d-7c6b-5a4f3e2d1c0b", "../../vda15"},
				},
			},
			db: map[string]string{"b254:15": esp},
		},
		{
			name: "whole-disk filesystem, no I: line without a time",
			devs: []bootenv.Device{{Name: "vdb", Major: 254, Minor: 16, FS: bootenv.FS{Type: "xfs", UUID: "0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0", Label: "data"}}},
			ids:  []string{"b254:16"},
			db: map[string]string{"b254:16": "S:disk/by-uuid/0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0\nS:disk/by-label/data\n" +
				"E:ID_FS_UUID=0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0\nE:ID_FS_UUID_ENC=0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0\n" +
				"E:ID_FS_TYPE=xfs\nE:ID_FS_USAGE=filesystem\nE:ID_FS_LABEL=data\nE:ID_FS_LABEL_ENC=data\n" +
				"E:CLOUDROOT_INITRD_DB=1\nG:systemd\nQ:systemd\nV:1\n"},
		},
		{
			name:  "a label udev would escape is left out; the UUID stays",
			devs:  []bootenv.Device{{Name: "vdb", Major: 254, Minor: 16, FS: bootenv.FS{Type: "ext4", UUID: "0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0", Label: "my data/x"}}},
			ids:   []string{"b254:16"},
			links: map[string][]Link{"b254:16": {{"disk/by-uuid/0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0", "../../vdb"}}},
		},
		{
			name: "the second device with the same UUID gets no link but its entry",
			devs: []bootenv.Device{
				{Name: "vdb", Major: 254, Minor: 16, FS: bootenv.FS{Type: "ext4", UUID: "0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0"}},
				{Name: "vdc", Major: 254, Minor: 32, FS: bootenv.FS{Type: "ext4", UUID: "0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0"}},
			},
			ids: []string{"b254:16", "b254:32"},
			links: map[string][]Link{
				"b254:16": {{"disk/by-uuid/0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0", "../../vdb"}},
				"b254:32": nil,
			},
		},
		{
			name: "left to udev: dm, md, loop, containers, probe errors, removable, nothing read",
			devs: []bootenv.Device{
				{Name: "dm-0", Major: 253, Minor: 0, DMName: "vg-root", FS: bootenv.FS{Type: "ext4", UUID: "0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0"}},
				{Name: "md0", Major: 9, Minor: 0, FS: bootenv.FS{Type: "ext4", UUID: "1b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0"}},
				{Name: "loop0", Major: 7, Minor: 0, FS: bootenv.FS{Type: "squashfs", UUID: "x"}},
				{Name: "vdb", Major: 254, Minor: 16, FS: bootenv.FS{Type: "LVM2_member", UUID: "abc"}},
				{Name: "vdc", Major: 254, Minor: 32, Err: "read error", FS: bootenv.FS{Type: "ext4", UUID: "2b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0"}},
				{Name: "sda", Major: 8, Minor: 0, Removable: true, FS: bootenv.FS{Type: "vfat", UUID: "1234-ABCD"}},
				{Name: "vdd", Major: 254, Minor: 48},
				{Name: "vde", Major: 0, Minor: 0, FS: bootenv.FS{Type: "ext4", UUID: "3b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0"}},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Entries(tc.devs, tc.usec)
			var ids []string
			for _, e := range got {
				ids = append(ids, e.ID)
				checkDB(t, e)
				if want, ok := tc.links[e.ID]; ok {
					if diff := cmp.Diff(want, e.Links); diff != "" {
						t.Errorf("%s links (-want +got):\n%s", e.ID, diff)
					}
				}
				if want, ok := tc.db[e.ID]; ok {
					if diff := cmp.Diff(want, string(e.DB)); diff != "" {
						t.Errorf("%s db (-want +got):\n%s", e.ID, diff)
					}
				}
			}
			if diff := cmp.Diff(tc.ids, ids); diff != "" {
				t.Errorf("ids (-want +got):\n%s", diff)
			}
		})
	}
}

// checkDB asserts the invariants sd-device's reader relies on: one
// "K:value" per line, known keys, the current systemd tag, the marker, and
// S: lines naming exactly the entry's links.
func checkDB(t *testing.T, e Entry) {
	t.Helper()
	if !strings.HasSuffix(string(e.DB), "\n") {
		t.Fatalf("%s: db does not end in a newline: %q", e.ID, e.DB)
	}
	var s []string
	seen := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSuffix(string(e.DB), "\n"), "\n") {
		if len(l) < 3 || l[1] != ':' || !strings.ContainsRune("SIEGQV", rune(l[0])) {
			t.Fatalf("%s: bad db line %q", e.ID, l)
		}
		seen[l] = true
		if l[0] == 'S' {
			s = append(s, l[2:])
		}
		if l[0] == 'E' && !strings.Contains(l[2:], "=") {
			t.Errorf("%s: property without '=': %q", e.ID, l)
		}
	}
	for _, want := range []string{"G:systemd", "Q:systemd", "V:1", "E:CLOUDROOT_INITRD_DB=1"} {
		if !seen[want] {
			t.Errorf("%s: db lacks %q", e.ID, want)
		}
	}
	var links []string
	for _, l := range e.Links {
		links = append(links, l.Path)
		if l.Target != "../../"+e.Node {
			t.Errorf("%s: link %s targets %q", e.ID, l.Path, l.Target)
		}
	}
	if diff := cmp.Diff(links, s); diff != "" {
		t.Errorf("%s: S: lines against links (-links +S):\n%s", e.ID, diff)
	}
}
