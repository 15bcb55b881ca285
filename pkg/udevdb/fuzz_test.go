package udevdb

import (
	"path"
	"strings"
	"testing"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
)

// FuzzEntries renders a partition and its disk from arbitrary identities:
// whatever the superblock said, the database stays line-structured, and
// every link stays a plain name under /dev/disk/by-*/ pointing at the node.
func FuzzEntries(f *testing.F) {
	for _, d := range debianDisk() {
		f.Add(d.Name, d.FS.Type, d.FS.UUID, d.FS.Label, d.FS.Version, d.PartUUID, d.PartLabel, "gpt", "8a5c1a3e")
	}
	f.Add("vda1", "ext4", "a\nb", "x/../y", "", "..", "EFI System", "dos", "0000\x00")
	f.Add("vda2", "vfat", "1234-ABCD", ".", "Q:systemd", "E:X=1", "S:../../etc", "gpt\n", "")
	f.Fuzz(func(t *testing.T, name, fstype, uuid, label, version, partUUID, partLabel, pttype, ptuuid string) {
		devs := []bootenv.Device{
			{Name: "vda", Major: 254, Minor: 0, PTType: pttype, PTUUID: ptuuid},
			{Name: name, Major: 254, Minor: 1, Partition: true, Parent: "vda", PartNumber: 1,
				FS:       bootenv.FS{Type: fstype, UUID: uuid, Label: label, Version: version},
				PartUUID: partUUID, PartLabel: partLabel},
		}
		for _, e := range Entries(devs, 42) {
			if e.DB != nil {
				checkDB(t, e)
			}
			for _, l := range e.Links {
				dir, base := path.Split(l.Path)
				switch dir {
				case "disk/by-uuid/", "disk/by-label/", "disk/by-partuuid/", "disk/by-partlabel/":
				default:
					t.Fatalf("link %q outside /dev/disk/by-*", l.Path)
				}
				if base == "" || base == "." || base == ".." || strings.ContainsAny(base, "/\x00\n") {
					t.Fatalf("link name %q", base)
				}
				if path.Clean("disk/x/"+l.Target) != e.Node || strings.Contains(e.Node, "/") {
					t.Fatalf("link %q targets %q, not the node %q", l.Path, l.Target, e.Node)
				}
			}
		}
	})
}
