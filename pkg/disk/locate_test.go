package disk

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
)

const mountinfo = `22 28 0:20 / /proc rw,nosuid - proc proc rw
28 1 253:1 / / rw,relatime shared:1 - ext4 /dev/root rw
40 28 253:1 / /sysroot rw - ext4 /dev/vda1 rw
41 40 259:3 /sub /sysroot/my\040data rw - xfs /dev/nvme0n1p3 rw
bad line
`

func TestLocator(t *testing.T) {
	mounts, err := ParseMountInfo(strings.NewReader(mountinfo))
	if err != nil || len(mounts) != 4 {
		t.Fatalf("%d mounts, %v", len(mounts), err)
	}
	if mounts[3].MountPoint != "/sysroot/my data" || mounts[3].Root != "/sub" || mounts[1].Source != "/dev/root" {
		t.Errorf("parsed %+v", mounts)
	}
	l := Locator{Mounts: mounts, Devices: []bootenv.Device{
		{Name: "vda", Path: "/dev/vda", Major: 253},
		{Name: "vda1", Path: "/dev/vda1", Major: 253, Minor: 1, Partition: true, Parent: "vda", PartNumber: 1},
		{Name: "nvme0n1p3", Path: "/dev/nvme0n1p3", Major: 259, Minor: 3, Partition: true, Parent: "nvme0n1", PartNumber: 3},
	}}
	got, err := l.ByMountPoint("/sysroot/")
	want := Located{Device: "/dev/vda1", Disk: "/dev/vda", Partition: 1, FSType: "ext4", MountPoint: "/sysroot"}
	if err != nil || !cmp.Equal(want, got) {
		t.Errorf("ByMountPoint: %+v %v", got, err)
	}
	got, err = l.ByMountPoint("/sysroot/my data")
	if err != nil || got.Disk != "/dev/nvme0n1" || got.Partition != 3 || got.FSType != "xfs" {
		t.Errorf("ByMountPoint nvme: %+v %v", got, err)
	}
	noLinks := func(p string) (string, error) { return p, nil }
	got, err = l.ByPath("/dev/vda", noLinks)
	if err != nil || got.Partition != 0 {
		t.Errorf("ByPath disk: %+v %v", got, err)
	}
	if _, err := l.ByPath("/dev/sdz", noLinks); !errors.Is(err, ErrNotFound) {
		t.Errorf("ByPath missing: %v", err)
	}
	if _, err := l.ByMountPoint("/nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("ByMountPoint missing: %v", err)
	}
}
