package bootenv

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestNetLinks(t *testing.T) {
	sys := t.TempDir()
	mk := func(p, s string) {
		hp := filepath.Join(sys, p)
		os.MkdirAll(filepath.Dir(hp), 0o755)
		os.WriteFile(hp, []byte(s), 0o644)
	}
	// A real NIC under devices/pci…, a virtual lo, a bond master.
	mk("devices/pci0000:00/0000:00:02.0/virtio0/net/eth0/address", "52:54:00:12:34:56\n")
	mk("devices/pci0000:00/0000:00:02.0/virtio0/net/eth0/carrier", "1\n")
	mk("devices/pci0000:00/0000:00:02.0/virtio0/net/eth0/operstate", "up\n")
	mk("devices/virtual/net/lo/address", "00:00:00:00:00:00\n")
	mk("devices/virtual/net/bond0/address", "aa:bb:cc:dd:ee:ff\n")
	os.MkdirAll(filepath.Join(sys, "devices/virtual/net/bond0/bonding"), 0o755)
	os.MkdirAll(filepath.Join(sys, "class/net"), 0o755)
	for name, target := range map[string]string{
		"eth0":  "../../devices/pci0000:00/0000:00:02.0/virtio0/net/eth0",
		"lo":    "../../devices/virtual/net/lo",
		"bond0": "../../devices/virtual/net/bond0",
	} {
		if err := os.Symlink(target, filepath.Join(sys, "class/net", name)); err != nil {
			t.Fatal(err)
		}
	}
	got := NetLinks(sys)
	want := []NetLink{
		{Name: "bond0", MAC: "aa:bb:cc:dd:ee:ff", Bond: true, Virtual: true},
		{Name: "eth0", MAC: "52:54:00:12:34:56", Carrier: true, OperState: "up"},
		{Name: "lo", MAC: "00:00:00:00:00:00", Virtual: true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("NetLinks (-want +got):\n%s", diff)
	}
	if NetLinks(filepath.Join(sys, "missing")) != nil {
		t.Error("missing sysfs gave links")
	}
}
