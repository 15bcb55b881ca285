package initramfs

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cloudroot/cloudroot/pkg/coldplug"
)

// Devices each profile must drive: the modalias a real machine's device
// presents and the module that must match it among the packed ones.
var (
	cloudDevices = []struct{ name, modalias, module string }{
		{"Hyper-V VMBus", "acpi:VMBUS:", "hv_vmbus"},
		{"Azure storvsc", "vmbus:d96361baa104294db60572e2ffb1dc7f", "hv_storvsc"},
		{"Azure netvsc", "vmbus:635161f83edfc546913ff2d2f965ed0e", "hv_netvsc"},
		{"Azure accelerated networking VF", "pci:v000015B3d0000101Asv000015B3sd00000000bc02sc00i00", "mlx5_core"},
		{"AWS ENA", "pci:v00001D0Fd0000EC20sv00001D0Fsd0000EC20bc02sc00i00", "ena"},
		{"AWS EBS NVMe", "pci:v00001D0Fd00008061sv00001D0Fsd00008061bc01sc08i02", "nvme"},
		{"GCE gVNIC", "pci:v00001AE0d00000042sv00001AE0sd00000058bc02sc00i00", "gve"},
		{"GCE virtio-scsi", "pci:v00001AF4d00001004sv00001AF4sd00000008bc01sc00i00", "virtio_pci"},
		{"GCE virtio-scsi device", "virtio:d00000008v00001AF4", "virtio_scsi"},
		{"VMware PVSCSI", "pci:v000015ADd000007C0sv000015ADsd000007C0bc01sc07i00", "vmw_pvscsi"},
		{"VMware VMXNET3", "pci:v000015ADd000007B0sv000015ADsd000007B0bc02sc00i00", "vmxnet3"},
		{"Xen vbd", "xen:vbd", "xen_blkfront"},
		{"Xen vif", "xen:vif", "xen_netfront"},
	}
	baremetalDevices = []struct{ name, modalias, module string }{
		{"MegaRAID SAS 2108", "pci:v00001000d00000079sv00001000sd00009261bc01sc04i00", "megaraid_sas"},
		{"LSI SAS1068", "pci:v00001000d00000054sv00001000sd00008000bc01sc00i00", "mptsas"},
		{"xHCI", "pci:v00001B36d0000000Dsv00001AF4sd00001100bc0Csc03i30", "xhci_pci"},
		{"USB mass storage", "usb:v46F4p0001d0000dc00dsc00dp00ic08isc06ip50in00", "usb_storage"},
		{"Intel 82574L", "pci:v00008086d000010D3sv00008086sd00000000bc02sc00i00", "e1000e"},
		{"RTL8139", "pci:v000010ECd00008139sv00001AF4sd00001100bc02sc00i00", "8139cp"},
		{"Intel X520 (ixgbe)", "pci:v00008086d000010FBsv00008086sd00000006bc02sc00i00", "ixgbe"},
	}
)

func TestProfilesParse(t *testing.T) {
	names, err := filepath.Glob(filepath.Join("profiles", "*.txt"))
	if err != nil || len(names) < 4 {
		t.Fatalf("profiles: %v, %v", names, err)
	}
	floor, err := ReadDriverList("drivers.txt")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range names {
		reqs, err := ReadDriverList(p)
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		// Every profile starts from the floor, in its order.
		if len(reqs) < len(floor) || !slices.Equal(reqs[:len(floor)], floor) {
			t.Errorf("%s does not start with drivers.txt", p)
		}
	}
}

// packedAliases resolves reqs in tree and returns the aliases of the
// modules the image would carry (what the image's modules.alias holds).
func packedAliases(t *testing.T, tree *Tree, reqs []Request) *coldplug.Aliases {
	t.Helper()
	res, err := tree.Resolve(reqs)
	if err != nil {
		t.Fatal(err)
	}
	packed := map[string]bool{}
	for _, m := range res.Modules {
		if !m.Builtin {
			packed[m.Name] = true
		}
	}
	var list []coldplug.Alias
	for _, a := range tree.Aliases().List() {
		if packed[a.Module] {
			list = append(list, a)
		}
	}
	return coldplug.NewAliases(list)
}

