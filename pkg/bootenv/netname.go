package bootenv

// Predictable network interface names. The initramfs sees kernel names
// (eth0); a booted system whose udev runs systemd's net_setup_link renames
// the interface by its NamePolicy, and cloud-init there writes the
// predictable name. This computes what udev's net_id builtin (naming scheme
// v252, Debian 12's systemd, the same rules for PCI devices through v255)
// derives from sysfs, for the default policy "keep kernel database onboard
// slot path":
//
//   - onboard: en + o<acpi_index or SMBIOS index> (+ n<phys_port_name> or
//     d<dev_port> when dev_port > 0);
//   - slot: en + [P<domain>] s<hotplug slot> [f<function>] [n…|d…], the slot
//     found in /sys/bus/pci/slots/<N>/address (N > 0) for the device or the
//     nearest PCI parent; not used when that parent is a bridge and the
//     device is single-function;
//   - path: en + [P<domain>] p<bus> s<slot> [f<function>] [n…|d…].
//
// f<function> is added for functions > 0 or a multifunction device. A virtio
// device is named by its PCI parent. Only PCI Ethernet devices get a name
// here; others keep theirs ("" is returned), as udev leaves them too.

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// DefaultNamePolicy is systemd's 99-default.link NamePolicy.
var DefaultNamePolicy = []string{"keep", "kernel", "database", "onboard", "slot", "path"}

// NetNames are the candidate names udev's net_id gives one interface.
type NetNames struct {
	Onboard string // ID_NET_NAME_ONBOARD
	Slot    string // ID_NET_NAME_SLOT
	Path    string // ID_NET_NAME_PATH
	MAC     string // ID_NET_NAME_MAC
	// KernelPredictable: the kernel marked its own name predictable
	// (name_assign_type 2), which the "kernel" policy keeps.
	KernelPredictable bool
}

// Pick returns the name policy chooses ("" when none applies: the kernel
// name stays). "keep" and "database" never apply in the initramfs: no name
// was set by userspace yet and cloudroot has no hwdb.
func (n NetNames) Pick(policy []string) string {
	for _, p := range policy {
		var v string
		switch p {
		case "kernel":
			if n.KernelPredictable {
				return ""
			}
		case "onboard":
			v = n.Onboard
		case "slot":
			v = n.Slot
		case "path":
			v = n.Path
		case "mac":
			v = n.MAC
		}
		if v != "" {
			return v
		}
	}
	return ""
}

// PredictableNames computes net_id's names for iface from the sysfs at
// sysRoot ("" means /sys).
func PredictableNames(sysRoot, iface string) NetNames {
	if sysRoot == "" {
		sysRoot = DefaultSysRoot
	}
	var n NetNames
	netDir := filepath.Join(sysRoot, "class", "net", iface)
	read := func(dir, f string) string {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(b))
	}
	if read(netDir, "type") != "1" { // ARPHRD_ETHER: the "en" prefix
		return n
	}
	n.KernelPredictable = read(netDir, "name_assign_type") == "2"
	if mac := read(netDir, "address"); read(netDir, "addr_assign_type") == "0" && len(mac) == 17 {
		n.MAC = "enx" + strings.ReplaceAll(strings.ToLower(mac), ":", "")
	}
	dev, err := filepath.EvalSymlinks(filepath.Join(netDir, "device"))
	if err != nil {
		return n
	}
	if subsystem(dev) == "virtio" {
		dev = filepath.Dir(dev)
	}
	if subsystem(dev) != "pci" {
		return n
	}
	addr, ok := parsePCIAddr(filepath.Base(dev))
	if !ok {
		return n
	}
	var port string
	if ppn := read(netDir, "phys_port_name"); ppn != "" {
		port = "n" + ppn
	} else if dp, err := strconv.ParseUint(read(netDir, "dev_port"), 10, 64); err == nil && dp > 0 {
		port = fmt.Sprintf("d%d", dp)
	}
	multi := pciMultifunction(dev)
	fn := ""
	if addr.fn > 0 || multi {
		fn = fmt.Sprintf("f%d", addr.fn)
	}
	dom := ""
	if addr.domain > 0 {
		dom = fmt.Sprintf("P%d", addr.domain)
	}

	// Onboard: ACPI _DSM index, else SMBIOS type 41.
	idx := read(dev, "acpi_index")
	if idx == "" {
		idx = read(dev, "index")
	}
	if v, err := strconv.ParseUint(idx, 10, 64); err == nil && v <= onboardIndexMax {
		n.Onboard = fmt.Sprintf("eno%d%s", v, port)
	}

	n.Path = fmt.Sprintf("en%sp%ds%d%s%s", dom, addr.bus, addr.slot, fn, port)

	if slot := hotplugSlot(sysRoot, dev, multi); slot > 0 {
		n.Slot = fmt.Sprintf("en%ss%d%s%s", dom, slot, fn, port)
	}
	return n
}

