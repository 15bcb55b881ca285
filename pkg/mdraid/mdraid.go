// Package mdraid assembles Linux md RAID arrays in the initramfs from the
// members bootenv found (linux_raid_member devices), through the md
// driver's sysfs interface, as mdadm --assemble --run would: the kernel
// reads and checks the superblocks itself; this package only groups the
// members by array UUID and hands them over.
//
// For each array: a new md device is created
// (/sys/module/md_mod/parameters/new_array), its metadata version set from
// the members' superblocks (md/metadata_version), every member added by
// major:minor (md/new_dev) and the array started (md/array_state =
// active). A RAID1, RAID5 or RAID6 with a member missing starts degraded,
// as with `mdadm --run`, when its superblock says it is clean. The kernel
// reads the level only when the array starts, and cannot load a missing
// personality itself (no modprobe in the initramfs), so the level is read
// from a member's superblock first (ReadLevel) and raid456 loaded for
// levels 4, 5 and 6. sysfs is injected.
package mdraid

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
)

// Modules are loaded before assembling: md itself and the RAID levels whose
// module loads cheaply. raid456 is loaded only for an array whose
// superblock says level 4, 5 or 6 (LevelModules): loading it runs the
// raid6 and xor benchmarks, a second or more under emulation.
var Modules = []string{"md_mod", "raid1", "raid10", "raid0"}

// LevelModules maps a RAID level, as a member's superblock gives it, to
// the personality module loaded before the array is started when it is
// not one of Modules.
var LevelModules = sync.OnceValue(func() map[int32]string {
	return map[int32]string{4: "raid456", 5: "raid456", 6: "raid456"}
})

// FirstMinor is the first md minor number Assemble uses, counting down as
// mdadm names unnamed arrays (md127, md126...).
const FirstMinor = 127

// Array is the members of one array, by array UUID.
type Array struct {
	UUID    string
	Name    string // the array name of a 1.x superblock ("host:0")
	Version string // metadata version: "1.2", "1.0", "0.90.0"...
	Members []bootenv.Device
}

// Group returns the arrays whose members are in devs, in device order.
func Group(devs []bootenv.Device) []Array {
	var out []Array
	for _, d := range devs {
		if d.FS.Type != bootenv.TypeMD || d.FS.UUID == "" {
			continue
		}
		i := slices.IndexFunc(out, func(a Array) bool { return a.UUID == d.FS.UUID })
		if i < 0 {
			out = append(out, Array{UUID: d.FS.UUID, Name: d.FS.Label, Version: d.FS.Version})
			i = len(out) - 1
		}
		out[i].Members = append(out[i].Members, d)
	}
	return out
}

// metadataVersion is what md/metadata_version takes for a probed version.
func metadataVersion(v string) string {
	if v == "0.90.0" {
		return "0.90"
	}
	return v
}

// Assembler assembles arrays through a sysfs tree.
type Assembler struct {
	// Sysfs is the sysfs root ("/sys").
	Sysfs string
	// Load loads a kernel module (md_mod, the raid personalities); nil
	// when they are built in.
	Load func(string) error
	// Log receives one line per assembled array.
	Log *slog.Logger
	// write writes one sysfs attribute (os.WriteFile when nil; tests
	// record the writes).
	write func(path, value string) error
}

