package azure

import (
	"github.com/cloudroot/cloudroot/pkg/datasource"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
)

// sysfs builds a fake /sys: disks are given by their device directory
// (under devices/, ending in block/<name>), with their partitions, and
// attrs by file.
type sysfs struct {
	fstest.MapFS
}

func newSysfs() sysfs { return sysfs{fstest.MapFS{}} }

func (s sysfs) attr(p, v string) { s.MapFS[p] = &fstest.MapFile{Data: []byte(v + "\n")} }

// disk adds class/block/<name> → ../../<dev> and the partitions' links.
func (s sysfs) disk(dev string, parts ...int) {
	name := path.Base(dev)
	s.MapFS["class/block/"+name] = &fstest.MapFile{Mode: fs.ModeSymlink, Data: []byte("../../" + dev)}
	s.MapFS[dev+"/size"] = &fstest.MapFile{Data: []byte("1024\n")}
	for _, n := range parts {
		p := name + strconv.Itoa(n)
		s.MapFS["class/block/"+p] = &fstest.MapFile{Mode: fs.ModeSymlink, Data: []byte("../../" + dev + "/" + p)}
		s.attr(dev+"/"+p+"/partition", strconv.Itoa(n))
	}
}

// scsi adds a Msft virtual disk's SCSI device attributes.
func (s sysfs) scsi(dir, vendor, model string) {
	s.attr(dir+"/vendor", vendor)
	s.attr(dir+"/model", model)
}

// gen1 is a Hyper-V Gen1 VM: OS disk and resource disk on their own
// storvsc VMBus devices, a data disk on a third, a DVD on ATA.
func gen1() sysfs {
	s := newSysfs()
	bus := "devices/LNXSYSTM:00/LNXSYBUS:00/PNP0A03:00/device:07/VMBUS:01"
	for _, d := range []struct{ guid, host, addr, name string }{
		{"00000000-0000-8899-0000-000000000000", "host0", "0:0:0:0", "sda"},
		{"00000000-0001-8899-0000-000000000000", "host1", "1:0:1:0", "sdb"},
		{"f8b3781b-1e82-4818-a1c3-63d806ec15bb", "host3", "3:0:0:0", "sdc"},
	} {
		vm := bus + "/" + d.guid
		s.attr(vm+"/device_id", "{"+d.guid+"}")
		scsi := vm + "/" + d.host + "/target" + d.addr[:len(d.addr)-2] + "/" + d.addr
		s.scsi(scsi, "Msft    ", "Virtual Disk    ")
		switch d.name {
		case "sda":
			s.disk(scsi+"/block/sda", 1, 2)
		case "sdb":
			s.disk(scsi+"/block/sdb", 1)
		default:
			s.disk(scsi + "/block/" + d.name)
		}
	}
	ata := "devices/pci0000:00/0000:00:07.1/ata2/host5/target5:0:0/5:0:0:0"
	s.scsi(ata, "Msft    ", "Virtual CD/ROM  ")
	s.disk(ata + "/block/sr0")
	return s
}

// gen2 is a Gen2 VM: OS disk LUN 0 and resource disk LUN 1 of the
// well-known SCSI controller, a data disk on scsi1, a disk of another
// vendor.
func gen2() sysfs {
	s := newSysfs()
	bus := "devices/LNXSYSTM:00/LNXSYBUS:00/ACPI0004:00/VMBUS:00"
	c0 := bus + "/f8b3781a-1e82-4818-a1c3-63d806ec15bb"
	s.attr(c0+"/device_id", "{f8b3781a-1e82-4818-a1c3-63d806ec15bb}")
	c1 := bus + "/f8b3781b-1e82-4818-a1c3-63d806ec15bb"
	s.attr(c1+"/device_id", "{f8b3781b-1e82-4818-a1c3-63d806ec15bb}")
	for _, d := range []struct{ ctl, addr, name, vendor string }{
		{c0, "0:0:0:0", "sda", "Msft"},
		{c0, "0:0:0:1", "sdb", "Msft"},
		{c0, "0:0:0:2", "sdd", "Msft"},
		{c1, "1:0:0:1", "sdc", "Msft"},
		{c0, "0:0:0:3", "sde", "ACME"},
	} {
		scsi := d.ctl + "/host" + d.addr[:1] + "/target" + d.addr[:5] + "/" + d.addr
		s.scsi(scsi, d.vendor, "Virtual Disk")
		if d.name == "sda" {
			s.disk(scsi+"/block/sda", 1, 14, 15)
			continue
		}
		s.disk(scsi + "/block/" + d.name)
	}
	s.MapFS["firmware/acpi/tables/OEM0"] = &fstest.MapFile{Data: []byte("entropy from the host\x00\x01")}
	return s
}

