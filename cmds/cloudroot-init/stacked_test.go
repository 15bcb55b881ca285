package main

import (
	"strings"
	"testing"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
)

func TestContainerHint(t *testing.T) {
	devs := []bootenv.Device{
		{Path: "/dev/vda1", FS: bootenv.FS{Type: "ext4"}},
		{Path: "/dev/vdb", FS: bootenv.FS{Type: bootenv.TypeLVM, UUID: "aBcDeF-0123-4567-89Gh-IjKl-MnOp-QrStUv"}},
		{Path: "/dev/vdc", FS: bootenv.FS{Type: bootenv.TypeLUKS, UUID: "9f0c6f1e"}},
	}
	cl := bootenv.ParseCmdline("root=/dev/mapper/vg0-root rd.lvm.lv=vg0/root console=ttyS0")
	got := containerHint(cl.Get, devs)
	for _, want := range []string{
		"cloudroot-init: root=/dev/mapper/vg0-root is a device-mapper device (LVM or LUKS)",
		"rd.lvm.lv=vg0/root: only the logical volumes named by rd.lvm.lv= are activated",
		`/dev/vdb is an LVM physical volume (LVM2_member uuid="aBcDeF-0123-4567-89Gh-IjKl-MnOp-QrStUv"): the root may be inside it; this initramfs does not have its volume group active`,
		`/dev/vdc is a LUKS encrypted volume (crypto_LUKS uuid="9f0c6f1e")`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("hint lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "vda1") {
		t.Errorf("hint names a plain filesystem:\n%s", got)
	}
	if h := containerHint(bootenv.ParseCmdline("root=LABEL=x").Get, devs[:1]); h != "" {
		t.Errorf("hint for a plain machine: %q", h)
	}
	err := containerError(bootenv.Device{Path: "/dev/md0p1", FS: bootenv.FS{Type: bootenv.TypeMD, UUID: "u"}})
	if want := `/dev/md0p1 is an md RAID member (linux_raid_member uuid="u"), not a filesystem: this initramfs does not assemble this array (see the md lines above)`; err.Error() != want {
		t.Errorf("containerError = %q, want %q", err, want)
	}
}