// Assemble creates and starts one md device per array found in devs and
// returns their device names ("md127"). Arrays that exist already (a
// member is held: its sysfs "holders" is not empty) are skipped. Failures
// are joined; the other arrays are still assembled.
func (x Assembler) Assemble(devs []bootenv.Device) ([]string, error) {
	arrays := Group(devs)
	if len(arrays) == 0 {
		return nil, nil
	}
	sysfs, load, log := x.Sysfs, x.Load, x.Log
	if sysfs == "" {
		sysfs = "/sys"
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if x.write == nil {
		x.write = func(p, v string) error { return os.WriteFile(p, []byte(v), 0o644) }
	}
	if load != nil {
		for _, m := range Modules {
			if err := load(m); err != nil {
				log.Debug("md: module not loaded", "module", m, "err", err)
			}
		}
	}
	var (
		names []string
		errs  []error
		minor = FirstMinor
	)
	for _, a := range arrays {
		if held(sysfs, a.Members) {
			log.Debug("md: array already assembled", "uuid", a.UUID)
			continue
		}
		for ; minor >= 0; minor-- {
			if _, err := os.Stat(filepath.Join(sysfs, "block", fmt.Sprintf("md%d", minor))); errors.Is(err, os.ErrNotExist) {
				break
			}
		}
		name := fmt.Sprintf("md%d", minor)
		minor--
		if err := x.assemble(sysfs, name, a); err != nil {
			errs = append(errs, fmt.Errorf("assembling md array %s (%s) as %s: %w", a.UUID, a.Name, name, err))
			continue
		}
		var members []string
		for _, m := range a.Members {
			members = append(members, m.Path)
		}
		log.Info("md array assembled", "device", "/dev/"+name, "uuid", a.UUID, "name", a.Name, "members", strings.Join(members, ","))
		names = append(names, name)
	}
	return names, errors.Join(errs...)
}

// held reports whether a member is already part of an active device.
func held(sysfs string, members []bootenv.Device) bool {
	for _, m := range members {
		ents, err := os.ReadDir(filepath.Join(sysfs, "class", "block", m.Name, "holders"))
		if err == nil && len(ents) > 0 {
			return true
		}
	}
	return false
}

func (x Assembler) assemble(sysfs, name string, a Array) error {
	write := func(p, v string) error {
		if err := x.write(p, v); err != nil {
			return fmt.Errorf("writing %q to %s: %w", v, p, err)
		}
		return nil
	}
	var errs []error
	if mod := levelModule(a.Members); mod != "" && x.Load != nil {
		if err := x.Load(mod); err != nil {
			errs = append(errs, fmt.Errorf("loading %s: %w", mod, err))
		}
	}
	if err := write(filepath.Join(sysfs, "module", "md_mod", "parameters", "new_array"), name); err != nil {
		return errors.Join(append(errs, err)...)
	}
	md := filepath.Join(sysfs, "block", name, "md")
	if err := write(filepath.Join(md, "metadata_version"), metadataVersion(a.Version)); err != nil {
		return err
	}
	added := 0
	for _, m := range a.Members {
		if err := write(filepath.Join(md, "new_dev"), fmt.Sprintf("%d:%d", m.Major, m.Minor)); err != nil {
			errs = append(errs, fmt.Errorf("member %s: %w", m.Path, err))
			continue
		}
		added++
	}
	if added == 0 {
		return errors.Join(append(errs, errors.New("no member could be added"))...)
	}
	if err := write(filepath.Join(md, "array_state"), "active"); err != nil {
		return errors.Join(append(errs, err)...)
	}
	return nil
}

// levelModule returns the personality module (LevelModules) for the level
// in the first member superblock that can be read, or "".
func levelModule(members []bootenv.Device) string {
	for _, m := range members {
		if level, err := ReadLevel(m.Path, m.FS.Version); err == nil {
			return LevelModules()[level]
		}
	}
	return ""
}

// ReadLevel returns the RAID level in the md superblock of the member at
// path, whose metadata version (bootenv's FS.Version: "1.0", "1.1", "1.2",
// "0.90.0") says where the superblock is, as bootenv's probe finds it.
func ReadLevel(path, version string) (int32, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("reading md superblock: %w", err)
	}
	defer f.Close()
	size, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return 0, fmt.Errorf("sizing %s: %w", path, err)
	}
	var off int64
	switch version {
	case "1.1":
		off = 0
	case "1.2":
		off = 4096
	case "1.0":
		off = ((size >> 9) - 16) &^ 7 << 9
	case "0.90.0":
		off = (size &^ (64<<10 - 1)) - 64<<10
	default:
		return 0, fmt.Errorf("%s: unknown md metadata version %q", path, version)
	}
	if off < 0 {
		return 0, fmt.Errorf("%s: too small for md %s metadata", path, version)
	}
	b := make([]byte, 96)
	if _, err := f.ReadAt(b, off); err != nil {
		return 0, fmt.Errorf("reading md superblock of %s at %d: %w", path, off, err)
	}
	level, ok := ParseLevel(b, version)
	if !ok {
		return 0, fmt.Errorf("%s: no md %s superblock at %d", path, version, off)
	}
	return level, nil
}

// ParseLevel returns the level field of an md superblock's first bytes:
// struct mdp_superblock_1's level (offset 72) for 1.x, mdp_super_t's
// (offset 28) for 0.90, both little-endian as written on x86.
func ParseLevel(sb []byte, version string) (int32, bool) {
	if len(sb) < 76 || binary.LittleEndian.Uint32(sb) != 0xa92b4efc {
		return 0, false
	}
	major := binary.LittleEndian.Uint32(sb[4:])
	switch {
	case major == 1 && version != "0.90.0":
		return int32(binary.LittleEndian.Uint32(sb[72:])), true
	case major == 0 && version == "0.90.0":
		return int32(binary.LittleEndian.Uint32(sb[28:])), true
	}
	return 0, false
}
