package bootenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fakeNIC is one network device in a fake sysfs laid out as Linux lays
// out QEMU's devices.
type fakeNIC struct {
	ifname  string
	pci     string   // the device's PCI address
	bridges []string // PCI bridges above it, outermost first
	virtio  bool     // a virtio device under the PCI function (virtio-net)
	driver  string
	multi   bool   // multifunction PCI device
	acpi    string // acpi_index
	devPort string
	mac     string
}

// fakeSysfs writes the devices, and hotplug slots (name → address), as a
// sysfs tree the net_id code (and udevadm, see TestNetIDMatchesUdev)
// reads.
func fakeSysfs(t testing.TB, nics []fakeNIC, slots map[string]string) string {
	t.Helper()
	root := t.TempDir()
	mk := func(p string) {
		if err := os.MkdirAll(filepath.Join(root, p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	put := func(p, s string) {
		mk(filepath.Dir(p))
		if err := os.WriteFile(filepath.Join(root, p), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := func(p, target string) {
		mk(filepath.Dir(p))
		rel, err := filepath.Rel(filepath.Dir(filepath.Join(root, p)), filepath.Join(root, target))
		if err != nil {
			t.Fatal(err)
		}
		_ = os.Remove(filepath.Join(root, p))
		if err := os.Symlink(rel, filepath.Join(root, p)); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{"bus/pci/devices", "bus/pci/drivers", "bus/pci/slots", "bus/virtio/devices", "class/net", "devices/pci0000:00"} {
		mk(d)
	}
	put("devices/pci0000:00/uevent", "")
	pciDev := func(dir, addr, class, driver string, multi bool) {
		cfg := make([]byte, 64)
		if multi {
			cfg[0x0e] = 0x80
		}
		if class == "060400" {
			cfg[0x0e] |= 0x01
		}
		put(dir+"/config", string(cfg))
		put(dir+"/class", "0x"+class+"\n")
		put(dir+"/modalias", fmt.Sprintf("pci:v00001AF4d00001041sv00001AF4sd00001100bc%ssc%si%s\n", class[0:2], class[2:4], class[4:6]))
		put(dir+"/uevent", fmt.Sprintf("DRIVER=%s\nPCI_CLASS=%s\nPCI_SLOT_NAME=%s\n", driver, strings.TrimLeft(class, "0"), addr))
		link(dir+"/subsystem", "bus/pci")
		if driver != "" {
			mk("bus/pci/drivers/" + driver)
			link(dir+"/driver", "bus/pci/drivers/"+driver)
		}
		link("bus/pci/devices/"+addr, dir)
	}
	for i, n := range nics {
		dir := "devices/pci0000:00"
		for _, b := range n.bridges {
			dir += "/" + b
			if _, err := os.Stat(filepath.Join(root, dir, "config")); err != nil {
				pciDev(dir, b, "060400", "pcieport", false)
			}
		}
		dir += "/" + n.pci
		class := "020000"
		pciDev(dir, n.pci, class, map[bool]string{true: "virtio-pci", false: n.driver}[n.virtio], n.multi)
		if n.acpi != "" {
			put(dir+"/acpi_index", n.acpi+"\n")
		}
		if n.virtio {
			v := fmt.Sprintf("virtio%d", i)
			dir += "/" + v
			put(dir+"/uevent", "DRIVER=virtio_net\nMODALIAS=virtio:d00000001v00001AF4\n")
			link(dir+"/subsystem", "bus/virtio")
			link("bus/virtio/devices/"+v, dir)
		}
		netDir := dir + "/net/" + n.ifname
		put(netDir+"/uevent", fmt.Sprintf("INTERFACE=%s\nIFINDEX=%d\n", n.ifname, i+2))
		put(netDir+"/ifindex", fmt.Sprintf("%d\n", i+2))
		put(netDir+"/type", "1\n")
		put(netDir+"/address", n.mac+"\n")
		put(netDir+"/addr_assign_type", "0\n")
		put(netDir+"/name_assign_type", "1\n")
		put(netDir+"/dev_port", map[bool]string{true: n.devPort, false: "0"}[n.devPort != ""]+"\n")
		put(netDir+"/dev_id", "0x0\n")
		put(netDir+"/iflink", fmt.Sprintf("%d\n", i+2))
		link(netDir+"/subsystem", "class/net")
		link(netDir+"/device", dir)
		link("class/net/"+n.ifname, netDir)
	}
	for name, addr := range slots {
		put("bus/pci/slots/"+name+"/address", addr+"\n")
	}
	return root
}

// netIDCases are QEMU machines as Linux shows them, with the names systemd
// 252's net_id gives. Debian 12 under QEMU named the q35 root-bus NIC enp0s2
// and the pc machine's ens3 (altname enp0s3); integration's
// TestDebianBootPath boots both. TestNetIDMatchesUdev compares with the
// real udevadm on this machine's own NICs.
var netIDCases = []struct {
	name  string
	nics  []fakeNIC
	slots map[string]string
	want  map[string]NetNames
}{
	{
		name: "q35 virtio-net on the root bus (slot 2)",
		nics: []fakeNIC{{ifname: "eth0", pci: "0000:00:02.0", virtio: true, mac: "52:54:00:12:34:56"}},
		want: map[string]NetNames{"eth0": {Path: "enp0s2", MAC: "enx525400123456"}},
	},
	{
		name: "q35 two virtio-nets and an e1000e",
		nics: []fakeNIC{
			{ifname: "eth0", pci: "0000:00:02.0", virtio: true, mac: "52:54:00:00:00:01"},
			{ifname: "eth1", pci: "0000:00:03.0", virtio: true, mac: "52:54:00:00:00:02"},
			{ifname: "eth2", pci: "0000:00:05.0", driver: "e1000e", mac: "52:54:00:00:00:03"},
		},
		want: map[string]NetNames{
			"eth0": {Path: "enp0s2", MAC: "enx525400000001"},
			"eth1": {Path: "enp0s3", MAC: "enx525400000002"},
			"eth2": {Path: "enp0s5", MAC: "enx525400000003"},
		},
	},
	{
		name:  "q35 virtio-net behind a pcie-root-port (slot 0: no slot name)",
		nics:  []fakeNIC{{ifname: "eth0", pci: "0000:01:00.0", bridges: []string{"0000:00:1c.0"}, virtio: true, mac: "52:54:00:00:00:01"}},
		slots: map[string]string{"0": "0000:01:00"},
		want:  map[string]NetNames{"eth0": {Path: "enp1s0", MAC: "enx525400000001"}},
	},
	{
		name: "pc (i440fx) virtio-net, ACPI hotplug slots",
		nics: []fakeNIC{
			{ifname: "eth0", pci: "0000:00:03.0", virtio: true, mac: "52:54:00:00:00:01"},
			{ifname: "eth1", pci: "0000:00:05.0", virtio: true, mac: "52:54:00:00:00:02"},
		},
		slots: map[string]string{"3": "0000:00:03", "4": "0000:00:04", "5": "0000:00:05", "31": "0000:00:1f"},
		want: map[string]NetNames{
			"eth0": {Slot: "ens3", Path: "enp0s3", MAC: "enx525400000001"},
			"eth1": {Slot: "ens5", Path: "enp0s5", MAC: "enx525400000002"},
		},
	},
	{
		name:  "pc e1000 in slot 3",
		nics:  []fakeNIC{{ifname: "eth0", pci: "0000:00:03.0", driver: "e1000", mac: "52:54:00:12:34:56"}},
		slots: map[string]string{"3": "0000:00:03"},
		want:  map[string]NetNames{"eth0": {Slot: "ens3", Path: "enp0s3", MAC: "enx525400123456"}},
	},
	{
		name:  "acpi-index set (-device virtio-net-pci,acpi-index=1)",
		nics:  []fakeNIC{{ifname: "eth0", pci: "0000:00:03.0", virtio: true, acpi: "1", mac: "52:54:00:00:00:01"}},
		slots: map[string]string{"3": "0000:00:03"},
		want:  map[string]NetNames{"eth0": {Onboard: "eno1", Slot: "ens3", Path: "enp0s3", MAC: "enx525400000001"}},
	},
	{
		name: "multifunction device, function 1, second port",
		nics: []fakeNIC{{ifname: "eth0", pci: "0000:00:04.1", driver: "e1000", multi: true, devPort: "1", mac: "52:54:00:00:00:01"}},
		want: map[string]NetNames{"eth0": {Path: "enp0s4f1d1", MAC: "enx525400000001"}},
	},
}

func TestPredictableNames(t *testing.T) {
	for _, tt := range netIDCases {
		t.Run(tt.name, func(t *testing.T) {
			sys := fakeSysfs(t, tt.nics, tt.slots)
			for ifname, want := range tt.want {
				if diff := cmp.Diff(want, PredictableNames(sys, ifname)); diff != "" {
					t.Errorf("%s (-want +got):\n%s", ifname, diff)
				}
			}
			// NetLinks carries them.
			for _, l := range NetLinks(sys) {
				if l.Names != tt.want[l.Name] {
					t.Errorf("NetLinks %s: names %+v", l.Name, l.Names)
				}
			}
		})
	}
}

func TestPick(t *testing.T) {
	n := NetNames{Onboard: "eno1", Slot: "ens3", Path: "enp0s3", MAC: "enx5254"}
	for _, tt := range []struct {
		names  NetNames
		policy []string
		want   string
	}{
		{n, DefaultNamePolicy, "eno1"},
		{NetNames{Slot: "ens3", Path: "enp0s3"}, DefaultNamePolicy, "ens3"},
		{NetNames{Path: "enp0s2"}, DefaultNamePolicy, "enp0s2"},
		{n, []string{"mac"}, "enx5254"},
		{NetNames{Path: "enp0s2", KernelPredictable: true}, DefaultNamePolicy, ""},
		{n, nil, ""},
	} {
		if got := tt.names.Pick(tt.policy); got != tt.want {
			t.Errorf("%+v.Pick(%v) = %q, want %q", tt.names, tt.policy, got, tt.want)
		}
	}
}

func TestNamingPolicy(t *testing.T) {
	const link = "[Match]\nOriginalName=*\n\n[Link]\nNamePolicy=keep kernel database onboard slot path\nMACAddressPolicy=persistent\n"
	for _, tt := range []struct {
		name    string
		files   map[string]string
		cmdline string
		want    []string
	}{
		{"debian 12", map[string]string{"/lib/udev/rules.d/80-net-setup-link.rules": "IMPORT...", "/lib/systemd/network/99-default.link": link}, "", DefaultNamePolicy},
		{"net.ifnames=0", map[string]string{"/lib/udev/rules.d/80-net-setup-link.rules": "x", "/lib/systemd/network/99-default.link": link}, "net.ifnames=0", nil},
		{"no udev (busybox)", map[string]string{}, "", nil},
		{"rule masked", map[string]string{"/lib/udev/rules.d/80-net-setup-link.rules": "x", "/etc/udev/rules.d/80-net-setup-link.rules": "", "/lib/systemd/network/99-default.link": link}, "", nil},
		{"link masked in /etc", map[string]string{"/usr/lib/udev/rules.d/80-net-setup-link.rules": "x", "/etc/systemd/network/99-default.link": "", "/usr/lib/systemd/network/99-default.link": link}, "", nil},
		{"own policy in /etc", map[string]string{"/usr/lib/udev/rules.d/80-net-setup-link.rules": "x", "/etc/systemd/network/99-default.link": "[Link]\nNamePolicy=mac\n"}, "", []string{"mac"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			exists := func(p string) bool { _, ok := tt.files[p]; return ok }
			read := func(p string) ([]byte, error) {
				s, ok := tt.files[p]
				if !ok {
					return nil, os.ErrNotExist
				}
				return []byte(s), nil
			}
			got := NamingPolicy(exists, read, ParseCmdline(tt.cmdline))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestNetIDMatchesUdev compares with systemd's own net_id (udevadm
// test-builtin) on this machine's interfaces; sd-device refuses anything
// but a real sysfs, so the fixtures above cannot be checked this way.
// CLOUDROOT_UDEVADM names a command line running a udevadm (e.g. a Debian
// 12 root's, through its dynamic loader).
func TestNetIDMatchesUdev(t *testing.T) {
	udevadm := os.Getenv("CLOUDROOT_UDEVADM")
	if udevadm == "" {
		t.Skip("set CLOUDROOT_UDEVADM to compare with systemd's net_id on this machine's NICs")
	}
	for _, l := range NetLinks("") {
		if l.Virtual || l.Name == "lo" {
			continue
		}
		t.Run(l.Name, func(t *testing.T) {
			out, err := exec.Command("sh", "-c", udevadm+" test-builtin net_id /sys/class/net/"+l.Name).CombinedOutput()
			if err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			var want NetNames
			for line := range strings.SplitSeq(string(out), "\n") {
				k, v, _ := strings.Cut(line, "=")
				switch k {
				case "ID_NET_NAME_ONBOARD":
					want.Onboard = v
				case "ID_NET_NAME_SLOT":
					want.Slot = v
				case "ID_NET_NAME_PATH":
					want.Path = v
				case "ID_NET_NAME_MAC":
					want.MAC = v
				}
			}
			if diff := cmp.Diff(want, PredictableNames("", l.Name)); diff != "" {
				t.Errorf("udevadm (-want +got):\n%s\n%s", diff, out)
			} else {
				t.Logf("%s: %+v", l.Name, want)
			}
		})
	}
}
