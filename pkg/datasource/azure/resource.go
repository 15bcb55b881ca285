package azure

// Finding Azure's OS and resource disks from sysfs, as cloud-init's
// udev/66-azure-ephemeral.rules does, for an initramfs without udev.
//
// The rules, for a block device whose SCSI parent says vendor "Msft",
// model "Virtual Disk":
//   - Gen1 (storvsc on VMBus): the VMBus parent's device_id is
//     {00000000-0000-…} for the OS disk and {00000000-0001-…} for the
//     resource disk.
//   - Gen2: the VMBus parent's device_id is the well-known SCSI controller
//     {f8b3781a-1e82-4818-a1c3-63d806ec15bb} (scsi0); LUN 0 of it is the OS
//     disk, LUN 1 the resource disk. (Controllers …781b/c/d and other
//     device ids get no link.)
//   - Links: /dev/disk/cloud/azure_root and azure_resource for the disks,
//     …-partN for their partitions.
//
// The sysfs walk: /sys/class/block/<name> is a symlink into
// /sys/devices/…/<vmbus-guid>/host<N>/target<H:C:T>/<H:C:T:L>/block/<name>;
// the ancestor named H:C:T:L is the SCSI device (vendor, model; L is the
// LUN udev cuts from the `device` link), the nearest ancestor with a
// device_id file is the VMBus device.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/cloudroot/cloudroot/pkg/datasource"
)

// Fabric names of the two disks (the link names under /dev/disk/cloud).
const (
	FabricRoot     = "azure_root"
	FabricResource = "azure_resource"
)

// gen2SCSI0 is the device_id of the first SCSI controller of a Gen2 VM.
const gen2SCSI0 = "{f8b3781a-1e82-4818-a1c3-63d806ec15bb}"

