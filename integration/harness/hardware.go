package harness

import "fmt"

// Root disk buses for BootOptions.RootBus: the emulated controller the root
// disk sits behind, so a test boots the same image through another driver.
const (
	RootVirtio     = ""             // virtio-blk (vda), the default
	RootMegaSAS    = "megasas-gen2" // LSI MegaRAID SAS 2108: megaraid_sas
	RootMPTSAS     = "mptsas1068"   // LSI SAS1068: mptsas
	RootPVSCSI     = "pvscsi"       // VMware PVSCSI: vmw_pvscsi
	RootVirtioSCSI = "virtio-scsi-pci"
	RootAHCI       = "ahci"        // q35's ICH9 AHCI: ahci
	RootNVMe       = "nvme"        // NVMe: nvme
	RootUSB        = "usb-storage" // USB mass storage behind qemu-xhci: xhci_pci, usb_storage
)

// mptsasDiskWWN is the SAS address given to the disk behind RootMPTSAS (a
// NAA 5 name, as SAS disks carry).
const mptsasDiskWWN = "0x5000c50015ea71ac"

// rootDiskArgs attaches the root disk image (already escaped for -drive)
// behind bus.
func rootDiskArgs(bus, file string) ([]string, error) {
	drive := "file=" + file + ",if=none,id=root,format=raw"
	switch bus {
	case RootVirtio:
		return []string{"-drive", "file=" + file + ",if=virtio,format=raw"}, nil
	case RootMegaSAS, RootPVSCSI, RootVirtioSCSI:
		return []string{"-device", bus + ",id=hba0", "-drive", drive, "-device", "scsi-hd,drive=root,bus=hba0.0"}, nil
	case RootMPTSAS:
		// QEMU's SAS1068 reports a disk's wwn as its SAS address, and
		// scsi-hd's wwn defaults to 0, the same as the address it
		// reports for its own phys: Linux's mptsas then takes the link
		// for a backlink to the HBA and adds no end device, so no disk
		// appears. A real SAS disk always has a nonzero address.
		return []string{"-device", bus + ",id=hba0", "-drive", drive, "-device", "scsi-hd,drive=root,bus=hba0.0,wwn=" + mptsasDiskWWN}, nil
	case RootAHCI:
		return []string{"-drive", drive, "-device", "ide-hd,drive=root,bus=ide.0"}, nil
	case RootNVMe:
		return []string{"-drive", drive, "-device", "nvme,drive=root,serial=cloudroot-root"}, nil
	case RootUSB:
		return []string{"-device", "qemu-xhci,id=xhci", "-drive", drive, "-device", "usb-storage,drive=root,bus=xhci.0"}, nil
	}
	return nil, fmt.Errorf("boot options: unknown root bus %q", bus)
}

// NIC models for BootOptions.NICModel (the first NIC's QEMU device).
const (
	NICVirtio  = "" // virtio-net-pci, the default
	NICVMXNET3 = "vmxnet3"
	NICE1000E  = "e1000e"
	NICRTL8139 = "rtl8139"
)

func nicDevice(model string) (string, error) {
	switch model {
	case NICVirtio:
		return "virtio-net-pci", nil
	case NICVMXNET3, NICE1000E, NICRTL8139, "e1000":
		return model, nil
	}
	return "", fmt.Errorf("boot options: unknown NIC model %q", model)
}
