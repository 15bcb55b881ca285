package mdraid

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
)

// superblock1 returns the first bytes of an md 1.x superblock of level.
func superblock1(level int32) []byte {
	sb := make([]byte, 256)
	binary.LittleEndian.PutUint32(sb, 0xa92b4efc)
	binary.LittleEndian.PutUint32(sb[4:], 1)
	binary.LittleEndian.PutUint32(sb[72:], uint32(level))
	return sb
}

// memberFile writes a member image of size bytes with sb at off and returns
// its path.
func memberFile(t *testing.T, sb []byte, off, size int64) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "member.img")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(sb, off); err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestReadLevel(t *testing.T) {
	const size = 1 << 20
	sb090 := make([]byte, 96)
	binary.LittleEndian.PutUint32(sb090, 0xa92b4efc)
	binary.LittleEndian.PutUint32(sb090[28:], 6)
	for _, tc := range []struct {
		version string
		sb      []byte
		off     int64
		want    int32
	}{
		{"1.2", superblock1(5), 4096, 5},
		{"1.1", superblock1(1), 0, 1},
		{"1.0", superblock1(4), size - 8192, 4},
		{"0.90.0", sb090, size - 64<<10, 6},
	} {
		got, err := ReadLevel(memberFile(t, tc.sb, tc.off, size), tc.version)
		if err != nil || got != tc.want {
			t.Errorf("%s: ReadLevel = %d, %v; want %d", tc.version, got, err, tc.want)
		}
	}
	if _, err := ReadLevel(memberFile(t, superblock1(5), 0, size), "1.2"); err == nil {
		t.Error("no error for a 1.2 member without a superblock at 4 KiB")
	}
	if _, err := ReadLevel(memberFile(t, superblock1(5), 4096, size), "2.0"); err == nil {
		t.Error("no error for an unknown version")
	}
}

func FuzzParseLevel(f *testing.F) {
	f.Add(superblock1(5), "1.2")
	f.Add([]byte{0xfc, 0x4e, 0x2b, 0xa9}, "0.90.0")
	f.Fuzz(func(t *testing.T, b []byte, version string) {
		if _, ok := ParseLevel(b, version); ok && len(b) < 76 {
			t.Fatalf("accepted %d bytes", len(b))
		}
	})
}

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
	// vda's superblock says RAID5: its personality, raid456, is loaded
	// for that array only.
	raid5 := member("vda", 254, 0, "a")
	raid5.Path = memberFile(t, superblock1(5), 4096, 1<<20)
	devs := []bootenv.Device{
		raid5,
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
	if d := cmp.Diff([]string{"md_mod", "raid1", "raid10", "raid0", "raid456"}, loaded); d != "" {
		t.Errorf("modules loaded (-want +got):\n%s", d)
	}
	if names, err := x.Assemble([]bootenv.Device{{Name: "vda1", FS: bootenv.FS{Type: "ext4"}}}); names != nil || err != nil {
		t.Errorf("no members: %v, %v", names, err)
	}
}
