package initramfs

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestReadModaliases(t *testing.T) {
	dir := t.TempDir()
	// A sysfs snapshot: bus/pci/devices/<dev> -> ../../../devices/...
	dev := filepath.Join(dir, "devices", "pci0000:00", "0000:00:02.0")
	if err := os.MkdirAll(dev, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dev, "modalias"), []byte("pci:v00001AF4d00001042sv00001AF4sd00001100bc01sc00i00\n"), 0o444); err != nil {
		t.Fatal(err)
	}
	cpu := filepath.Join(dir, "devices", "system", "cpu", "cpu0")
	if err := os.MkdirAll(cpu, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cpu, "modalias"), []byte("cpu:type:x86,ven0000fam0006mod003F:feature:,0001\n"), 0o444); err != nil {
		t.Fatal(err)
	}
	for bus, target := range map[string]string{"pci": "../../../devices/pci0000:00/0000:00:02.0", "cpu": "../../../devices/system/cpu/cpu0"} {
		d := filepath.Join(dir, "bus", bus, "devices")
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, filepath.Join(d, filepath.Base(target))); err != nil {
			t.Fatal(err)
		}
	}
	got, err := ReadModaliases(dir)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"pci:v00001AF4d00001042sv00001AF4sd00001100bc01sc00i00"}, got); d != "" {
		t.Errorf("sysfs (-want +got):\n%s", d)
	}
	list := filepath.Join(t.TempDir(), "hw.txt")
	if err := os.WriteFile(list, []byte("# from the target\nxen:vbd\n\ncpu:type:x86\nacpi:VMBUS:\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err = ReadModaliases(list)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"xen:vbd", "acpi:VMBUS:"}, got); d != "" {
		t.Errorf("list (-want +got):\n%s", d)
	}
}

func TestBuildHostOnly(t *testing.T) {
	initPath, initBody := writeInit(t)
	hw := filepath.Join(t.TempDir(), "hw.txt")
	if err := os.WriteFile(hw, []byte("pci:v00001AF4d00001042sv00001AF4sd00001100bc01sc00i00\npci:v00001234d00005678sv00000000sd00000000bc03sc00i00\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var img bytes.Buffer
	st, err := Build(Config{KmodDir: fakeTree, Version: "6.1.0-test", Drivers: []Request{{Name: "ext4"}}, HostHardware: hw, Init: initPath, Compress: CompressNone}, &img)
	if err != nil {
		t.Fatal(err)
	}
	byName := checkArchive(t, readImage(t, img.Bytes(), CompressNone), initBody)
	if _, ok := byName["lib/modules/6.1.0-test/kernel/drivers/virtio/virtio_pci.ko"]; !ok {
		t.Error("host-only image lacks virtio_pci for the host's virtio device")
	}
	// Host modules are shipped for coldplug, not loaded eagerly.
	if load := strings.Fields(content(t, byName[ModulesLoadPath])); slices.Contains(load, "virtio_pci") {
		t.Errorf("modules.load = %v, virtio_pci is for coldplug", load)
	}
	if !slices.ContainsFunc(st.Notes, func(n string) bool { return strings.Contains(n, "virtio_pci") }) {
		t.Errorf("notes %q do not say what the host device matched", st.Notes)
	}
}