// sysLayout is a golden case's sysfs.
func sysLayout(name string) fs.FS {
	switch name {
	case "gen1":
		return gen1().MapFS
	case "gen2":
		return gen2().MapFS
	}
	return fstest.MapFS{}
}

func TestCloudDisks(t *testing.T) {
	for _, tc := range []struct {
		name string
		sys  fs.FS
		want []CloudDisk
		res  string
	}{
		{"gen1", gen1().MapFS, []CloudDisk{
			{Fabric: FabricRoot, Name: "sda", Partitions: map[int]string{1: "sda1", 2: "sda2"}},
			{Fabric: FabricResource, Name: "sdb", Partitions: map[int]string{1: "sdb1"}},
		}, "sdb"},
		{"gen2", gen2().MapFS, []CloudDisk{
			{Fabric: FabricRoot, Name: "sda", Partitions: map[int]string{1: "sda1", 14: "sda14", 15: "sda15"}},
			{Fabric: FabricResource, Name: "sdb", Partitions: map[int]string{}},
		}, "sdb"},
		{"empty", fstest.MapFS{}, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := CloudDisks(tc.sys)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("-want +got:\n%s", diff)
			}
			res, err := ResourceDisk(tc.sys)
			if err != nil || res != tc.res {
				t.Errorf("ResourceDisk = %q, %v; want %q", res, err, tc.res)
			}
		})
	}
}

func TestLinks(t *testing.T) {
	d := CloudDisk{Fabric: FabricResource, Name: "sdb", Partitions: map[int]string{1: "sdb1"}}
	want := map[string]string{"disk/cloud/azure_resource": "sdb", "disk/cloud/azure_resource-part1": "sdb1"}
	if diff := cmp.Diff(want, d.Links()); diff != "" {
		t.Errorf("-want +got:\n%s", diff)
	}
}

// TestCloudDisksDirFS runs the walk on a real directory with real
// symlinks, as os.DirFS("/sys") gives it.
func TestCloudDisksDirFS(t *testing.T) {
	root := t.TempDir()
	for name, f := range gen1().MapFS {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if f.Mode&fs.ModeSymlink != 0 {
			if err := os.Symlink(string(f.Data), p); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := CloudDisks(os.DirFS(root))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[1].Name != "sdb" || got[1].Fabric != FabricResource || got[1].Partitions[1] != "sdb1" {
		t.Errorf("got %+v", got)
	}
}

func TestCreateLinks(t *testing.T) {
	dev := t.TempDir()
	disks := []CloudDisk{{Fabric: FabricResource, Name: "sdb", Partitions: map[int]string{1: "sdb1"}}, {Fabric: FabricRoot, Name: "sda", Partitions: map[int]string{}}}
	for i := 0; i < 2; i++ { // twice: existing links are replaced
		if err := CreateLinks(dev, disks); err != nil {
			t.Fatal(err)
		}
	}
	for link, want := range map[string]string{
		"disk/cloud/azure_resource":       "../../sdb",
		"disk/cloud/azure_resource-part1": "../../sdb1",
		"disk/cloud/azure_root":           "../../sda",
	} {
		got, err := os.Readlink(filepath.Join(dev, link))
		if err != nil || got != want {
			t.Errorf("%s → %q, %v; want %q", link, got, err, want)
		}
	}
}

// TestPrepare: the resource disk's links are made from the source's sysfs.
func TestPrepare(t *testing.T) {
	dev := t.TempDir()
	s := &Source{Sys: gen1().MapFS, Dev: dev}
	if err := s.Prepare(&datasource.Data{Name: "Azure"}); err != nil {
		t.Fatal(err)
	}
	if got, err := os.Readlink(filepath.Join(dev, "disk/cloud/azure_resource")); err != nil || got != "../../sdb" {
		t.Errorf("azure_resource → %q, %v", got, err)
	}
	// No Azure disks: nothing to do, no error.
	if err := (&Source{Sys: newSysfs().MapFS, Dev: t.TempDir()}).Prepare(&datasource.Data{Name: "Azure"}); err != nil {
		t.Errorf("no disks: %v", err)
	}
}
