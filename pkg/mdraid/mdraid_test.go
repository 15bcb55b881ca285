package mdraid

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
)

func member(name string, major, minor int, uuid string) bootenv.Device {
	return bootenv.Device{Name: name, Path: "/dev/" + name, Major: major, Minor: minor,
		FS: bootenv.FS{Type: bootenv.TypeMD, UUID: uuid, Label: "cloudroot:0", Version: "1.2"}}
}

func TestGroup(t *testing.T) {
	devs := []bootenv.Device{
		member("vda", 254, 0, "a"),
		{Name: "vdb1", FS: bootenv.FS{Type: "ext4", UUID: "a"}},
		member("vdc", 254, 32, "b"),
		member("vdd", 254, 48, "a"),
	}
	got := Group(devs)
	if len(got) != 2 || got[0].UUID != "a" || len(got[0].Members) != 2 || got[0].Members[1].Name != "vdd" || got[1].UUID != "b" {
		t.Errorf("Group = %+v", got)
	}
}

func TestAssemble(t *testing.T) {
	sys := t.TempDir()
	// md125 exists already: the new array takes md127, then md126.
	for _, d := range []string{"block/md125", "class/block/vda/holders", "class/block/vdb/holders", "class/block/vdc/holders", "class/block/vdd/holders/md125"} {
		if err := os.MkdirAll(filepath.Join(sys, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var writes [][2]string
	var loaded []string
	x := Assembler{
		Sysfs: sys,
		Load:  func(m string) error { loaded = append(loaded, m); return nil },
		write: func(p, v string) error {
			rel, _ := filepath.Rel(sys, p)
			writes = append(writes, [2]string{rel, v})
			if rel == "block/md126/md/array_state" {
				return errors.New("invalid argument")
			}
			return nil
		},
	}
	devs := []bootenv.Device{
		member("vda", 254, 0, "a"),
		member("vdb", 254, 16, "a"),
		member("vdc", 254, 32, "b"), // fails to start
		member("vdd", 254, 48, "c"), // already assembled as md125
	}
	names, err := x.Assemble(devs)
	if err == nil {
		t.Error("no error for the array that failed to start")
	}
	if d := cmp.Diff([]string{"md127"}, names); d != "" {
		t.Errorf("names (-want +got):\n%s", d)
	}
	want := [][2]string{
		{"module/md_mod/parameters/new_array", "md127"},
		{"block/md127/md/metadata_version", "1.2"},
		{"block/md127/md/new_dev", "254:0"},
		{"block/md127/md/new_dev", "254:16"},
		{"block/md127/md/array_state", "active"},
		{"module/md_mod/parameters/new_array", "md126"},
		{"block/md126/md/metadata_version", "1.2"},
		{"block/md126/md/new_dev", "254:32"},
		{"block/md126/md/array_state", "active"},
	}
	if d := cmp.Diff(want, writes); d != "" {
		t.Errorf("sysfs writes (-want +got):\n%s", d)
	}
	if len(loaded) == 0 || loaded[0] != "md_mod" {
		t.Errorf("modules loaded: %v", loaded)
	}
	if names, err := x.Assemble([]bootenv.Device{{Name: "vda1", FS: bootenv.FS{Type: "ext4"}}}); names != nil || err != nil {
		t.Errorf("no members: %v, %v", names, err)
	}
}