var scsiAddr = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\d+:\d+:\d+:(\d+)$`) })

// CloudDisk is one disk the rules name, with its partitions.
type CloudDisk struct {
	// Fabric is FabricRoot or FabricResource.
	Fabric string
	// Name is the kernel name (sdb); Partitions maps partition numbers to
	// kernel names (1 → sdb1).
	Name       string
	Partitions map[int]string
}

// Links are the symlinks udev would make for d, relative to /dev
// ("disk/cloud/azure_resource" → "sdb", "…-part1" → "sdb1").
func (d CloudDisk) Links() map[string]string {
	base := "disk/cloud/" + d.Fabric
	out := map[string]string{base: d.Name}
	for n, p := range d.Partitions {
		out[fmt.Sprintf("%s-part%d", base, n)] = p
	}
	return out
}

// CloudDisks finds the OS and resource disks in a sysfs tree (sys is
// rooted at /sys and must resolve symlinks: os.DirFS, or a fstest.MapFS
// with ModeSymlink entries). Devices that are not Msft virtual disks, or
// that the rules do not name, are skipped; a sysfs without class/block
// gives none.
func CloudDisks(sys fs.FS) ([]CloudDisk, error) {
	ents, err := fs.ReadDir(sys, "class/block")
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("reading class/block: %w", err)
	}
	var out []CloudDisk
	for _, e := range ents {
		name := e.Name()
		if exists(sys, "class/block/"+name+"/partition") {
			continue
		}
		dev, err := devicePath(sys, "class/block/"+name)
		if err != nil {
			continue
		}
		fabric := fabricName(sys, dev)
		if fabric == "" {
			continue
		}
		d := CloudDisk{Fabric: fabric, Name: name, Partitions: map[int]string{}}
		parts, _ := fs.ReadDir(sys, dev)
		for _, p := range parts {
			b, err := fs.ReadFile(sys, path.Join(dev, p.Name(), "partition"))
			if err != nil {
				continue
			}
			var n int
			if _, err := fmt.Sscanf(strings.TrimSpace(string(b)), "%d", &n); err == nil && n > 0 {
				d.Partitions[n] = p.Name()
			}
		}
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// ResourceDisk is the kernel name of the resource disk ("sdb"), "" when
// there is none.
func ResourceDisk(sys fs.FS) (string, error) {
	disks, err := CloudDisks(sys)
	if err != nil {
		return "", err
	}
	for _, d := range disks {
		if d.Fabric == FabricResource {
			return d.Name, nil
		}
	}
	return "", nil
}

// devicePath resolves a class/block entry (a symlink) to its directory
// under devices/.
func devicePath(sys fs.FS, p string) (string, error) {
	for range 8 {
		l, err := fs.ReadLink(sys, p)
		if err != nil {
			// Not a link: the directory itself.
			if fi, serr := fs.Stat(sys, p); serr == nil && fi.IsDir() {
				return p, nil
			}
			return "", err
		}
		if path.IsAbs(l) {
			l = strings.TrimPrefix(l, "/sys/")
			p = path.Clean(l)
		} else {
			p = path.Join(path.Dir(p), l)
		}
		if !fs.ValidPath(p) {
			return "", fmt.Errorf("%s leaves sysfs", l)
		}
	}
	return p, nil
}

// fabricName applies the rules to the device directory dev.
func fabricName(sys fs.FS, dev string) string {
	var vendorOK, modelOK bool
	lun, deviceID := "", ""
	for p := path.Dir(dev); p != "." && p != "/" && p != "devices"; p = path.Dir(p) {
		if m := scsiAddr().FindStringSubmatch(path.Base(p)); m != nil && lun == "" {
			lun = m[1]
			vendorOK = attr(sys, p, "vendor") == "Msft"
			modelOK = attr(sys, p, "model") == "Virtual Disk"
		}
		if deviceID == "" {
			deviceID = attr(sys, p, "device_id")
		}
	}
	if !vendorOK || !modelOK || deviceID == "" {
		return ""
	}
	id := strings.ToLower(deviceID)
	switch {
	case len(id) > 1 && strings.HasPrefix(id[1:], "00000000-0000-"):
		return FabricRoot
	case len(id) > 1 && strings.HasPrefix(id[1:], "00000000-0001-"):
		return FabricResource
	case id == gen2SCSI0 && lun == "0":
		return FabricRoot
	case id == gen2SCSI0 && lun == "1":
		return FabricResource
	}
	return ""
}

func attr(sys fs.FS, dir, name string) string {
	b, err := fs.ReadFile(sys, path.Join(dir, name))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

func exists(sys fs.FS, p string) bool {
	_, err := fs.Stat(sys, p)
	return err == nil
}

// CreateLinks makes the links of disks under devDir (/dev in the
// initramfs, where no udev runs), relative as udev makes them
// (disk/cloud/azure_resource → ../../sdb). An existing link is replaced.
func CreateLinks(devDir string, disks []CloudDisk) error {
	var errs []error
	for _, d := range disks {
		for link, target := range d.Links() {
			p := filepath.Join(devDir, filepath.FromSlash(link))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				errs = append(errs, err)
				continue
			}
			rel, err := filepath.Rel(filepath.Dir(p), filepath.Join(devDir, target))
			if err != nil {
				errs = append(errs, err)
				continue
			}
			tmp := p + ".tmp"
			_ = os.Remove(tmp)
			if err := os.Symlink(rel, tmp); err != nil {
				errs = append(errs, err)
				continue
			}
			if err := os.Rename(tmp, p); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

var _ datasource.Preparer = (*Source)(nil)

// Prepare implements datasource.Preparer: the initramfs has no udev, so
// the /dev/disk/cloud/azure_* links Azure's disk_setup and mounts name
// (66-azure-ephemeral.rules) are made from sysfs.
func (s *Source) Prepare(*datasource.Data) error {
	disks, err := CloudDisks(s.sys())
	if err != nil {
		return fmt.Errorf("azure: %w", err)
	}
	dev := s.Dev
	if dev == "" {
		dev = "/dev"
	}
	if err := CreateLinks(dev, disks); err != nil {
		return fmt.Errorf("azure: disk links: %w", err)
	}
	return nil
}
