// Package udevdb renders the udev database entries and /dev/disk links an
// initramfs without udev hands to the booted system's systemd, for the
// block devices whose identity it read itself (pkg/bootenv).
//
// Why: systemd (PID 1 in the root) enumerates the devices tagged "systemd"
// at start and treats those udev has initialized as plugged. Without a
// database, a device unit such as /boot/efi's
// dev-disk-by\x2duuid-XXXX\x2dXXXX.device appears only after the root's
// own udevd has run its coldplug, and local-fs.target waits for it.
// initramfs-tools runs udevd and leaves /run/udev/data behind; this is the
// same hand-off for the devices cloudroot-init probed.
//
// Contract (systemd 252 and 257, sd-device and core/device.c):
//   - An Entry's ID is "b<major>:<minor>", the name sd-device gives a block
//     device's database file (device_get_device_id) and its tag index entry.
//   - DB is what udevd's device_update_db writes, in its order: S: lines
//     (devlinks relative to /dev), I: (CLOCK_MONOTONIC µs of initialisation),
//     E: lines (properties the rules would have set: blkid's ID_FS_* and
//     ID_PART_*), G: and Q: "systemd" (the tag, ever and current: core's
//     device_is_ready needs the current tag), V:1 (the database version).
//     A file present makes the device initialized (device_read_db: "devices
//     with a database entry are initialized").
//   - DEVNAME, DEVTYPE, MAJOR and MINOR are not written: sd-device reads them
//     from sysfs's uevent file, and udevd writes only rule-set properties.
//   - Not written: SYSTEMD_READY (absent means ready), ID_PROCESSING (absent
//     means processed), L: (priority 0 is udev's default).
//   - CLOUDROOT_INITRD_DB=1 marks the entry as ours: the root's udevd
//     rewrites the whole file on its coldplug "add" event, keeping only what
//     its rules set (and the I: time), so the marker is gone after it.
//   - Handed over are disks and partitions that are not removable, not
//     device-mapper, md, loop or optical, hold no LUKS, LVM or md member
//     (their own rules act on those), with an error-free probe and a
//     filesystem UUID or label, or a PARTUUID or PARTLABEL.
//   - Links are by-uuid, by-label, by-partuuid and by-partlabel, made only
//     from values made of udev's safe characters (so udev's own encoding
//     would spell them the same); the first device in list order claims a
//     link, as the other devices' links are left to udev. Other values are
//     left out, property and link alike.
//   - Rendering is pure: no file is read or written.
package udevdb

import (
	"fmt"
	"path"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
)

// Tag is the udev tag systemd enumerates devices by.
const Tag = "systemd"

// Marker is the property that says cloudroot-init wrote the entry.
const Marker = "CLOUDROOT_INITRD_DB"

// Version is udev's database format version (LATEST_UDEV_DATABASE_VERSION).
const Version = 1

// Link is one /dev symlink: Path relative to /dev ("disk/by-uuid/X"),
// Target relative to the link's directory ("../../vda15"), as udev makes them.
type Link struct {
	Path   string
	Target string
}

// Entry is one device's hand-off.
type Entry struct {
	ID    string // b<major>:<minor>
	Node  string // the device node's name under /dev ("vda15")
	Links []Link
	DB    []byte
}

// Entries renders the entries for the devices that qualify (see the
// contract), in list order. usec is the initialisation time (CLOCK_MONOTONIC
// microseconds) for the I: line; 0 leaves the line out.
func Entries(devs []bootenv.Device, usec uint64) []Entry {
	byName := make(map[string]bootenv.Device, len(devs))
	for _, d := range devs {
		byName[d.Name] = d
	}
	claimed := make(map[string]bool)
	var out []Entry
	for _, d := range devs {
		if !eligible(d) {
			continue
		}
		var parent *bootenv.Device
		if d.Partition {
			if p, ok := byName[d.Parent]; ok {
				parent = &p
			}
		}
		e := render(d, parent, usec, claimed)
		if len(e.Links) == 0 && e.DB == nil {
			continue
		}
		out = append(out, e)
	}
	return out
}

// eligible reports whether d is a device whose identity we read and whose
// readiness udev's rules decide by nothing but that identity.
func eligible(d bootenv.Device) bool {
	switch {
	case d.Major <= 0, d.Err != "", d.NoMedium, d.Removable, d.DMName != "":
		return false
	case bootenv.IsContainer(d.FS.Type):
		// LUKS, LVM and md members: their own rules (lvm2's pvscan,
		// mdadm's incremental assembly) act on them; left to udev.
		return false
	case !safeName(d.Name):
		return false
	}
	for _, p := range []string{"dm-", "md", "loop", "sr", "nbd", "zram", "ram", "fd"} {
		if strings.HasPrefix(d.Name, p) {
			return false
		}
	}
	return d.FS.UUID != "" || d.FS.Label != "" || d.PartUUID != "" || d.PartLabel != ""
}