// onboardIndexMax: larger indexes are firmware rubbish net_id ignores.
const onboardIndexMax = 16*1024 - 1

type pciAddr struct{ domain, bus, slot, fn uint64 }

// parsePCIAddr reads "0000:00:02.0".
func parsePCIAddr(s string) (pciAddr, bool) {
	var a pciAddr
	parts := strings.Split(s, ":")
	if len(parts) != 3 {
		return a, false
	}
	sl, f, ok := strings.Cut(parts[2], ".")
	if !ok {
		return a, false
	}
	var err [4]error
	a.domain, err[0] = strconv.ParseUint(parts[0], 16, 32)
	a.bus, err[1] = strconv.ParseUint(parts[1], 16, 8)
	a.slot, err[2] = strconv.ParseUint(sl, 16, 8)
	a.fn, err[3] = strconv.ParseUint(f, 16, 8)
	for _, e := range err {
		if e != nil {
			return a, false
		}
	}
	return a, true
}

// subsystem is the name of dir's subsystem link target ("" without one).
func subsystem(dir string) string {
	t, err := os.Readlink(filepath.Join(dir, "subsystem"))
	if err != nil {
		return ""
	}
	return filepath.Base(t)
}

// pciMultifunction: bit 7 of the header type (config space offset 0x0e).
func pciMultifunction(dev string) bool {
	b, err := os.ReadFile(filepath.Join(dev, "config"))
	return err == nil && len(b) > 0x0e && b[0x0e]&0x80 != 0
}

// pciBridge: a PCI-to-PCI bridge (class 06, subclass 04) by its modalias.
func pciBridge(dev string) bool {
	b, err := os.ReadFile(filepath.Join(dev, "modalias"))
	if err != nil {
		return false
	}
	m := string(bytes.TrimSpace(b))
	i := strings.Index(m, "bc")
	return strings.HasPrefix(m, "pci:") && i >= 0 && strings.HasPrefix(m[i:], "bc06sc04")
}

// hotplugSlot finds the hotplug slot of dev or its nearest PCI parent in
// /sys/bus/pci/slots (0: none, or one net_id would not use).
func hotplugSlot(sysRoot, dev string, multi bool) uint64 {
	slotsDir := filepath.Join(sysRoot, "bus", "pci", "slots")
	ents, err := os.ReadDir(slotsDir)
	if err != nil {
		return 0
	}
	type slot struct {
		n    uint64
		addr string
	}
	var slots []slot
	for _, e := range ents {
		n, err := strconv.ParseUint(e.Name(), 10, 32)
		if err != nil || n == 0 {
			continue
		}
		b, err := os.ReadFile(filepath.Join(slotsDir, e.Name(), "address"))
		if err != nil {
			continue
		}
		slots = append(slots, slot{n, strings.TrimSpace(string(b))})
	}
	for d := dev; subsystem(d) == "pci"; d = filepath.Dir(d) {
		name := filepath.Base(d)
		for _, s := range slots {
			if s.addr == "" || !strings.HasPrefix(name, s.addr) {
				continue
			}
			if pciBridge(d) && !multi {
				return 0
			}
			return s.n
		}
	}
	return 0
}

// NamingPolicy reads the NamePolicy a target's udev applies to a new
// interface: "" policy (nil) when the target renames nothing — no udev
// net_setup_link rule, net.ifnames=0 on the command line, or the rule or the
// default .link masked — else 99-default.link's (the /etc copy first).
func NamingPolicy(exists func(string) bool, readFile func(string) ([]byte, error), cmdline Cmdline) []string {
	if v, ok := cmdline.Get("net.ifnames"); ok && v == "0" {
		return nil
	}
	rule := ""
	for _, p := range []string{"/etc/udev/rules.d/80-net-setup-link.rules", "/usr/lib/udev/rules.d/80-net-setup-link.rules", "/lib/udev/rules.d/80-net-setup-link.rules"} {
		if exists(p) {
			rule = p
			break
		}
	}
	if rule == "" {
		return nil
	}
	if b, err := readFile(rule); err != nil || len(bytes.TrimSpace(b)) == 0 {
		return nil // masked (/dev/null) or empty
	}
	for _, p := range []string{"/etc/systemd/network/99-default.link", "/run/systemd/network/99-default.link", "/usr/lib/systemd/network/99-default.link", "/lib/systemd/network/99-default.link"} {
		if !exists(p) {
			continue
		}
		b, err := readFile(p)
		if err != nil || len(bytes.TrimSpace(b)) == 0 {
			return nil
		}
		for l := range strings.SplitSeq(string(b), "\n") {
			k, v, ok := strings.Cut(strings.TrimSpace(l), "=")
			if ok && strings.TrimSpace(k) == "NamePolicy" {
				return strings.Fields(v)
			}
		}
		return nil
	}
	return nil
}
