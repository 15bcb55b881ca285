package harness

import (
	"strings"
	"testing"
)

func TestExtraNICs(t *testing.T) {
	base := BootOptions{Kernel: "/k", Initramfs: "/i", Disk: "/d"}
	args, err := base.Args()
	if err != nil {
		t.Fatal(err)
	}
	if line := strings.Join(args, " "); strings.Contains(line, "mac=") {
		t.Errorf("no extra NICs, yet a MAC is set: %s", line)
	}
	o := base
	o.ExtraNICs = 2
	args, err = o.Args()
	if err != nil {
		t.Fatal(err)
	}
	line := strings.Join(args, " ")
	for _, must := range []string{
		"-device virtio-net-pci,netdev=n0,mac=52:54:00:12:34:56",
		"-netdev user,id=n1,restrict=on -device virtio-net-pci,netdev=n1,mac=52:54:00:12:34:51",
		"-netdev user,id=n2,restrict=on -device virtio-net-pci,netdev=n2,mac=52:54:00:12:34:52",
	} {
		if !strings.Contains(line, must) {
			t.Errorf("argv lacks %q:\n%s", must, line)
		}
	}
	if n := strings.Count(line, "-netdev"); n != 3 {
		t.Errorf("%d -netdev options, want 3", n)
	}
	for _, bad := range []int{-1, MaxExtraNICs + 1} {
		o.ExtraNICs = bad
		if _, err := o.Args(); err == nil {
			t.Errorf("ExtraNICs = %d accepted", bad)
		}
	}
}