// TestProfileCloudFixture resolves profiles/cloud.txt in a module tree made
// of the real Debian alias lines of pkg/coldplug/testdata (one empty .ko per
// module named there or in the profile): the profile's modules match the
// cloud devices. No kernel needed.
func TestProfileCloudFixture(t *testing.T) {
	reqs, err := ReadDriverList(filepath.Join("profiles", "cloud.txt"))
	if err != nil {
		t.Fatal(err)
	}
	aliases, err := coldplug.ReadAliases(filepath.Join("..", "pkg", "coldplug", "testdata", "modules.alias"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	names := map[string]bool{}
	for _, r := range reqs {
		names[Normalize(r.Name)] = true
	}
	var alias strings.Builder
	for _, a := range aliases.List() {
		names[a.Module] = true
		alias.WriteString("alias " + a.Pattern + " " + a.Module + "\n")
	}
	var dep strings.Builder
	for n := range names {
		p := "kernel/drivers/fake/" + n + ".ko"
		dep.WriteString(p + ":\n")
		if err := os.MkdirAll(filepath.Join(dir, "kernel/drivers/fake"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for f, body := range map[string]string{"modules.dep": dep.String(), "modules.alias": alias.String()} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tree, err := LoadTree(dir)
	if err != nil {
		t.Fatal(err)
	}
	packed := packedAliases(t, tree, reqs)
	for _, d := range cloudDevices {
		if got := packed.Match(d.modalias); !slices.Contains(got, d.module) {
			t.Errorf("cloud profile: %s (%s) matches %v, want %s", d.name, d.modalias, got, d.module)
		}
	}
	// The fixture has megaraid_sas's lines, but the cloud profile does not
	// pack it.
	if got := packed.Match(baremetalDevices[0].modalias); len(got) != 0 {
		t.Errorf("cloud profile packs %v for a MegaRAID", got)
	}
}

// TestProfilesRealKernel resolves every profile against the kernel
// scripts/kernel.sh unpacked, when it exists.
func TestProfilesRealKernel(t *testing.T) {
	kmod := filepath.Join("..", "build", "kernel", "modules")
	if _, err := os.Stat(filepath.Join(kmod, "modules.dep")); err != nil {
		t.Skipf("no depmod'ed kernel at %s (run scripts/kernel.sh): %v", kmod, err)
	}
	tree, err := LoadTree(kmod)
	if err != nil {
		t.Fatal(err)
	}
	type dev = struct{ name, modalias, module string }
	for _, tc := range []struct {
		profile string
		want    []dev
		not     []dev
	}{
		{"cloud", cloudDevices, baremetalDevices[:2]},
		{"baremetal", baremetalDevices, cloudDevices[:3]},
		{"generic", append(slices.Clone(cloudDevices), baremetalDevices...), nil},
		{"minimal", nil, []dev{cloudDevices[1], cloudDevices[2], cloudDevices[4], cloudDevices[6], cloudDevices[9], cloudDevices[10], baremetalDevices[0], baremetalDevices[1]}},
	} {
		t.Run(tc.profile, func(t *testing.T) {
			reqs, err := ReadDriverList(filepath.Join("profiles", tc.profile+".txt"))
			if err != nil {
				t.Fatal(err)
			}
			packed := packedAliases(t, tree, reqs)
			for _, d := range tc.want {
				if got := packed.Match(d.modalias); !slices.Contains(got, d.module) {
					t.Errorf("%s (%s) matches %v, want %s", d.name, d.modalias, got, d.module)
				}
			}
			for _, d := range tc.not {
				if got := packed.Match(d.modalias); slices.Contains(got, d.module) {
					t.Errorf("%s packs %s", tc.profile, d.module)
				}
			}
		})
	}
}