// render builds one entry; links already claimed by an earlier device are
// left out, and the ones this device claims are recorded.
func render(d bootenv.Device, parent *bootenv.Device, usec uint64, claimed map[string]bool) Entry {
	e := Entry{ID: fmt.Sprintf("b%d:%d", d.Major, d.Minor), Node: d.Name}
	type prop struct{ k, v string }
	var props []prop
	add := func(k, v string) { props = append(props, prop{k, v}) }

	fsUUID := safeValue(d.FS.UUID)
	fsLabel := safeValue(d.FS.Label)
	if d.FS.Type != "" && safeValue(d.FS.Type) != "" {
		if fsUUID != "" {
			add("ID_FS_UUID", fsUUID)
			add("ID_FS_UUID_ENC", fsUUID)
		}
		if v := safeValue(d.FS.Version); v != "" {
			add("ID_FS_VERSION", v)
		}
		add("ID_FS_TYPE", d.FS.Type)
		add("ID_FS_USAGE", usage(d.FS.Type))
		if fsLabel != "" {
			add("ID_FS_LABEL", fsLabel)
			add("ID_FS_LABEL_ENC", fsLabel)
		}
	} else {
		fsUUID, fsLabel = "", ""
	}
	partUUID := safeValue(d.PartUUID)
	partLabel := safeValue(d.PartLabel)
	if d.Partition && parent != nil && parent.PTType != "" && safeValue(parent.PTType) != "" {
		if v := safeValue(parent.PTUUID); v != "" {
			add("ID_PART_TABLE_UUID", v)
		}
		add("ID_PART_TABLE_TYPE", parent.PTType)
		add("ID_PART_ENTRY_SCHEME", parent.PTType)
		if partUUID != "" {
			add("ID_PART_ENTRY_UUID", partUUID)
		}
		if partLabel != "" {
			add("ID_PART_ENTRY_NAME", partLabel)
		}
		add("ID_PART_ENTRY_NUMBER", fmt.Sprint(d.PartNumber))
		add("ID_PART_ENTRY_DISK", fmt.Sprintf("%d:%d", parent.Major, parent.Minor))
	} else {
		partUUID, partLabel = "", ""
	}
	if len(props) == 0 {
		return e
	}
	add(Marker, "1")

	for _, l := range []struct{ dir, v string }{
		{"by-uuid", fsUUID},
		{"by-label", fsLabel},
		{"by-partuuid", partUUID},
		{"by-partlabel", partLabel},
	} {
		if l.v == "" {
			continue
		}
		p := path.Join("disk", l.dir, l.v)
		if claimed[p] {
			continue
		}
		claimed[p] = true
		e.Links = append(e.Links, Link{Path: p, Target: "../../" + d.Name})
	}

	var b strings.Builder
	for _, l := range e.Links {
		fmt.Fprintf(&b, "S:%s\n", l.Path)
	}
	if usec > 0 {
		fmt.Fprintf(&b, "I:%d\n", usec)
	}
	for _, p := range props {
		fmt.Fprintf(&b, "E:%s=%s\n", p.k, p.v)
	}
	fmt.Fprintf(&b, "G:%s\nQ:%s\nV:%d\n", Tag, Tag, Version)
	e.DB = []byte(b.String())
	return e
}

// usage is blkid's ID_FS_USAGE for the (non-container) types pkg/bootenv
// reports; 60-persistent-storage.rules makes by-uuid and by-label links for
// "filesystem" and "other" alike.
func usage(fstype string) string {
	switch fstype {
	case "swap", "jbd":
		return "other"
	}
	return "filesystem"
}

// safeValue returns v when every byte is one udev passes through unchanged
// in ID_*_ENC values and symlink names (encode_devnode_name's plain set:
// ASCII letters, digits and "#+-.:=@_"), and v is not "." or ".."; else "".
func safeValue(v string) string {
	if v == "" || v == "." || v == ".." || len(v) > 255 {
		return ""
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("#+-.:=@_", c) >= 0:
		default:
			return ""
		}
	}
	return v
}

// safeName reports whether a kernel device name can be a link target.
func safeName(n string) bool { return safeValue(n) != "" }
