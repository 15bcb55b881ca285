package coldplug

import (
	"strings"
	"sync"
)

// Kind says what a device is for, as far as booting cares.
type Kind string

// Kinds of devices whose missing driver stops a boot (Storage: the root
// disk; Network: the metadata service) and everything else.
const (
	Storage Kind = "storage"
	Network Kind = "network"
	Other   Kind = ""
)

// Well-known devices by modalias prefix, for console messages; the vmbus
// and virtio classes are matched exactly, PCI devices by vendor and device.
var known = []struct {
	prefix string
	kind   Kind
	name   string
}{
	{"vmbus:d96361baa104294db60572e2ffb1dc7f", Storage, "Hyper-V SCSI (storvsc)"},
	{"vmbus:32264132cb86a2449b5c50d1417354f5", Storage, "Hyper-V IDE (storvsc)"},
	{"vmbus:635161f83edfc546913ff2d2f965ed0e", Network, "Hyper-V network (netvsc)"},
	{"xen:vbd", Storage, "Xen block device"},
	{"xen:vif", Network, "Xen network interface"},
	{"virtio:d00000001v", Network, "virtio network"},
	{"virtio:d00000002v", Storage, "virtio block"},
	{"virtio:d00000008v", Storage, "virtio SCSI"},
	{"pci:v000015ADd000007C0", Storage, "VMware PVSCSI"},
	{"pci:v000015ADd000007B0", Network, "VMware VMXNET3"},
	{"pci:v00001D0Fd0000EC20", Network, "Amazon ENA"},
	{"pci:v00001D0Fd0000EC21", Network, "Amazon ENA"},
	{"pci:v00001D0Fd00008061", Storage, "Amazon EBS NVMe"},
	{"pci:v00001D0Fd0000CD01", Storage, "Amazon instance-store NVMe"},
	{"pci:v00001AE0d00000042", Network, "Google gVNIC"},
	{"pci:v00001AF4d00001041", Network, "virtio network"},
	{"pci:v00001AF4d00001042", Storage, "virtio block"},
	{"pci:v00001AF4d00001048", Storage, "virtio SCSI"},
	{"pci:v00001000d00000079", Storage, "LSI MegaRAID SAS 2108"},
	{"pci:v00001000d00000054", Storage, "LSI SAS1068 (mptsas)"},
	{"pci:v00008086d000010D3", Network, "Intel 82574L (e1000e)"},
	{"pci:v000010ECd00008139", Network, "Realtek RTL8139"},
}

// pciClasses are PCI base classes (the "bc" field of a pci: modalias).
var pciClasses = sync.OnceValue(func() map[string]struct {
	kind Kind
	name string
} {
	return map[string]struct {
		kind Kind
		name string
	}{
		"01": {Storage, "mass storage controller"},
		"02": {Network, "network controller"},
	}
})

// Describe returns what the device is for and a human name for it (a
// well-known device's name, else its class), both empty when unknown.
func Describe(modalias string) (Kind, string) {
	for _, k := range known {
		if strings.HasPrefix(modalias, k.prefix) {
			return k.kind, k.name
		}
	}
	switch {
	case strings.HasPrefix(modalias, "pci:"):
		if c, ok := pciClasses()[field(modalias, "bc", 2)]; ok {
			return c.kind, c.name
		}
	case strings.HasPrefix(modalias, "usb:"):
		// Interface class 08 is mass storage; the device class is often 00.
		if field(modalias, "ic", 2) == "08" {
			return Storage, "USB mass storage"
		}
	case strings.HasPrefix(modalias, "virtio:"):
		return Other, "virtio device " + strings.TrimPrefix(modalias, "virtio:")
	}
	return Other, ""
}

// field returns the n characters after the first key in a modalias
// ("bc" in "pci:v...bc01sc00i00" → "01").
func field(modalias, key string, n int) string {
	i := strings.Index(modalias, key)
	if i < 0 || i+len(key)+n > len(modalias) {
		return ""
	}
	return modalias[i+len(key) : i+len(key)+n]
}

// Short shortens a modalias for a console line: a PCI one to its vendor
// and device ("pci:v000015ADd000007C0…"), others to 48 characters.
func Short(modalias string) string {
	if strings.HasPrefix(modalias, "pci:v") && len(modalias) > len("pci:v00000000d00000000") {
		return modalias[:len("pci:v00000000d00000000")] + "…"
	}
	if len(modalias) > 48 {
		return modalias[:48] + "…"
	}
	return modalias
}
