package coldplug

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Device is one device in sysfs that has a modalias.
type Device struct {
	// Path is the device's directory relative to the sysfs root
	// ("devices/pci0000:00/0000:00:03.0").
	Path string
	// Modalias is the content of its modalias file.
	Modalias string
	// Driver is the name of the bound driver ("" when none is bound).
	Driver string
}

// Scan lists the devices of every bus in sysfs (sysfs/bus/*/devices/*, as
// `udevadm trigger` does; sysfs is "/sys" on a running system, a snapshot's
// root in tests and for host-only images) that have a non-empty modalias,
// sorted by path. Reading the bus lists instead of walking sysfs/devices
// keeps a scan to a few hundred small reads, which matters under emulation.
func Scan(sysfs string) ([]Device, error) {
	buses, err := os.ReadDir(filepath.Join(sysfs, "bus"))
	if err != nil {
		return nil, fmt.Errorf("scanning %s: %w", sysfs, err)
	}
	seen := map[string]bool{}
	var devs []Device
	for _, bus := range buses {
		dir := filepath.Join(sysfs, "bus", bus.Name(), "devices")
		ents, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range ents {
			link := filepath.Join(dir, e.Name())
			real, err := filepath.EvalSymlinks(link)
			if err != nil {
				continue // went away
			}
			rel, err := filepath.Rel(sysfs, real)
			if err != nil || strings.HasPrefix(rel, "..") {
				// sysfs itself behind a symlink: keep the bus path.
				rel, _ = filepath.Rel(sysfs, link)
			}
			rel = filepath.ToSlash(rel)
			if seen[rel] {
				continue
			}
			seen[rel] = true
			raw, err := os.ReadFile(filepath.Join(link, "modalias"))
			alias := strings.TrimSpace(string(raw))
			if err != nil || alias == "" {
				continue
			}
			d := Device{Path: rel, Modalias: alias}
			if l, err := os.Readlink(filepath.Join(link, "driver")); err == nil {
				d.Driver = filepath.Base(l)
			}
			devs = append(devs, d)
		}
	}
	sort.Slice(devs, func(i, j int) bool { return devs[i].Path < devs[j].Path })
	return devs, nil
}
